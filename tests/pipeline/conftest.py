"""Shared pipeline test data: a labelled stream with every field (the ``make_drive`` fixture)."""

import numpy as np
import pytest

from distractd.pipeline import FIELD_INDEX, SPATIAL_FIELDS, Recording, empty_block


@pytest.fixture
def make_drive():
    """Factory of labelled streams: ``make_drive(seconds=120.0, rate_hz=60.0, seed=0)``."""
    return drive


def drive(seconds=120.0, rate_hz=60.0, seed=0):
    """A labelled stream with every field, jitter, noise, blinks and label changes, and a car."""
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
    # the car: a weaving lane offset, noisy steering, speed and pedals, with holes
    t = np.arange(n) / rate_hz
    block[:, FIELD_INDEX["lane_offset"]] = 0.3 * np.sin(t / 7.0) + rng.normal(0, 0.02, n)
    block[:, FIELD_INDEX["steering"]] = 0.03 * np.sin(t / 3.0) + rng.normal(0, 0.003, n)
    block[:, FIELD_INDEX["speed"]] = 25.0 + np.sin(t / 11.0)
    block[:, FIELD_INDEX["accelerator"]] = 0.3 + 0.1 * np.sin(t / 5.0)
    block[:, FIELD_INDEX["brake"]] = 0.0
    for name in ("lane_offset", "steering"):
        block[rng.random(n) < 0.03, FIELD_INDEX[name]] = np.nan
    return Recording(block, labels)
