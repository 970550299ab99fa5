"""``whist-serve``: play and study any whist_env game in the browser, against any agent.

    pip install -e ".[web]"
    whist-serve                      # http://127.0.0.1:8000 : the lobby
    whist-serve --host 0.0.0.0 --port 8080 --max-tables 40 --idle-timeout 1800

:mod:`whist_env.serve.tables` holds the tables, seats, tokens and the messages each seat receives (pure
Python, no web framework); :mod:`whist_env.serve.app` is the ASGI application (Starlette) with the JSON API
under ``/api/`` and the WebSockets; :mod:`whist_env.serve.botseat` is a ``bot`` seat's WebSocket, where a program
plays over the bot protocol, and :mod:`whist_env.serve.bridge` is ``whist-bot connect``, which relays any
stdin/stdout bot to it; :mod:`whist_env.serve.guard` holds the limits and checks of a server that others reach
(``Host``, ``Origin``, body size, tokens kept out of the log); ``static/`` holds the page (plain HTML, JS
and CSS; SVG cards drawn in JS). Nothing here is imported by ``import whist_env``.
"""

from __future__ import annotations
