"""The ``whist-serve`` console script: without the ``web`` extra it says in one line what to install, rather than
a traceback (:mod:`whist_env.serve.app` imports Starlette at the top)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

WEB_EXTRA = ("starlette", "uvicorn", "websockets")  # pyproject.toml's [web] extra


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``whist-serve`` (:func:`whist_env.serve.app.main`), or exit with status 2 and one line naming
    ``pip install "whist_env[web]"`` when the web extra is missing."""
    missing = [name for name in WEB_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"whist-serve: error: the browser server needs the web extra ({', '.join(missing)} not installed): "
            'pip install "whist_env[web]"',
            file=sys.stderr,
        )
        raise SystemExit(2)
    from whist_env.serve.app import main as serve

    serve(argv)


if __name__ == "__main__":  # pragma: no cover
    main()
