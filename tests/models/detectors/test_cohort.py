"""fit_cohort: the cohort recipe's labelled rows are drawn with the classes balanced."""

import numpy as np
import pytest

from distractd.models.detectors import binary_scores, fit_cohort, model_specs


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
