import os
import pathlib

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    torch.set_num_threads(1)


def libtpu():
    """libtpu for the TPU report test: $TPUC_LIBTPU or make setup's copy."""
    path = os.environ.get("TPUC_LIBTPU") or str(REPO / ".deps/libtpu/libtpu.so")
    return path if os.path.isfile(path) else None
