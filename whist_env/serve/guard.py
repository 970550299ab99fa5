"""What ``whist-serve`` checks before a request reaches a table, and what it keeps out of its logs.

A server that a classroom reaches over the network, or that any web page a visitor opens can reach through
the visitor's browser, needs a few limits that a one-person server does not:

- ``Host``: a request must name this server: ``localhost``, ``127.0.0.1``, ``[::1]``, the address it is bound
  to, and when it is bound to every address (``0.0.0.0`` or ``::``) this machine's names and addresses; plus
  ``--allowed-hosts``. This stops DNS rebinding: a page of ``evil.example`` whose name is made to point at
  127.0.0.1 reaches the server with ``Host: evil.example`` and is refused (400).
- ``Origin``: a browser names the page that opens a WebSocket or sends a POST; it must be the server's own origin
  (the scheme, host and port it is reached on) or one of ``--allowed-origins``, so that another site's page
  cannot play at a table or open tables for its visitors (a WebSocket is closed with 1008, a POST refused with
  403). Clients that are not browsers send no ``Origin`` and are not concerned.
- bodies of at most ``--max-body`` bytes (413 beyond).
- searching seats within bounds (:func:`check_search_limits`): a PIMC seat's ``samples`` at most
  ``--max-search-samples`` (100), its transposition table at most ``2**20`` entries (64 MB), ``time_budget`` at most
  10 s, ``max_tricks`` and ``horizon`` at most the game's own search depth. Without them one table could hold the
  server's search thread for hours, or its memory, and stall every other search table of the classroom.
- tokens (``?token=...`` in the URL of a table, its view, its record and its WebSocket) are redacted from the
  server's log lines (:class:`RedactTokens`).

Every refusal is JSON: ``{"error": "<what is wrong and what to do>"}``, or over a WebSocket
``{"type": "error", "message": ...}`` followed by a close with code 1008 (policy violation).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from whist_env.agents.agent_spec import AgentSpec
from whist_env.errors import OptionError

DEFAULT_MAX_BODY = 64 * 1024
DEFAULT_MAX_SEARCH_SAMPLES = 100
MAX_TT_BITS = 20  # 2**20 entries of 64 bytes: 64 MB per search seat (the default, 18, is 16 MB)
MAX_TIME_BUDGET = 10.0  # seconds per decision
DEFAULT_MAX_MESSAGE = 64 * 1024
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
EVERY_ADDRESS = ("0.0.0.0", "::", "")  # binds that listen on every interface of the machine
POLICY_VIOLATION = 1008  # RFC 6455, section 7.4.1
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
LOG_NAMES = ("uvicorn.access", "uvicorn.error", "whist_env.serve")  # the loggers that may print a request's URL


# ----------------------------------------------------------------------------- hosts
def normalize_host(name: str) -> str:
    """A host name as compared: lower case, no brackets around an IPv6 address, no trailing dot."""
    name = name.strip().lower().rstrip(".")
    name = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        return str(ipaddress.ip_address(name))  # one spelling of each address (0:0:0:0:0:0:0:1 is ::1)
    except ValueError:
        return name


def host_of(header: str) -> str | None:
    """The host of a ``Host`` header (``example.org:8080`` → ``example.org``, ``[::1]:80`` → ``::1``), or None
    when it is malformed."""
    header = header.strip()
    if header.startswith("["):  # an IPv6 address: [::1]:8000
        end = header.find("]")
        if end < 0 or not re.fullmatch(r"(:\d{1,5})?", header[end + 1 :]):
            return None
        try:
            return str(ipaddress.IPv6Address(header[1:end]))
        except ValueError:
            return None
    name, _, port = header.partition(":")
    if not re.fullmatch(r"\d{0,5}", port) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return None
    return normalize_host(name)


def interface_addresses() -> set[str]:
    """The addresses of this machine's network interfaces (Linux: read with ``ioctl`` and ``/proc``; elsewhere
    none: :func:`machine_hosts` then relies on the host name)."""
    found: set[str] = set()
    if not sys.platform.startswith("linux"):
        return found
    try:
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            for _, name in socket.if_nameindex():
                try:
                    packed = fcntl.ioctl(sock.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
                except OSError:  # an interface without an IPv4 address
                    continue
                found.add(socket.inet_ntoa(packed[20:24]))
    except (OSError, ImportError):
        pass
    try:  # one line per IPv6 address: 32 hex digits, then the interface's index, ...
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            digits = line.split()[0]
            found.add(str(ipaddress.IPv6Address(int(digits, 16))))
    except (OSError, ValueError, IndexError):
        pass
    return found


def machine_hosts() -> set[str]:
    """This machine's names and addresses: its host name (and ``<name>.local``, its mDNS name), what the name
    resolves to, and its interfaces' addresses."""
    hosts: set[str] = set()
    try:
        name = socket.gethostname()
    except OSError:
        name = ""
    if name:
        hosts.add(normalize_host(name))
        if "." not in name:
            hosts.add(normalize_host(name + ".local"))
        try:
            hosts.update(normalize_host(str(info[4][0])) for info in socket.getaddrinfo(name, None))
        except (OSError, UnicodeError):
            pass
    hosts.update(interface_addresses())
    return {h.split("%")[0] for h in hosts if h}  # an IPv6 scope (fe80::1%eth0) is not part of a Host header


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The host names a request may give for a server bound to ``bind``; None when ``extra`` holds ``*`` (any).

    Args:
        bind: the address the server listens on (``--host``).
        extra: more names (``--allowed-hosts``).
    """
    extra = [normalize_host(h) for h in extra if h.strip()]
    if "*" in extra:
        return None
    hosts = {*LOOPBACK_HOSTS, normalize_host(bind), *extra}
    if normalize_host(bind) in EVERY_ADDRESS:
        hosts |= machine_hosts()
    return frozenset(h for h in hosts if h not in EVERY_ADDRESS)


def origin_of(text: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an origin such as ``http://example.org:8080``, or None when it is not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") or parts.query:
        return None
    return scheme, normalize_host(parts.hostname), port if port is not None else DEFAULT_PORTS[scheme]


def allowed_origins(extra: Iterable[str]) -> frozenset[tuple[str, str, int]] | None:
    """The origins ``--allowed-origins`` adds to the server's own; None when it holds ``*`` (any).

    Raises:
        ValueError: for an entry that is not an origin (``scheme://host[:port]``).
    """
    origins = set()
    for text in extra:
        if not text.strip():
            continue
        if text.strip() == "*":
            return None
        origin = origin_of(text)
        if origin is None:
            raise ValueError(f"{text!r} is not an origin: write scheme://host[:port], such as http://192.168.1.5:8080")
        origins.add(origin)
    return frozenset(origins)


# ----------------------------------------------------------------------------- searching seats
def check_search_limits(spec: AgentSpec, game_depth: int | None, max_samples: int) -> None:
    """Refuse a search agent (nested in a fallback too) that would cost the server more than a table should.

    Args:
        spec: a seat's parsed agent spec.
        game_depth: the game's own search depth (``SearchSpec.max_tricks``; None: no search, no depth limit).
        max_samples: the server's ``--max-search-samples``.

    Raises:
        OptionError: naming the parameter, its value and the limit.
    """
    for _, value in spec.args:
        if isinstance(value, AgentSpec):
            check_search_limits(value, game_depth, max_samples)
    if spec.name != "pimc":
        return
    limits: dict[str, tuple[float, str]] = {
        "samples": (max_samples, f"(whist-serve --max-search-samples {max_samples})"),
        "bid_samples": (max_samples, f"(whist-serve --max-search-samples {max_samples})"),  # Oh Hell's bids
        "playouts": (max_samples, f"(whist-serve --max-search-samples {max_samples})"),  # classic whist's opening
        "tt_bits": (MAX_TT_BITS, f"(a table of 2**{MAX_TT_BITS} entries, 64 MB)"),
        "time_budget": (MAX_TIME_BUDGET, "seconds per decision"),
    }
    if game_depth is not None:
        limits["max_tricks"] = limits["horizon"] = (game_depth, "(the game's own search depth)")
    for key, value in spec.args:
        if key in limits and isinstance(value, int | float) and value > limits[key][0]:
            limit, why = limits[key]
            raise OptionError(f"{spec}: {key}={value} is more than this server allows: at most {limit:g} {why}")


# ----------------------------------------------------------------------------- the middleware
@dataclass(frozen=True)
class Policy:
    """What :class:`Guard` lets through.

    Attributes:
        hosts: the allowed host names (None: any, ``--allowed-hosts '*'``).
        origins: origins allowed besides the server's own (None: any).
        max_body: the largest request body in bytes.
    """

    hosts: frozenset[str] | None
    origins: frozenset[tuple[str, str, int]] | None
    max_body: int = DEFAULT_MAX_BODY

    def host_problem(self, scope: Scope, headers: Headers) -> str | None:
        """Why the request's ``Host`` is refused, or None."""
        if self.hosts is None:
            return None
        header = headers.get("host")
        if header is None:
            return "the request has no Host header; open the server by its address or a name of --allowed-hosts"
        host = host_of(header)
        if host is None:
            return (
                f"the Host header {header[:100]!r} is not a host name; open this server by its address or a name of "
                "--allowed-hosts"
            )
        server = scope.get("server")
        if host in self.hosts or (server and host == normalize_host(str(server[0]))):  # the address it was reached on
            return None
        names = ", ".join(sorted(self.hosts)[:6])
        return (
            f"this server does not answer to the host {host[:100]!r} (it answers to {names}, ...): restart whist-serve "
            f"with --allowed-hosts {host[:100]} if this is its name (a comma list; '*' allows every name, which lets "
            "any web page its visitors open reach it through their browser: DNS rebinding)"
        )

    def origin_problem(self, scope: Scope, headers: Headers) -> str | None:
        """Why the request's ``Origin`` is refused, or None (no ``Origin``: not a browser)."""
        text = headers.get("origin")
        if text is None or self.origins is None:
            return None
        origin = origin_of(text)
        secure = scope.get("scheme") in ("https", "wss")
        own = origin_of(f"{'https' if secure else 'http'}://{headers.get('host', '')}")
        if origin is not None and (origin == own or origin in self.origins):
            return None
        return (
            f"a page from {text[:100]!r} may not use this server (its own origin is "
            f"{_origin_text(own) if own else 'unknown'}); restart whist-serve with --allowed-origins <origin> to "
            "allow another site's pages"
        )


def _origin_text(origin: tuple[str, str, int]) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if DEFAULT_PORTS[scheme] == port else f":{port}")


class BodyTooLargeError(Exception):
    """Raised by :class:`Guard`'s ``receive`` once a request body passes the limit (the request is answered 413)."""


class Guard:
    """ASGI middleware: the ``Host`` and ``Origin`` checks and the body limit of :class:`Policy`."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        websocket = scope["type"] == "websocket"
        problem, status, reason = self.policy.host_problem(scope, headers), 400, "host not allowed"
        if problem is None and (websocket or scope["method"] not in SAFE_METHODS):
            problem, status, reason = self.policy.origin_problem(scope, headers), 403, "origin not allowed"
        if problem is not None:
            if websocket:
                await refuse_websocket(scope, receive, send, problem, reason)
            else:
                await JSONResponse({"error": problem}, status)(scope, receive, send)
            return
        if websocket:
            await self.app(scope, receive, send)
            return
        await self._limited(scope, receive, send, headers)

    async def _limited(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        limit = self.policy.max_body
        too_large = JSONResponse(
            {"error": f"the request body is larger than this server's limit of {limit} bytes (--max-body)"}, 413
        )
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await too_large(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLargeError
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except BodyTooLargeError:
            if started:  # pragma: no cover - every route reads its body before it answers
                raise
            await too_large(scope, receive, send)


async def refuse_websocket(scope: Scope, receive: Receive, send: Send, message: str, reason: str) -> None:
    """Accept a WebSocket only to say why it is refused, then close it with 1008 (policy violation)."""
    from whist_env.serve.tables import encode

    websocket = WebSocket(scope, receive, send)
    await websocket.accept()
    await websocket.send_text(encode({"type": "error", "message": message}))
    await websocket.close(code=POLICY_VIOLATION, reason=reason)


# ----------------------------------------------------------------------------- logs
TOKEN = re.compile(r"(token=)[^&\s\"'#]+")


def redact(text: str) -> str:
    """``text`` with every ``token=<value>`` written ``token=[redacted]``."""
    return TOKEN.sub(r"\1[redacted]", text)


class RedactTokens(logging.Filter):
    """A logging filter that redacts seat tokens from a record's message and arguments (uvicorn's access log
    writes each request's path with its query string)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


def install_redaction(names: Iterable[str] = LOG_NAMES) -> None:
    """Add :class:`RedactTokens` to the loggers ``names`` (once each)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())


def describe_hosts(hosts: frozenset[str] | None) -> str:
    """The allowed hosts for the start-up message."""
    return "any (--allowed-hosts '*')" if hosts is None else ", ".join(sorted(hosts))


def public_addresses(hosts: frozenset[str] | None) -> list[str]:
    """The allowed hosts other machines can reach (not loopback), for the start-up message."""
    out = []
    for host in sorted(hosts or ()):
        try:
            address: Any = ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                out.append(host)
            continue
        if not (address.is_loopback or address.is_link_local):
            out.append(host)
    return out
