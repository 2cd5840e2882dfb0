"""fit_cohort: the cohort recipe's labelled rows are drawn with the classes balanced."""

import numpy as np
import pytest

from distractd.models.detectors import binary_scores, fit_cohort, model_specs
from distractd.models.detectors._cohort import best_threshold, operating_decision


def _overlapping_classes(n, rng):
    """A quarter distracted; the classes overlap so that no rule gets both right everywhere (the
    balanced optimum, halfway between the means, gives sensitivity = specificity = 0.80)."""
    y = (rng.random(n) < 0.25).astype(np.int8)
    X = rng.standard_normal((n, 3))
    X[:, :2] += 1.2 * y[:, None]
    return X, y


@pytest.fixture(scope="module")
def svm():
    (spec,) = model_specs(["svm"], "small")
    return spec


@pytest.mark.parametrize("n_train, n_distracted, expected", [
    (200, 150, (100, 100)),   # n_train // 2 of each class
    (200, 60, (140, 60)),     # the smaller class whole, the larger fills the places
    (1000, 150, (438, 150)),  # more places than usable rows: every one of them
])
def test_labelled_rows_are_balanced(svm, n_train, n_distracted, expected):
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(n_distracted), np.zeros(600 - n_distracted)].astype(np.int8)
    X = rng.standard_normal((600, 2)) + y[:, None]
    X[300::50, 1] = np.nan  # 6 attentive rows with a missing feature never count,
    y[301::50] = -1         # nor 6 of unknown truth
    fit = fit_cohort(svm, X, y, np.arange(600) % 3, n_train=n_train,
                     params={"C": 1.0, "kernel_width": 1.0}, seed=1)
    counts = np.bincount(fit.y_labelled, minlength=2)
    assert tuple(counts) == expected
    assert len(np.unique(fit.X_labelled, axis=0)) == counts.sum()  # drawn without replacement


def test_imbalanced_cohort_gives_a_balanced_detector(svm):
    # a quarter of the windows distracted, as in a task drive: a detector trained on the rows as
    # they come errs towards "attentive" (sensitivity 0.61, specificity 0.92 here); the balanced
    # draw puts the boundary where both classes are judged alike
    X, y = _overlapping_classes(3000, np.random.default_rng(5))
    X_test, y_test = _overlapping_classes(4000, np.random.default_rng(6))
    fit = fit_cohort(svm, X, y, np.arange(len(y)) % 6, n_train=600, seed=1)
    scores = binary_scores(y_test, (fit.decision_function(X_test) > 0).astype(np.int8))
    assert abs(scores["sensitivity"] - scores["specificity"]) < 0.08
    assert scores["g_mean"] > 0.77


def test_the_operating_threshold_serves_every_task_kind():
    """A task whose windows sit near attentive driving (cognitive) beside one far from it
    (visual-manual, four times as many windows): the pooled best G-mean puts the threshold
    where the easy task wins; averaged over the kinds, it moves down and the hard task's
    G-mean rises by more than the easy one's falls."""
    rng = np.random.default_rng(3)
    scores = np.r_[rng.normal(0, 1, 4000), rng.normal(4, 1, 2000), rng.normal(1.5, 1, 500)]
    y = np.r_[np.zeros(4000), np.ones(2500)].astype(np.int8)
    kinds = np.array(["none"] * 4000 + ["visual-manual"] * 2000 + ["cognitive"] * 500)

    def g(threshold, kind):
        return np.sqrt((scores[kinds == kind] > threshold).mean()
                       * (scores[y == 0] <= threshold).mean())

    pooled, _ = best_threshold(scores, y)
    balanced, per_kind = best_threshold(scores, y, kinds)
    assert set(per_kind) == {"visual-manual", "cognitive"}
    assert balanced < pooled - 0.3
    gain = g(balanced, "cognitive") - g(pooled, "cognitive")
    loss = g(pooled, "visual-manual") - g(balanced, "visual-manual")
    assert gain > 0.08 and gain > 2 * loss
    assert per_kind["cognitive"] == pytest.approx(g(balanced, "cognitive"), abs=1e-4)


def test_the_operating_point_is_chosen_on_drivers_scored_out_of_fold(svm):
    """Each driver's rows are scored by a model fitted without them; the threshold is placed
    there, so it does not ride on the training fit's own optimism."""
    rng = np.random.default_rng(8)
    X, y = _overlapping_classes(1800, rng)
    groups = np.arange(len(y)) % 6
    kinds = np.where(y == 1, "task", "none")
    fit = fit_cohort(svm, X, y, groups, n_train=600, seed=1)
    chosen = operating_decision(svm, X, y, groups, kinds, fit, 1.0, n_train=600, seed=1)
    point = chosen["operating_point"]
    assert point["chosen_on"].startswith("training drivers scored out of fold")
    assert chosen["score_offset"] == pytest.approx(point["decision"] - fit.score_scale)
    # the out-of-fold optimum of balanced overlapping classes is near the boundary
    assert abs(point["decision"] / fit.score_scale) < 0.5
    assert 0.7 < point["g_mean"]["task"] < 0.85
