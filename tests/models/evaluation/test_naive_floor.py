"""The naive floor beside every model: the per-driver offline z-score, its own representation of
the same windows, and evaluate's default output (naive rows, paired tests against the floor) on
real texting drives (Taamneh et al. 2017, doi:10.1038/sdata.2017.110) and a simulated cohort."""

import json

import numpy as np
import pytest

from distractd.cli import main
from distractd.models.detectors import model_specs
from distractd.models.evaluation import (
    Drive, EvaluationOptions, evaluate_models, model_drives, normalise_drives, run_evaluation,
    summarise_scheme,
)
from distractd.pipeline.formats import read_taamneh

DRIVERS = ("T011", "T019", "T034", "T039", "T043", "T062")
"""Development-half drivers whose tracker delivered gaze on the normal and the texting drive."""


@pytest.fixture(scope="module")
def recordings(shared_data):
    paths = [shared_data / "taamneh" / f"{driver}.csv" for driver in DRIVERS]
    absent = [str(path) for path in paths if not path.is_file()]
    if absent:
        pytest.skip(f"{absent} absent")
    return [r for path in paths for r in read_taamneh(path, drives=(4, 7))]


def test_driver_z_score_pools_every_drive_of_the_driver():
    rng = np.random.default_rng(2)
    drives = [Drive(driver, f"{driver}{k}", "test", np.arange(n, dtype=float),
                    np.zeros(n, dtype=np.int8), np.ones(n), rng.normal(k * 3.0, 1.0 + k, (n, 2)))
              for driver in "ab" for k, n in ((0, 50), (1, 80))]
    drives[0].X[4, 1] = np.nan  # a missing value stays missing and is left out of the moments
    out = normalise_drives(drives, "driver")
    for driver in "ab":
        pooled = np.vstack([d.X for d in drives if d.driver_id == driver])
        mean, sd = np.nanmean(pooled, axis=0), np.nanstd(pooled, axis=0)
        for before, after in zip(drives, out):
            if before.driver_id == driver:
                np.testing.assert_allclose(after.X, (before.X - mean) / sd)
    assert np.isnan(out[0].X[4, 1])
    # unlike the per-drive z-score, a driver's drives keep their difference
    assert out[1].X[:, 0].mean() - out[0].X[:, 0].mean() > 1.0
    np.testing.assert_allclose(normalise_drives(drives, "drive")[1].X.mean(axis=0), 0.0,
                               atol=1e-12)


def test_the_naive_on_new_drivers_is_judged_on_the_same_windows_as_the_models(recordings):
    specs = model_specs(["svm", "naive", "naive-offline"], "small")
    drives, names, own = model_drives(recordings, specs)
    assert "mean_gaze_r_yaw" not in names  # the models' features vanish with the eyes
    naive_drives, naive_names = own["naive-offline"]
    assert naive_names[:3] == ["glance_track_loss_fraction", "mean_gaze_r_yaw", "sd_gaze_r_yaw"]
    for drive, naive in zip(drives, naive_drives):
        np.testing.assert_array_equal(naive.t_end, drive.t_end)
        np.testing.assert_array_equal(naive.label, drive.label)
        assert np.isfinite(naive.X).all()  # no baseline to warm: every window has a value
    assert np.isnan(own["naive"][0][0].X[0]).all()  # the running baseline warms up first
    summary = summarise_scheme(evaluate_models(drives, own, "new-driver", specs, seed=1))
    g = {name: np.array(summary[name]["per_driver"]["g_mean"]) for name in summary}
    assert summary["naive-offline"]["drivers"] == summary["svm"]["drivers"] == list(DRIVERS)
    # measured per driver (development-half drivers): naive 0.33-0.99 (mean 0.74), naive-offline
    # 0.09-0.99 (mean 0.64), svm 0.08-0.39 (mean 0.24, small grid, five training drivers): the
    # floor, not the learned model, carries these texting drives
    assert g["naive"].mean() > 0.6 and g["naive"].mean() > g["svm"].mean() + 0.3
    assert g["naive-offline"].mean() > g["svm"].mean() + 0.2
    for name in summary:
        assert summary[name]["false_alarms_per_hour"]["mean"] >= 0


def test_evaluate_reports_the_naive_floor_and_tests_against_it_by_default(recordings, tmp_path):
    document, text = run_evaluation(recordings[:8], tmp_path / "with",
                                    EvaluationOptions(schemes=["new-driver"], models=["elm"]),
                                    progress=False)
    scheme = document["schemes"]["new-driver"]
    assert list(scheme["models"]) == ["elm", "naive", "naive-offline"]
    tests = {(t["better"], t["worse"]): t for t in scheme["tests"]}
    assert set(tests) == {("elm", "naive-offline"), ("naive", "naive-offline")}
    elm, floor = (np.array(scheme["models"][m]["per_driver"]["g_mean"])
                  for m in ("elm", "naive-offline"))
    test = tests[("elm", "naive-offline")]
    assert test["alternative"] == "two-sided" and test["df"] == 3
    assert test["wins"] == (elm > floor).sum() and test["losses"] == (elm < floor).sum()
    assert test["mean_difference"] == pytest.approx((elm - floor).mean())
    assert "elm vs naive-offline on g_mean" in text and "losses" in text
    assert text.splitlines()[0].split()[-3:] == ["elm", "naive", "naive-offline"]
    own = document["protocol"]["own_features"]
    assert own["naive"][0] == "glance_track_loss_fraction"
    document, text = run_evaluation(
        recordings[:8], tmp_path / "without",
        EvaluationOptions(schemes=["new-driver"], models=["naive"], naive=False), progress=False)
    assert list(document["schemes"]["new-driver"]["models"]) == ["naive"]
    assert "naive-offline" not in text and not document["schemes"]["new-driver"]["tests"]


def test_evaluate_on_a_simulated_cohort_runs_the_naive_beside_the_models(tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["evaluate", "--cohort", "3", "--drives", "1", "--duration", "420",
                 "--protocol", "visual-manual", "--models", "svm", "--scheme", "new-driver",
                 "--seed", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "svm vs naive-offline on g_mean" in printed
    results = json.loads((out / "results.json").read_text())
    models = results["schemes"]["new-driver"]["models"]
    for name in ("svm", "naive", "naive-offline"):
        assert len(models[name]["per_driver"]["g_mean"]) == 3
        assert 0 <= models[name]["g_mean"]["mean"] <= 1
    # measured 0.62 ± 0.11 over the three drivers (seven-minute drives, 3 to train on)
    assert models["naive-offline"]["g_mean"]["mean"] > 0.45
    assert models["naive-offline"]["coverage"]["mean"] == 1.0  # offline: nothing to warm up
    # a simulated tracker has head pose: the naive takes every spatial field's mean and SD
    assert len(results["protocol"]["own_features"]["naive"]) == 21
