"""HACA against the author's code (aca_toy.mat, two levels)."""

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.models import HACA
from distractd.models.evaluation import clustering_accuracy
from distractd.models.segmentation import Segmentation, segment_kernel_matrix
from distractd.models.segmentation._aca_search import _dp_search, _Problem


def _seg(s, G):
    return Segmentation(np.asarray(s, dtype=np.int64) - 1, np.argmax(G, axis=0))


def _toy_haca(toy, **params):
    return HACA(n_clusters=tuple(toy["haca_k"].astype(int)),
                min_length=tuple(toy["haca_nMi"].astype(int)),
                max_length=tuple(toy["haca_nMa"].astype(int)), kernel="precomputed", **params)


def test_level_one_from_saved_initial_segmentation_is_exact(toy):
    haca = _toy_haca(toy, n_init=2, random_state=0).fit(
        toy["haca_K"], init_segmentation=_seg(toy["haca_seg0_s"], toy["haca_seg0_G"]))
    expected = _seg(toy["haca_l1_s"], toy["haca_l1_G"])
    assert np.array_equal(haca.levels_[0].starts, expected.starts)
    assert np.array_equal(haca.levels_[0].labels, expected.labels)
    # level 2 works on level-1 segments: its starts are level-1 segment indices mapped to frames
    top = haca.level_starts_[1]
    assert np.array_equal(haca.levels_[1].starts, expected.starts[top])
    assert np.all(np.diff(top) <= 6)
    assert haca.objectives_[0] == pytest.approx(8.608369408369406, rel=1e-12)


def test_reference_level_two_is_a_fixed_point_of_the_gdtak_dp(toy):
    l1 = _seg(toy["haca_l1_s"], toy["haca_l1_G"])
    T = segment_kernel_matrix(toy["haca_K"], l1.starts, kernel="precomputed")
    problem = _Problem(0, 0.0, T, np.diff(l1.starts).astype(float), 0.0)
    l2 = _seg(toy["haca_l2_sH"], toy["haca_l2_G"])
    seg, obj = _dp_search(problem, l2, 3, 1, 6, problem.diag())
    assert seg.equals(l2)
    assert np.array_equal(l1.starts[seg.starts], toy["haca_l2_s"].astype(int) - 1)
    assert obj == pytest.approx(2.0773266592510193, rel=1e-12)


def test_two_levels_recover_the_toy_ground_truth(toy):
    haca = _toy_haca(toy, init="propagative", n_init=3, random_state=1).fit(toy["haca_K"])
    gt = _seg(toy["haca_gt2_s"], toy["haca_gt2_G"]).frame_labels()
    assert clustering_accuracy(gt, haca.labels_) >= 0.8
    assert haca.labels_.shape == (119,)


def test_level_parameters_are_checked():
    with pytest.raises(ConfigError, match="one entry per level"):
        HACA(n_clusters=(3,), min_length=(1, 1), max_length=(2, 2)).fit(np.zeros((10, 2)))
    with pytest.raises(ConfigError, match=r"HACA.max_length\[level 2\]"):
        HACA(n_clusters=(3, 2), min_length=(1, 1), max_length=(2, 0)).fit(np.zeros((10, 2)))
