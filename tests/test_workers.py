"""The worker pools' start-up settings (whist_env/evaluation/workers.py): one BLAS thread per spawned worker, the
user's own setting kept."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pytest

from whist_env.evaluation.workers import BLAS_THREADS, one_blas_thread


def _blas_settings() -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in BLAS_THREADS}


def test_spawned_workers_start_with_one_blas_thread_and_the_parent_is_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # the user's own setting wins
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        with one_blas_thread():
            inside = _blas_settings()
            worker = pool.submit(_blas_settings).result()  # the worker starts here, inside the block
    assert inside == worker == {"OPENBLAS_NUM_THREADS": "3", "MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    assert _blas_settings() == {"OPENBLAS_NUM_THREADS": "3", "MKL_NUM_THREADS": None, "OMP_NUM_THREADS": None}
