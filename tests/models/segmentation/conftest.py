"""Fixtures shared by the segmentation tests: the author's ACA/HACA toy problem and its outputs."""

import pytest
import scipy.io as sio


@pytest.fixture(scope="session")
def toy(shared_data):
    """``aca_toy.mat`` from ../shared/data/golden: frames, kernels, DTAK and ACA/HACA results."""
    return sio.loadmat(shared_data / "golden" / "aca_toy.mat", squeeze_me=True,
                       struct_as_record=False)
