"""``whist_env.cli``: the console scripts, each a thin front end over the library.

``whist-demo`` (:mod:`~whist_env.cli.demo`), ``whist-eval`` (:mod:`~whist_env.cli.eval`), ``whist-play``
(:mod:`~whist_env.cli.play`), ``whist-arena`` and ``whist-bot`` (:mod:`~whist_env.cli.arena`) and ``whist-serve``
(:mod:`~whist_env.cli.serve`). Their entry points are listed in ``pyproject.toml``'s ``[project.scripts]``.
"""
