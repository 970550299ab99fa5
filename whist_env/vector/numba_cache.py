"""Where numba caches the solver's compiled kernels: beside the source, or a user folder when that is read-only.

The solver's kernels are compiled with ``cache=True``, so only the first process pays for compiling them
(several seconds); later processes load them from the cache. numba writes that cache into ``__pycache__``
next to the source file, which a system-wide or read-only install cannot write: the kernels would then be
compiled again in every process. :func:`use_writable_cache` points numba elsewhere in that case.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def numba_cache_dir(package_dir: Path, environ: Mapping[str, str]) -> str | None:
    """The folder numba should cache the kernels in, or None to keep its default (beside the source).

    Args:
        package_dir: the folder of the source files (numba's default cache is its ``__pycache__``).
        environ: the environment (``NUMBA_CACHE_DIR``, ``XDG_CACHE_HOME``).

    Returns:
        None when the default can be written or the user set ``NUMBA_CACHE_DIR`` (which always wins);
        else ``$XDG_CACHE_HOME/whist_env/numba`` (default ``~/.cache/whist_env/numba``).
    """
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    pycache = package_dir / "__pycache__"
    target = pycache if pycache.is_dir() else package_dir
    if os.access(target, os.W_OK):
        return None
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "whist_env" / "numba")


def use_writable_cache() -> str | None:
    """Point numba at :func:`numba_cache_dir`'s folder when it says so; returns that folder, or None.

    Call it after importing numba and before the first kernel is compiled or loaded: numba reads the
    setting each time it looks for a cache.
    """
    from numba import config

    folder = numba_cache_dir(PACKAGE_DIR, os.environ)
    if folder is not None:
        os.makedirs(folder, exist_ok=True)
        config.CACHE_DIR = folder  # type: ignore[attr-defined]
    return folder
