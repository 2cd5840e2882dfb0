"""The train, predict and evaluate subcommands end to end on simulated drives."""

import csv
import json

import numpy as np
import pytest

from distractd.cli import main
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline import (
    FIELDS, PipelineConfig, Recording, gaze_only_features, read_recording,
    write_recording,
)
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def recording_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("drive") / "drive.npz"
    write_recording(simulate_drive(21, duration_s=300.0), path)
    return path


def test_train_then_predict_writes_scores_and_smoothed_states(recording_path, tmp_path, capsys):
    model = tmp_path / "elm.npz"
    assert main(["train", str(recording_path), "--model", "elm", "--labelled", "40", "--grid",
                 "small", "--segment-windows", "0", "--seed", "2", "--out", str(model)]) == 0
    detector = load_model(model)
    assert f"elm model {detector.model_id}" in capsys.readouterr().out
    out = tmp_path / "scores.csv"
    assert main(["predict", str(model), str(recording_path), "--out", str(out),
                 "--on", "0.2", "--off", "-0.2", "--min-quality", "0"]) == 0
    with open(out, newline="") as file:
        rows = list(csv.DictReader(file))
    windows, scores, states = predict_windows(detector, read_recording(recording_path),
                                              DecisionRule(min_quality=0.0, on=0.2, off=-0.2))
    assert len(rows) == len(windows) > 500
    np.testing.assert_allclose([float(r["t_end"]) for r in rows], windows.t_end)
    written = np.array([float(r["score"]) if r["score"] else np.nan for r in rows])
    np.testing.assert_allclose(written, scores, equal_nan=True)
    unknown = np.isnan(scores)
    assert 0 < unknown.sum() < 5  # the first windows, before PERCLOS has warmed up
    assert [r["state"] for r in rows if not r["score"]] == [""] * unknown.sum()
    assert (states[unknown] == -1).all()
    assert [int(r["state"]) for r in rows if r["score"]] == states[~unknown].tolist()
    assert 0 < states.mean() < 1


def test_svm_baseline_trains_to_an_artifact_that_scores_like_the_fitted_svc(recording_path, tmp_path):
    from sklearn.svm import SVC

    model = tmp_path / "svm.npz"
    assert main(["train", str(recording_path), "--model", "svm", "--labelled", "40", "--grid",
                 "small", "--segment-windows", "0", "--seed", "2", "--out", str(model)]) == 0
    detector = load_model(model)
    estimator = detector.estimator
    assert detector.kind == "SVMClassifier" and len(estimator.X_fit_) <= 40
    svc = SVC(C=estimator.C, gamma=0.5 / estimator.kernel_width ** 2)
    Z = np.random.default_rng(0).normal(size=(50, len(detector.feature_names)))
    # Refitting on the support vectors alone gives the same machine, up to libsvm's 1e-3 tolerance.
    signs = np.sign(estimator.dual_coef_)
    np.testing.assert_allclose(svc.fit(estimator.X_fit_, signs).decision_function(Z),
                               estimator.decision_function(Z), atol=1e-2)


def test_train_reports_a_bad_model_file_in_one_line(recording_path, tmp_path, capsys):
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a model")
    assert main(["predict", str(broken), str(recording_path), "--out",
                 str(tmp_path / "x.csv")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("distractd predict: error: model file") and "\n" not in err


def test_evaluate_schemes_side_by_side_with_sweeps_and_timelines(tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["evaluate", "--cohort", "3", "--drives", "2", "--protocol", "visual-manual",
                 "--duration", "300", "--models", "svm", "elm",
                 "--scheme", "new-driver", "new-drive", "source", "--unlabelled-sizes", "0",
                 "120", "--labelled-sizes", "24", "--plots", "--seed", "4",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("G-mean by scheme") and "False alarms/h" in printed
    assert "leak between 95 %-overlapping windows" in printed  # the source scheme says so
    results = json.loads((out / "results.json").read_text())
    protocol = results["protocol"]
    assert protocol["n_drivers"] == 3 and protocol["n_drives"] == 6
    assert protocol["normalisation"] == "running" and "glance_prc" in protocol["features"]
    assert list(results["schemes"]) == ["new-driver", "new-drive", "source"]
    for scheme in ("new-driver", "new-drive", "source"):
        for name in ("svm", "elm"):
            model = results["schemes"][scheme]["models"][name]
            assert 0.5 < model["g_mean"]["mean"] <= 1
            assert len(model["per_driver"]["g_mean"]) == 3
            assert model["false_alarms_per_hour"]["mean"] >= 0
            assert 0.5 < model["coverage"]["mean"] <= 1
    # the honest schemes are no easier than the leaky one
    g = {scheme: results["schemes"][scheme]["models"]["svm"]["g_mean"]["mean"]
         for scheme in results["schemes"]}
    assert g["new-driver"] < g["source"]
    assert results["sweeps"]["n_unlabelled"]["sizes"] == [0, 120]
    assert results["sweeps"]["n_labelled"]["sizes"] == [24]
    timelines = sorted(out.glob("timeline_new-driver_*.png"))
    assert len(timelines) == 6
    for png in ("sweep_unlabelled.png", "sweep_labelled.png", timelines[0].name):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "table.txt").read_text().startswith(printed.splitlines()[0])


def test_evaluate_blocked_per_driver_recipe_on_raw_features(tmp_path):
    out = tmp_path / "blocked"
    assert main(["evaluate", "--cohort", "2", "--drives", "2", "--duration", "480",
                 "--models", "elm", "--scheme", "blocked", "new-drive", "--recipe",
                 "per-driver", "--normalisation", "none", "--labelled", "40", "--seed", "4",
                 "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["recipe"] == "per-driver"
    for scheme in ("blocked", "new-drive"):
        assert len(results["schemes"][scheme]["models"]["elm"]["per_driver"]["g_mean"]) == 2
    assert not results["sweeps"]


def test_cohort_train_adapt_predict_on_a_new_driver(tmp_path, capsys):
    fleet = tmp_path / "fleet"
    assert main(["simulate", "--cohort", "3", "--drives", "1", "--protocol", "visual-manual",
                 "--duration", "420", "--seed", "31", "--out", str(fleet / "d.npz")]) == 0
    model = tmp_path / "cohort.npz"
    assert main(["train", "--cohort", str(fleet), "--train", "400",  # sselm: the default
                 "--drive-side", "right", "--segment-windows", "0", "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "from 3 drives of 3 drivers" in out
    detector = load_model(model)
    # where the threshold sits, beside the shipped model's figures chosen the same way
    figures = ", ".join(f"{kind} {g:.3f}"
                        for kind, g in detector.summary["operating_point"]["g_mean"].items())
    shipped = ", ".join(f"{kind} {g:.3f}" for kind, g in
                        load_model("default").summary["operating_point"]["g_mean"].items())
    assert (f"operating point: score 1 is where this model's training drivers, each scored by a "
            f"model fitted without them, have the best G-mean ({figures}); the daemon's "
            f"threshold (smoothing.on) is 1; the shipped model, chosen the same way on its own "
            f"drivers: {shipped}.") in out
    assert detector.summary["kind"] == "cohort" and len(detector.summary["drivers"]) == 3
    assert "anchors" in detector.extras and detector.score_scale > 0
    assert PipelineConfig.from_dict(detector.pipeline_config).baseline
    new = tmp_path / "new.npz"
    assert main(["simulate", "--seed", "77", "--protocol", "visual-manual", "--duration", "600",
                 "--out", str(new)]) == 0
    # the threshold placed where the training drivers, scored out of fold, do best
    assert detector.summary["operating_point"]["score"] == 1.0
    assert detector.summary["operating_point"]["chosen_on"].startswith("training drivers")
    capsys.readouterr()
    # judged on the labelled drive's every fourth half-minute, which the refit never saw: 300
    # of the driver's windows in the graph lower its G-mean there (this small cohort's graph
    # pulls the new driver's scores together), so nothing is saved
    refused = tmp_path / "refused.npz"
    assert main(["adapt", str(model), str(new), "--unlabelled", "300", "--out",
                 str(refused)]) == 1
    err = capsys.readouterr().err
    assert "not saved, the adapted model is worse (G-mean on" in err
    assert "held-back windows of the driver" in err and not refused.exists()
    adapted = tmp_path / "adapted.npz"
    assert main(["adapt", str(model), str(new), "--unlabelled", "10", "--out",
                 str(adapted)]) == 0
    adapted_detector = load_model(adapted)
    assert adapted_detector.summary["adapted"]["from"] == detector.model_id
    assert adapted_detector.summary["adapted"]["n_unlabelled"] == 10
    check = adapted_detector.summary["adapted"]["check"]
    assert check["on"] == "driver" and 200 < check["windows"] < 400
    assert check["after"] >= check["before"] - 0.02 and check["before"] > 0.9
    assert f"{check['before']:.3f} before, {check['after']:.3f} after" in capsys.readouterr().out
    out = tmp_path / "pred.csv"
    assert main(["predict", str(adapted), str(new), "--out", str(out),
                 "--plot", str(tmp_path / "timeline.png")]) == 0
    assert (tmp_path / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out, newline="") as file:
        rows = list(csv.DictReader(file))
    states = [row["state"] for row in rows]
    assert states[:100] == [""] * 100  # the running baseline warms up for 60 s
    windows, scores, _ = predict_windows(adapted_detector, read_recording(new), DecisionRule())
    assert [row["score"] == "" for row in rows] == np.isnan(scores).tolist()
    known = np.isfinite(scores) & (windows.label >= 0)
    assert (windows.label[known] == 1).sum() > 50  # the drive has a task after the warm-up
    # texting raises the adapted model's score on a driver it never saw
    assert scores[known & (windows.label == 1)].mean() > scores[known & (windows.label == 0)].mean()
    # a gaze-only tracker (no head pose, eyelid or pupil): the model's gaze-only fallback,
    # trained beside it on the cohort's gaze features, scores the windows
    fallback = adapted_detector.fallback
    assert fallback is not None and fallback.score_scale > 0
    assert set(fallback.feature_names) == set(gaze_only_features(detector.feature_names))
    recording = read_recording(new)
    samples = recording.samples.copy()
    samples[:, [i for i, field in enumerate(FIELDS)
                if field not in ("t", "confidence") and not field.startswith("gaze_")]] = np.nan
    gaze_only = Recording(samples, recording.labels)
    windows, scores, states = predict_windows(adapted_detector, gaze_only, DecisionRule())
    ready = windows.t_end > 75.0   # the baseline's warm-up
    assert np.isfinite(scores[ready]).mean() > 0.9
    assert (states[ready] >= 0).mean() > 0.5
    known = np.isfinite(scores) & (windows.label >= 0)
    assert scores[known & (windows.label == 1)].mean() > scores[known & (windows.label == 0)].mean()
    # an SVM cohort model cannot be adapted, and says why
    svm = tmp_path / "svm.npz"
    assert main(["train", "--cohort", str(fleet), "--model", "svm", "--train", "300",
                 "--segment-windows", "0", "--out", str(svm)]) == 0
    assert main(["adapt", str(svm), str(new), "--out", str(tmp_path / "x.npz")]) == 1
    assert "needs a semi-supervised cohort model" in capsys.readouterr().err


def test_the_offline_decision_defaults_are_the_daemons():
    """predict, label, segment, evaluate and review take the rule's own defaults without
    importing the daemon; they are the daemon's configuration defaults."""
    from distractd.daemon import DEFAULTS
    from distractd.models.detectors import LOSS_FEATURE, decision_options

    for names in ((), ("mean_gaze_r_yaw", LOSS_FEATURE)):
        assert decision_options(None, names) == decision_options(DEFAULTS, names)
    assert decision_options(None, (LOSS_FEATURE,))["loss_evidence"] is True


def test_predict_names_the_shipped_model_default_and_a_real_drive_by_protocol(
        shared_data, tmp_path, capsys):
    """``default`` is the shipped model; a subject file's drives are named with their protocol,
    ``--recording`` picks one of them (by protocol here), and a choice that is not in the file
    is one line listing what is. T011 is a development-half driver."""
    subject = shared_data / "taamneh" / "T011.csv"
    out = tmp_path / "texting.csv"
    assert main(["predict", "default", str(subject), "--recording", "texting",
                 "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["output"] == str(out) and summary["windows"] > 100
    assert summary["truth"]["sensitivity"] > 0      # the texting drive holds distraction
    assert main(["predict", "default", str(subject), "--recording", "texting",
                 "--out", str(out)]) == 0
    assert f"{out}: T011-d7 (texting): " in capsys.readouterr().out
    assert main(["predict", "default", str(subject), "--recording", "nap",
                 "--out", str(tmp_path)]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("distractd predict: error: --recording 'nap': ")
    assert "T011-d7 (texting)" in error and "\n" not in error


def test_info_writes_a_simulated_drive_s_nested_meta_one_entry_a_line(recording_path, capsys):
    assert main(["info", str(recording_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines[lines.index("  meta.traits"):])) < 100
    traits = read_recording(recording_path).meta["traits"]
    start = lines.index("  meta.traits") + 1
    assert [line.split()[0] for line in lines[start:start + len(traits)]] == list(traits)
