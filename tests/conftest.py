"""Shared fixtures: the location of ../shared/data (real recordings and golden outputs).

The suite runs on one BLAS thread, in this process and every daemon or worker it starts: how a
BLAS splits a sum depends on its thread count, so results would otherwise depend on the machine.
"""

import os
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # for subprocesses, and for BLAS libraries not loaded yet
threadpool_limits(limits=1, user_api="blas")  # for those already loaded

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """Path of ../shared/data; tests that need it skip only where the folder is genuinely absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA
