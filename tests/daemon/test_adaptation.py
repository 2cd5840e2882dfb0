"""Per-stream adaptation in the daemon: a real ``distractd run`` adapting a semi-supervised cohort
model to a replayed new driver, its scores against the offline implementation, the metrics."""

import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from distractd import ConfigError
from distractd.daemon import DEFAULTS, StreamAdaptation, load_config
from distractd.models import load_model, save_model
from distractd.models.detectors import adapt_checked, thin_windows, train_cohort
from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features
from distractd.simulators import replay, simulate_cohort, simulate_drive

from ._published import states_of

AFTER_S = 60.0
STRIDE_S = 1.0
MAX_WINDOWS = 100


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A small SS-ELM cohort model (adaptable) and an ELM one (not), from two simulated drivers;
    the SS-ELM keeps every window of the drives (about 900 anchors), so its fits take a while."""
    out = tmp_path_factory.mktemp("adaptation")
    fleet = simulate_cohort(2, 4242, protocol="visual-manual", duration_s=300.0)
    paths = {}
    for kind in ("sselm", "elm"):
        estimator, parts = train_cohort(fleet, kind, n_train=1000, stride_s=0.0,
                                        segment_frames=0, seed=0)
        paths[kind] = out / f"{kind}.npz"
        save_model(paths[kind], estimator, **parts)
    return paths


@pytest.fixture(scope="module")
def new_driver():
    return simulate_drive(99, duration_s=200.0, protocol="visual-manual")


def _options(model_path, *more):
    return ["adaptation.enabled=true", f"adaptation.after_s={AFTER_S}",
            f"adaptation.stride_s={STRIDE_S}", f"adaptation.max_windows={MAX_WINDOWS}",
            "adaptation.every_s=0",
            f"model.path={model_path}", "sessions.segmentation=false",
            "sessions.idle_timeout_s=3", *more]


def _wait_for(condition, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def _replay_in_background(recording, daemon, stream, speed):
    thread = threading.Thread(target=replay, args=([recording], daemon.input),
                              kwargs={"speed": speed, "prefix": stream})
    thread.start()
    return thread


def test_stream_adaptation_keeps_the_rows_thin_windows_keeps():
    """Streaming ≡ batch: over random batch splits the ring holds the drive's windows with every
    feature thinned by thin_windows, the newest max_windows, and the fit falls due at the first
    kept window after after_s of driving."""
    rng = np.random.default_rng(3)
    t_end = 10.0 + 0.5 * np.arange(400)
    X = rng.normal(size=(400, 4))
    X[:30, 1] = np.nan        # a baseline warming up
    X[200:205, 2] = np.nan    # a gap in one feature
    options = {**DEFAULTS["adaptation"], "after_s": 60.0, "every_s": 0.0, "stride_s": 2.0,
               "min_windows": 10, "max_windows": 50}
    finite = np.isfinite(X).all(axis=1)
    t = t_end[finite]
    kept = thin_windows(t, 2.0)
    due_at = t[kept][np.flatnonzero(t[kept] - t[0] >= 60.0)[0]]
    for _ in range(5):
        adaptation = StreamAdaptation(4, options, collect=True)
        cuts = np.sort(rng.choice(np.arange(1, 400), size=40, replace=False))
        due = []
        for part in np.split(np.arange(400), cuts):
            if adaptation.add(X[part], t_end[part]):
                due.append(t_end[part][-1])
                fit = adaptation.fit("s", None)
                adaptation.submitted()
        assert due[0] >= due_at and len(due) == 1   # every_s = 0: one fit
        expected = X[finite][kept][t[kept] <= fit.t][-50:]
        np.testing.assert_array_equal(fit.rows, expected.astype(np.float32))
        assert fit.t == t[kept][t[kept] <= due[0]][-1]


def test_a_stream_is_adapted_and_scored_as_the_offline_adaptation(start_daemon, models,
                                                                  new_driver):
    detector = load_model(models["sselm"])
    daemon = start_daemon(_options(models["sselm"]))
    sender = _replay_in_background(new_driver, daemon, "car", speed=20)
    windows = extract_features(new_driver, PipelineConfig.from_dict(detector.pipeline_config))
    messages = daemon.collect(lambda m: any(message.get("adapted") for kind, _, message in m
                                            if kind == "state"))
    # while the stream is live and adapted, the gauge says so
    assert _wait_for(lambda: daemon.metric("distractd_adapted_streams") == 1)
    sender.join()
    messages += daemon.collect(lambda m: len(states_of(messages + m, "car")) >= len(windows))
    published = states_of(messages, "car")
    assert [m["t"] for m in published] == windows.t_end.tolist()
    first = next(i for i, m in enumerate(published) if m["adapted"] is not None)
    fit = published[first]["adapted"]
    assert all(m["adapted"] is None for m in published[:first])
    assert all(m["adapted"] == fit for m in published[first:])   # one fit (every_s = 0)
    # ingest and publishing went on while the fit ran: windows newer than the fit's newest were
    # published, scored by the loaded model
    assert published[first - 1]["t"] > fit["t"]

    # the windows the fit saw: every model feature, one per stride_s of driving, up to its newest
    columns = detector.feature_columns(FEATURE_NAMES)
    X = windows.X[:, columns]
    finite = np.isfinite(X).all(axis=1)
    t = windows.t_end[finite]
    kept = thin_windows(t, STRIDE_S)
    rows = X[finite][kept][t[kept] <= fit["t"]][-MAX_WINDOWS:]
    assert fit["windows"] == len(rows) and fit["t"] - t[0] >= AFTER_S
    reference, check = adapt_checked(detector, rows.astype(np.float32), n_unlabelled=len(rows),
                                     seed=0)
    assert check["on"] == "cohort" and not check["worse"]
    # an adapted SS-ELM holds only its output weights: the hidden layer is the loaded model's
    assert reference.estimator.hidden_weights_ is detector.estimator.hidden_weights_
    scores = np.array([m["score"] for m in published])
    np.testing.assert_allclose(scores[first:],
                               reference.window_scores(windows.X[first:], FEATURE_NAMES),
                               rtol=1e-6, atol=1e-9, equal_nan=True)
    plain = detector.window_scores(windows.X, FEATURE_NAMES)
    np.testing.assert_allclose(scores[:first], plain[:first], rtol=1e-9, equal_nan=True)
    after = np.isfinite(plain[first:])
    assert after.sum() > 50 and np.abs(scores[first:][after] - plain[first:][after]).max() > 1e-3

    assert daemon.metric("distractd_adaptation_fits_total", result="done") == 1
    assert daemon.metric("distractd_adaptation_fits_total", result="failed") == 0
    assert daemon.metric("distractd_adaptation_fits_total", result="refused") == 0
    assert daemon.metric("distractd_adaptation_fit_seconds_count") == 1
    # the score spread of the stream's windows, before (the loaded model) and after the fit
    spread = np.std(reference.decision_function(rows)) / reference.score_scale \
        / (np.std(detector.decision_function(rows)) / detector.score_scale)
    assert daemon.metric("distractd_adaptation_score_spread_ratio_count") == 1
    assert daemon.metric("distractd_adaptation_score_spread_ratio_sum") == pytest.approx(spread)
    assert daemon.metric("distractd_adaptation_cpu_seconds_total") > 0
    for reason in ("unsupported_model", "queue_full", "stale"):
        assert daemon.metric("distractd_adaptation_skipped_total", reason=reason) == 0
    # the stream's end drops its adapted model
    assert _wait_for(lambda: daemon.metric("distractd_adapted_streams") == 0)
    assert daemon.stop() == 0
    assert "adaptation: stream car: adapted on" in daemon.log_text


def test_a_reload_drops_adapted_models_and_a_model_that_cannot_adapt_counts_why(
        start_daemon, models, new_driver, tmp_path):
    config = tmp_path / "distractd.toml"
    config.write_text(f'[model]\npath = "{models["sselm"]}"\n')
    daemon = start_daemon(["adaptation.enabled=true", "adaptation.after_s=30",
                           "adaptation.min_windows=10",
                           "sessions.segmentation=false", "sessions.idle_timeout_s=3"],
                          config_path=config)
    sender = _replay_in_background(new_driver, daemon, "car", speed=25)
    messages = daemon.collect(lambda m: any(message.get("adapted") for kind, _, message in m
                                            if kind == "state"))
    assert daemon.metric("distractd_adaptation_fits_total", result="done") == 1
    config.write_text(f'[model]\npath = "{models["elm"]}"\n')   # same windows, not adaptable
    daemon.process.send_signal(signal.SIGHUP)
    assert _wait_for(lambda: daemon.metric("distractd_model_reloads_total",
                                           result="success") == 1)
    sender.join()
    elm = load_model(models["elm"]).model_id
    n_windows = len(extract_features(new_driver, PipelineConfig.from_dict(
        load_model(models["elm"]).pipeline_config)))
    messages += daemon.collect(lambda m: len(states_of(messages + m, "car")) >= n_windows)
    published = states_of(messages, "car")
    after = [m for m in published if m["model"] == elm]
    # the adapted model belonged to the old model: the stream runs on the new one, unadapted
    assert len(after) > 100 and all(m["adapted"] is None for m in after)
    assert daemon.metric("distractd_adaptation_skipped_total", reason="unsupported_model") == 1
    assert daemon.metric("distractd_adaptation_fits_total", result="done") == 1
    assert daemon.stop() == 0
    assert daemon.log_text.count("streams run unadapted") == 1
    assert "is a ELMClassifier; adaptation needs a semi-supervised cohort model" \
        in daemon.log_text
    assert "Traceback" not in daemon.log_text


@pytest.mark.parametrize("override, message", [
    ("adaptation.max_windows=5",
     "adaptation.max_windows must be an integer in [10, 100000], got 5"),
    ("adaptation.after_s=0", "adaptation.after_s must be in (0, inf), got 0.0"),
    ("adaptation.every_s=-1", "adaptation.every_s must be in [0, inf), got -1.0"),
    ("adaptation.enabled=1", "adaptation.enabled must be"),
])
def test_invalid_options_name_field_and_value(override, message):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=[override])
    assert message in str(info.value)


def test_the_daemon_refuses_an_invalid_option_in_one_line():
    result = subprocess.run([sys.executable, "-m", "distractd.cli", "run", "--set",
                             "adaptation.stride_s=-2", "--set", "metrics.enabled=false"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "adaptation.stride_s must be in [0, 3600], got -2.0" in lines[0], \
        result.stderr
