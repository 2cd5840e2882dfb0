"""ACA against the author's code (aca_toy.mat) and on synthetic sequences with known segments."""

import numpy as np
import pytest
from sklearn.base import clone

from distractd._errors import ConfigError, ModelError
from distractd.models import ACA
from distractd.models.evaluation import clustering_accuracy
from distractd.models.segmentation import Segmentation
from distractd.models.segmentation._aca_search import _dp_search, _Problem, _propagated_similarity


def _seg(s, G):
    """Reference (1-based starts, k x m indicator) -> Segmentation."""
    return Segmentation(np.asarray(s, dtype=np.int64) - 1, np.argmax(G, axis=0))


def _toy_aca(toy, **params):
    return ACA(n_clusters=int(toy["k"]), min_length=int(toy["nMi"]), max_length=int(toy["nMa"]),
               kernel="precomputed", **params)


def test_one_dp_step_is_exact(toy):
    K = np.ascontiguousarray(toy["K"])
    problem = _Problem(0, 0.0, K, np.ones(K.shape[0]), 0.0)
    seg, obj = _dp_search(problem, _seg(toy["seg0_s"], toy["seg0_G"]), 3, 1, 12, problem.diag())
    expected = _seg(toy["seg1_s"], toy["seg1_G"])
    assert np.array_equal(seg.starts, expected.starts)
    assert np.array_equal(seg.labels, expected.labels)
    assert obj == toy["seg1_obj"]


def test_converged_aca_from_saved_initial_segmentation(toy):
    aca = _toy_aca(toy).fit(toy["K"], init_segmentation=_seg(toy["seg0_s"], toy["seg0_G"]))
    expected = _seg(toy["aca_s"], toy["aca_G"])
    assert np.array_equal(aca.segments_.starts, expected.starts)
    assert np.array_equal(aca.segments_.labels, expected.labels)
    assert aca.objective_ == pytest.approx(toy["aca_obj"], rel=1e-14)
    assert aca.n_iter_ == 2  # one change, then a repeat
    assert aca.labels_.shape == (91,)


def test_propagated_similarity_exact(toy):
    assert np.array_equal(_propagated_similarity(toy["K"], int(toy["nMa"])), toy["KP_propsim"])


def test_propagative_restarts_find_the_ground_truth_clusters(toy):
    aca = _toy_aca(toy, init="propagative", n_init=3, random_state=0).fit(toy["K"])
    gt = _seg(toy["gt_s"], toy["gt_G"]).frame_labels()
    assert clustering_accuracy(gt, aca.labels_) >= 0.9
    assert np.all(np.diff(aca.segments_.starts) <= 12)


def test_random_restarts_reach_a_lower_objective_than_the_reference_run(toy):
    aca = _toy_aca(toy, init="random", n_init=3, random_state=0).fit(toy["K"])
    assert aca.objective_ < toy["aca_obj"]


def _blocks(seed, n_blocks=12, noise=0.3):
    """Piecewise-constant 3-D sequence: 3 classes, segment lengths 8..15 frames."""
    rng = np.random.default_rng(seed)
    means = np.array([[0, 0, 0], [3, 0, 0], [0, 3, 0]], dtype=float)
    classes = np.tile([0, 1, 2], n_blocks // 3)
    lengths = rng.integers(8, 16, size=n_blocks)
    y = np.repeat(classes, lengths)
    return means[y] + noise * rng.normal(size=(len(y), 3)), y, np.concatenate([[0], np.cumsum(lengths)])


def test_gaussian_aca_recovers_synthetic_segments():
    X, y, starts = _blocks(0)
    aca = ACA(n_clusters=3, min_length=4, max_length=16, nei=0.3, init="kmeans", n_init=2,
              random_state=0).fit(X)
    assert clustering_accuracy(y, aca.labels_) == 1.0
    assert np.array_equal(aca.segments_.starts, starts)
    assert aca.sigma_ > 0


def test_enforced_min_length_and_psd_shift():
    X, y, _ = _blocks(1)
    aca = ACA(n_clusters=3, min_length=6, max_length=16, enforce_min_length=True, psd_shift=True,
              nei=0.3, init="kmeans", n_init=1, random_state=0).fit(X)
    lengths = np.diff(aca.segments_.starts)
    assert lengths.min() >= 6 and lengths.max() <= 16
    assert aca.shift_ >= 0
    assert clustering_accuracy(y, aca.labels_) >= 0.95


def test_max_length_one_is_kernel_kmeans_fixed_point():
    # with n_max = 1 every frame is a segment: ACA is kernel k-means on frames
    X, y, _ = _blocks(2, n_blocks=6, noise=0.1)
    aca = ACA(n_clusters=3, max_length=1, init="kmeans", n_init=1, random_state=0).fit(X)
    assert np.array_equal(aca.segments_.starts, np.arange(len(X) + 1))
    assert clustering_accuracy(y, aca.labels_) == 1.0


def test_same_seed_same_result_and_clone():
    X, _, _ = _blocks(3)
    a = ACA(n_clusters=3, max_length=16, n_init=2, random_state=7)
    b = clone(a)
    assert a.fit(X).segments_.equals(b.fit(X).segments_)


def test_errors_name_the_parameter():
    X, _, _ = _blocks(4)
    with pytest.raises(ConfigError, match="ACA.max_length"):
        ACA(max_length=0).fit(X)
    with pytest.raises(ConfigError, match="min_length=9 must not exceed max_length=8"):
        ACA(min_length=9, max_length=8).fit(X)
    with pytest.raises(ModelError, match="square"):
        ACA(kernel="precomputed").fit(X)
    with pytest.raises(ModelError, match="min_length=7, max_length=7"):
        ACA(n_clusters=2, min_length=7, max_length=7, enforce_min_length=True,
            init="kmeans").fit(X[:50])
