"""Worker processes that leave Ctrl-C to their parent (the arena's and the warm start's process pools)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process for the block (only from the main thread, where handlers can be set).

    Start worker processes inside it: they inherit the ignored signal from their first instruction on, so a
    Ctrl-C that arrives while one is still starting up (before its initializer runs) cannot print a traceback
    from it; the parent handles Ctrl-C and stops the pool.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import signal

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
