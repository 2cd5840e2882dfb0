"""Shared pipeline test data: a labelled stream with every field (the ``make_drive`` fixture)."""

import numpy as np
import pytest

from distractd.pipeline import FIELD_INDEX, SPATIAL_FIELDS, Recording, empty_block


@pytest.fixture
def make_drive():
    """Factory of labelled streams: ``make_drive(seconds=120.0, rate_hz=60.0, seed=0)``."""
    return drive


def drive(seconds=120.0, rate_hz=60.0, seed=0):
    """A labelled stream with every field, jitter, noise, blinks and label changes."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate_hz)
    block = empty_block(n)
    block[:, 0] = 1000.0 + np.arange(n) / rate_hz + rng.uniform(-2e-3, 2e-3, n)
    for name in SPATIAL_FIELDS:
        block[:, FIELD_INDEX[name]] = 0.2 * np.sin(np.arange(n) / 97.0) + rng.normal(0, 0.01, n)
    opening = np.ones(n)
    for start in rng.integers(0, n - 20, int(seconds / 4)):
        opening[start:start + 9] = 0.1
    block[:, FIELD_INDEX["eyelid_r"]] = opening
    block[:, FIELD_INDEX["eyelid_l"]] = opening
    block[:, FIELD_INDEX["confidence"]] = 0.9
    labels = np.where((block[:, 0] - 1000.0) % 40.0 < 25.0, 0, 1).astype(np.int8)
    labels[: n // 10] = -1
    return Recording(block, labels)
