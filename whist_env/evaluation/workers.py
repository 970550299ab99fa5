"""Worker processes that leave Ctrl-C to their parent (the arena's and the warm start's process pools)."""

from __future__ import annotations

import os
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


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")
"""The variables numpy's BLAS (OpenBLAS, MKL) reads for its thread count when it is loaded."""


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Worker processes started inside the block load numpy with one BLAS thread each (where the user set none).

    A spawned worker imports numpy before its initializer runs, so the variable must be in the environment it
    starts with. Each worker is one process on a core: with the default (a BLAS thread per core), 40 decisions of
    PIMC's network playouts took 11.0 s against 3.3 s with one thread (one profile on 2 cores kept busy by others).
    """
    unset = [name for name in BLAS_THREADS if name not in os.environ]
    for name in unset:
        os.environ[name] = "1"
    try:
        yield
    finally:
        for name in unset:
            os.environ.pop(name, None)
