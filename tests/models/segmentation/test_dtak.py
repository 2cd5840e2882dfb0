"""DTAK, GDTAK, segment kernel matrix and frame kernels against the author's code (aca_toy.mat)."""

import numpy as np
import pytest

from distractd.models.segmentation import (
    dtak, frame_kernel, gaussian_bandwidth, gdtak, segment_kernel_matrix,
)


def test_binary_kernel_matches_reference(toy):
    assert np.array_equal(frame_kernel(toy["XD"][:, None], kernel="binary"), toy["K"])


def test_gaussian_bandwidth_rule_matches_reference(toy):
    X = toy["X"].T
    K = frame_kernel(X, sigma=gaussian_bandwidth(X, nei=0.1))
    np.testing.assert_allclose(K, toy["Kgauss_nei0p1"], rtol=0, atol=1e-13)


def test_bandwidth_special_values():
    X = np.arange(10.0)[:, None]
    assert gaussian_bandwidth(X, 0) == 0.0
    assert gaussian_bandwidth(X, np.nan) == 1.0
    # nei = 0.2 -> 2 nearest (self at 0 and a neighbour at 1) for every frame
    assert gaussian_bandwidth(X, 0.2) == pytest.approx(0.5)


def test_segment_dtak_matrix_exact(toy):
    T = segment_kernel_matrix(toy["K"], toy["seg0_s"].astype(int) - 1, kernel="precomputed")
    assert np.array_equal(T, toy["T_dtak"])


def test_dtak_closed_forms():
    rng = np.random.default_rng(0)
    K = rng.random((5, 7))
    # a constant kernel aligns along any path: u = c (n_x + n_y) -> tau = c
    assert dtak(np.full((5, 7), 0.3)) == pytest.approx(0.3)
    # 1 x n: the only path is the row; u = 2k_0 + sum_{j>0} k_j
    assert dtak(K[:1]) == pytest.approx((K[0, 0] + K[0].sum()) / 8)
    # weights scale the per-step gains; doubling every weight leaves tau unchanged
    assert dtak(K, 2 * np.ones(5), 2 * np.ones(7)) == pytest.approx(dtak(K))


def test_dtak_brute_force_over_paths():
    rng = np.random.default_rng(1)
    K, wx, wy = rng.random((4, 3)), rng.random(4) + 0.5, rng.random(3) + 0.5

    def best(i, j):
        if i == 0 and j == 0:
            return (wx[0] + wy[0]) * K[0, 0]
        options = []
        if j > 0:
            options.append(best(i, j - 1) + wy[j] * K[i, j])
        if i > 0:
            options.append(best(i - 1, j) + wx[i] * K[i, j])
        if i > 0 and j > 0:
            options.append(best(i - 1, j - 1) + (wx[i] + wy[j]) * K[i, j])
        return max(options)

    assert dtak(K, wx, wy) == pytest.approx(best(3, 2) / (wx.sum() + wy.sum()))


def test_gdtak_of_unit_subsegments_is_dtak_and_matches_segment_matrix():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    starts = np.array([0, 4, 9, 13, 20, 30])
    T = segment_kernel_matrix(X, starts, sigma=1.0)
    K = frame_kernel(X, sigma=1.0)
    for a in range(5):
        for b in range(5):
            block = K[starts[a]:starts[a + 1], starts[b]:starts[b + 1]]
            assert T[a, b] == pytest.approx(dtak(block))
    # frames as 1-frame sub-segments: GDTAK with unit lengths is DTAK
    assert gdtak(K[:4, 4:9], np.ones(4), np.ones(5)) == pytest.approx(T[0, 1])
