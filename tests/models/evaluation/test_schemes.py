"""Evaluation schemes: folds never share a test driver (or drive) with training; scheme records."""

import numpy as np
import pytest

from distractd import ConfigError
from distractd.models.detectors import model_specs
from distractd.models.evaluation import (
    Drive, evaluate_scheme, false_alarms_per_hour, normalise_drives, scheme_folds,
)
from distractd.models.evaluation._schemes import CAUSAL_REFIT_S


def _drive(driver, k, n=400, shift=3.0, seed=0):
    rng = np.random.default_rng([seed, k, ord(driver)])
    t = 10.0 + 0.5 * np.arange(n)
    label = ((t // 60) % 2).astype(np.int8)  # 60 s attentive, 60 s distracted
    X = rng.normal(size=(n, 3)) + shift * label[:, None] + rng.normal(0, 5.0, 3)  # driver offset
    return Drive(driver, f"{driver}-{k}", "test", t, label, np.ones(n), X)


def test_new_driver_folds_hold_out_whole_drivers_and_new_drive_folds_whole_drives():
    drives = [_drive(d, k) for d in "abc" for k in range(2)] + [_drive("d", 0)]
    for train, test in scheme_folds(drives, "new-driver"):
        held = {drives[i].driver_id for i in test}
        assert len(held) == 1 and not held & {drives[i].driver_id for i in train}
    folds = scheme_folds(drives, "new-drive")
    assert len(folds) == 2  # the k-th drive of every driver with two
    for train, test in folds:
        assert not set(train) & set(test)
        assert {drives[i].driver_id for i in test} <= {drives[i].driver_id for i in train}
        assert "d" not in {drives[i].driver_id for i in test}  # one drive: never a test drive
    assert sorted(i for _, test in folds for i in test) == list(range(6))
    with pytest.raises(ConfigError, match="at least 2 drivers"):
        scheme_folds(drives[:2], "new-driver")


def test_per_drive_z_score_removes_each_drivers_offset():
    drives = normalise_drives([_drive("a", 0), _drive("b", 0)], "drive")
    for drive in drives:
        np.testing.assert_allclose(drive.X.mean(axis=0), 0.0, atol=1e-12)


def test_cohort_recipe_generalises_across_drivers_and_records_deployment_figures():
    drives = [_drive(d, 0) for d in "abcd"]
    results = evaluate_scheme(normalise_drives(drives, "drive"), "new-driver",
                              model_specs(["svm"], "small"),
                              decision={"mode": "hysteresis", "on": 0.0, "off": 0.0}, traces=True)
    assert sorted(results["svm"]) == ["a", "b", "c", "d"]
    for (record,) in results["svm"].values():
        assert record["g_mean"] > 0.95
        assert record["coverage"] == 1.0
        assert len(record["delays_s"]) == 2 and max(record["delays_s"]) <= 1.0
        assert record["trace"]["scores"].shape == (400,)


def test_false_alarms_spare_half_a_window_before_an_episode():
    t = 0.5 * np.arange(1, 241)
    truth = np.where((t > 60) & (t <= 90), 1, 0)
    state = np.zeros(240, dtype=np.int8)
    state[(t > 57.5) & (t <= 95)] = 1  # an alarm 2.5 s before the first distracted window
    hours = (truth == 0).sum() * 0.5 / 3600
    assert false_alarms_per_hour(t, truth, state) == pytest.approx(1 / hours)
    assert false_alarms_per_hour(t, truth, state, grace_s=5.0) == 0.0


def test_the_causal_scheme_never_scores_with_the_drivers_later_windows():
    """Changing the test driver's windows from the middle of the second refit block on changes
    no score of an unchanged window (the second block is scored by a refit that saw only the
    windows before it); under new-driver the whole drive's windows are in the graph, so the
    unchanged windows' scores move."""
    drives = [_drive(d, 0) for d in "abc"]
    since = drives[2].t_end - drives[2].t_end[0]
    X = drives[2].X.copy()
    later = since >= 1.5 * CAUSAL_REFIT_S
    X[later] = np.random.default_rng(9).normal(0.0, 4.0, X[later].shape)
    changed = drives[:2] + [Drive("c", "c-0", "test", drives[2].t_end, drives[2].label,
                                  drives[2].quality, X)]
    spec = model_specs(["sselm"], "small")
    second = (since >= CAUSAL_REFIT_S) & ~later   # refitted with the first block's windows
    for scheme, same in (("causal", True), ("new-driver", False)):
        before, after = (evaluate_scheme(d, scheme, spec, traces=True, n_unlabelled=200)
                         ["sselm"]["c"][0]["trace"]["scores"] for d in (drives, changed))
        assert np.allclose(before[~later], after[~later], rtol=0, atol=1e-9) == same
        assert np.isfinite(before).all() and second.sum() == 120
