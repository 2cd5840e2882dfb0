import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import SVC

from distractd._errors import ConfigError, SchemaError
from distractd.models import SVMClassifier
from distractd.models.detectors import ModelSpec, grid_search, select_params, svm_grid_search
from distractd.models.evaluation import (
    evaluate_driver, g_mean, make_splits, paired_tests, summarise, sweep,
)


def _driver(seed, n=480, shift=0.9, unknown=0.05):
    """Windows of a drive: alternating attentive/distracted episodes, a few unknown windows."""
    rng = np.random.default_rng(seed)
    y = ((np.arange(n) // 40) % 3 == 1).astype(np.int8)
    y[rng.random(n) < unknown] = -1
    direction = rng.normal(size=6)
    X = rng.normal(size=(n, 6)) + shift * (y == 1)[:, None] * direction
    return X, y, 0.5 * np.arange(1, n + 1)


SVM = ModelSpec("svm", SVC(), {"C": [0.1, 10.0], "gamma": [0.01, 0.1]})
RIDGE = ModelSpec("ridge", RidgeClassifier(), {"alpha": [0.1, 100.0]})


def test_splits_are_shared_stratified_and_disjoint():
    _, y, _ = _driver(0)
    splits = make_splits(y, n_labelled=40, seed=3)
    assert len(splits) == 12
    assert [(s.repeat, s.fold) for s in splits] == [(r, f) for r in range(3) for f in range(4)]
    known = np.flatnonzero(y != -1)
    rate = np.mean(y[known] == 1)
    for repeat in range(3):
        held = np.concatenate([s.held_out for s in splits if s.repeat == repeat])
        np.testing.assert_array_equal(np.sort(held), np.arange(len(y)))
    for s in splits:
        assert np.intersect1d(s.train, s.held_out).size == 0
        np.testing.assert_array_equal(s.test, s.held_out[y[s.held_out] != -1])
        assert abs(np.mean(y[s.test] == 1) - rate) < 0.02
        assert len(s.labelled) == 40 and set(y[s.labelled]) == {0, 1}
        assert abs(np.mean(y[s.labelled] == 1) - rate) <= 1 / 40 + 1e-12
        np.testing.assert_array_equal(np.sort(np.r_[s.labelled, s.unlabelled]), np.sort(s.train))
    again = make_splits(y, n_labelled=40, seed=3)
    assert all(np.array_equal(a.unlabelled, b.unlabelled) for a, b in zip(splits, again))


def test_smaller_unlabelled_sets_are_prefixes_with_the_same_labelled_draw():
    _, y, _ = _driver(1)
    full = make_splits(y, n_labelled=30, seed=7)
    for size in (0, 50, 200):
        small = make_splits(y, n_labelled=30, n_unlabelled=size, seed=7)
        for a, b in zip(full, small):
            np.testing.assert_array_equal(a.labelled, b.labelled)
            np.testing.assert_array_equal(a.unlabelled[:size], b.unlabelled)


def test_split_sizes_are_checked_with_named_errors():
    _, y, _ = _driver(2, n=120)
    with pytest.raises(ConfigError, match="protocol.n_labelled must be below"):
        make_splits(y, n_labelled=100)
    with pytest.raises(ConfigError, match="protocol.n_unlabelled must be at most"):
        make_splits(y, n_labelled=20, n_unlabelled=500)
    with pytest.raises(ConfigError, match=r"protocol.n_folds must be .*\[2, inf\), got 1"):
        make_splits(y, n_folds=1)
    with pytest.raises(SchemaError, match="at least n_folds=4 windows of each class, got 2"):
        make_splits(np.r_[np.ones(2), np.zeros(50)].astype(int), n_labelled=10)


def test_selection_is_the_best_mean_inner_g_mean():
    X, y, _ = _driver(3)
    known = np.flatnonzero(y != -1)[:60]
    XL, yL = X[known], y[known]
    chosen = select_params(SVM, XL, yL, X[:0], random_state=5)
    folds = list(RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=5).split(XL, yL))
    means = {}
    for C in SVM.grid["C"]:
        for gamma in SVM.grid["gamma"]:
            scores = [g_mean(yL[te], SVC(C=C, gamma=gamma).fit(XL[tr], yL[tr]).predict(XL[te]))
                      for tr, te in folds]
            means[(C, gamma)] = np.mean(scores)
    best = max(means, key=means.get)
    assert (chosen["C"], chosen["gamma"]) == best


def test_grid_search_equals_sklearn_grid_search_cv():
    X, y, _ = _driver(3, shift=0.5)
    known = np.flatnonzero(y != -1)[:80]
    XL, yL = X[known], y[known]
    folds = list(RepeatedStratifiedKFold(n_splits=4, n_repeats=3, random_state=1).split(XL, yL))
    grid = {"C": [1e-2, 1.0, 1e2], "gamma": [1e-3, 0.1, 10.0]}
    reference = GridSearchCV(SVC(), grid, scoring=make_scorer(g_mean), cv=folds).fit(XL, yL)
    assert grid_search(SVC(), grid, XL, yL, folds) == reference.best_params_
    widths = {gamma: float(np.sqrt(0.5 / gamma)) for gamma in grid["gamma"]}
    chosen = svm_grid_search(SVMClassifier(), {"C": grid["C"], "kernel_width": list(widths.values())},
                             XL, yL, folds)
    best = reference.best_params_
    assert chosen == {"C": best["C"], "kernel_width": widths[best["gamma"]]}


def test_semi_supervised_selection_passes_unlabelled_rows_to_every_inner_fold():
    seen = []

    def spy(estimator, grid, X, y, folds, random_state):
        seen.append((X.shape, y, folds))
        return {"threshold": grid["threshold"][0]}

    spec = ModelSpec("self", SelfTrainingClassifier(LogisticRegression()),
                     {"threshold": [0.9]}, semi_supervised=True, select=spy)
    X, y, _ = _driver(4)
    chosen = select_params(spec, X[:40], np.r_[np.zeros(20), np.ones(20)].astype(int), X[40:100])
    assert chosen == {"threshold": 0.9}
    (shape, y_seen, folds), = seen
    assert shape == (100, 6) and np.all(y_seen[40:] == -1)
    assert len(folds) == 12
    for train, test in folds:
        assert set(range(40, 100)) <= set(train) and test.max() < 40


def test_split_metrics_equal_a_hand_run_of_the_same_split():
    X, y, t = _driver(5)
    result = evaluate_driver(X, y, t, [SVM], n_labelled=48, seed=11, deployment=False)
    split = make_splits(y, n_labelled=48, seed=11)[4]
    record = result["svm"]["splits"][4]
    scaler = StandardScaler().fit(X[split.train])
    model = SVC(**record["params"]).fit(scaler.transform(X[split.labelled]), y[split.labelled])
    predicted = model.predict(scaler.transform(X[split.test]))
    assert record["g_mean"] == pytest.approx(g_mean(y[split.test], predicted), abs=1e-12)
    assert record["params"] == select_params(
        SVM, scaler.transform(X[split.labelled]), y[split.labelled],
        scaler.transform(X[split.unlabelled]), random_state=11 + 4)


def test_separable_driver_scores_perfectly_with_no_delay_and_no_false_alarm():
    X, y, t = _driver(6, shift=12.0)
    result = evaluate_driver(X, y, t, [SVM, RIDGE], n_labelled=40, seed=0,
                             decision={"mode": "hysteresis", "on": 0.0, "off": 0.0})
    for name in ("svm", "ridge"):
        assert all(s["g_mean"] == 1.0 for s in result[name]["splits"])
        assert result[name]["false_alarms_per_hour"] == [0.0, 0.0, 0.0]
        n_episodes = 4  # truth-1 runs, each broken into pieces by unknown windows at most
        assert all(len(d) >= n_episodes and d == [0.0] * len(d) for d in result[name]["delays_s"])


def test_windows_with_missing_features_are_left_out():
    X, y, t = _driver(7, shift=3.0)
    X[::10, 2] = np.nan
    result = evaluate_driver(X, y, t, [RIDGE], n_labelled=40, seed=0, deployment=False)
    kept = np.isfinite(X).all(axis=1)
    reference = evaluate_driver(X[kept], y[kept], t[kept], [RIDGE], n_labelled=40, seed=0,
                                deployment=False)
    keys = ("accuracy", "sensitivity", "specificity", "g_mean", "params")
    assert [{k: s[k] for k in keys} for s in result["ridge"]["splits"]] == \
        [{k: s[k] for k in keys} for s in reference["ridge"]["splits"]]
    with pytest.raises(SchemaError, match="feature column 2 is never finite"):
        X[:, 2] = np.nan
        evaluate_driver(X, y, t, [RIDGE])


def test_summary_and_paired_tests_match_scipy():
    cohort = [evaluate_driver(*_driver(seed, shift=0.6), [SVM, RIDGE], n_labelled=40, seed=seed)
              for seed in range(4)]
    summary = summarise(cohort)
    per_driver = [np.mean([s["g_mean"] for s in driver["svm"]["splits"]]) for driver in cohort]
    assert summary["svm"]["per_driver"]["g_mean"] == pytest.approx(per_driver)
    assert summary["svm"]["g_mean"]["mean"] == pytest.approx(np.mean(per_driver))
    assert summary["svm"]["g_mean"]["sd"] == pytest.approx(np.std(per_driver, ddof=1))
    assert 0 <= summary["svm"]["missed_fraction"]["mean"] <= 1
    (test,) = paired_tests(summary, [("svm", "ridge"), ("sselm", "elm")])
    per = {name: np.asarray(summary[name]["per_driver"]["g_mean"]) for name in ("svm", "ridge")}
    d = per["svm"] - per["ridge"]
    t_hand = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    assert test["t"] == pytest.approx(t_hand)
    assert test["p"] == pytest.approx(stats.t.sf(t_hand, df=3))
    assert test["df"] == 3


def _without_timings(cohort):
    """The cohort as JSON text without the timings (NaN, a missed episode, then compares equal)."""
    return json.dumps([{name: {**result, "splits": [{k: v for k, v in split.items() if not k.endswith("_ms")}
                                         for split in result["splits"]]}
             for name, result in driver.items()} for driver in cohort])


@pytest.mark.filterwarnings("ignore:y contains no unlabeled samples")  # u = 0
def test_unlabelled_sweep_reuses_the_labelled_draw():
    drivers = [_driver(seed, shift=0.7) for seed in (8, 9)]
    # why the sweep fits supervised models once: their result does not depend on u
    at = {u: evaluate_driver(*drivers[0], [RIDGE], n_labelled=40, n_unlabelled=u, seed=0,
                             deployment=False) for u in (0, 100)}
    assert _without_timings([at[0]]) == _without_timings([at[100]])
    semi = ModelSpec("self", SelfTrainingClassifier(LogisticRegression(), threshold=0.6),
                     {"estimator__C": [1.0]}, semi_supervised=True)
    curves = sweep(drivers, [RIDGE, semi], "n_unlabelled", [0, 100], n_labelled=40)
    assert curves["sizes"] == [0, 100]
    direct = summarise([at[100]])["ridge"]["per_driver"]["g_mean"][0]
    assert curves["models"]["ridge"]["per_driver"][1][0] == pytest.approx(direct)
    assert curves["models"]["self"]["per_driver"][0] != curves["models"]["self"]["per_driver"][1]
    labelled = sweep(drivers, [RIDGE], "n_labelled", [16, 64], n_unlabelled=45)
    assert len(labelled["models"]["ridge"]["per_driver"][1]) == 2
    with pytest.raises(ConfigError, match="sweep.parameter"):
        sweep(drivers, [RIDGE], "n_hidden", [1])


def test_blocked_folds_are_stretches_of_the_drive_shifted_per_repeat():
    X, y, t = _driver(13)
    splits = make_splits(y, n_labelled=40, folds="blocked", seed=0)
    assert len(splits) == 12
    for repeat in range(3):
        held = [s.held_out for s in splits if s.repeat == repeat]
        assert np.array_equal(np.sort(np.concatenate(held)), np.arange(len(y)))
        for rows in held:  # one stretch, or two when the last block wraps round
            assert np.count_nonzero(np.diff(rows) > 1) <= 1
    starts = {tuple(s.held_out[:1]) for s in splits if s.fold == 1}
    assert len(starts) == 3  # the block edges move with the repeat


def test_purge_leaves_out_training_windows_overlapping_a_test_window():
    X, y, t = _driver(14)
    for folds, purge_s in (("blocked", 10.0), ("random", 0.6)):
        for split in make_splits(y, n_labelled=20, folds=folds, t=t, purge_s=purge_s,
                                 n_repeats=1):
            gaps = np.abs(t[split.train][:, None] - t[split.held_out][None, :]).min(axis=1)
            assert gaps.min() >= purge_s
            dropped = np.setdiff1d(np.arange(len(t)), np.r_[split.train, split.held_out])
            assert dropped.size > 0
            near = np.abs(t[dropped][:, None] - t[split.held_out][None, :]).min(axis=1)
            assert near.max() < purge_s
    with pytest.raises(ConfigError, match="protocol.t is needed"):
        make_splits(y, purge_s=10.0)
    with pytest.raises(ConfigError, match="protocol.folds must be"):
        make_splits(y, folds="chronological")


def test_blocked_protocol_runs_end_to_end():
    X, y, t = _driver(15, shift=1.5)
    result = evaluate_driver(X, y, t, [RIDGE], n_labelled=40, seed=0, folds="blocked",
                             purge_s=10.0)["ridge"]
    assert len(result["splits"]) == 12 and len(result["false_alarms_per_hour"]) == 3
    assert all(0.5 < s["accuracy"] <= 1 for s in result["splits"])


def test_a_training_fold_without_enough_of_a_class_is_a_named_error():
    y = np.zeros(400, dtype=np.int8)
    y[300:330] = 1  # one short episode: the blocked fold holding it leaves one positive for training
    with pytest.raises(SchemaError, match=r"labelled draw at least 2 windows of each class, got "
                                          r"\d distracted .* in repeat 0 fold \d \(blocked folds"):
        make_splits(y, n_labelled=40, folds="blocked")
