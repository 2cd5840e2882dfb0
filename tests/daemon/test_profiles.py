"""Driver profiles: a real ``distractd run`` keeping what it learned of a named driver across
drives (baseline, road centre, kept windows, adapted model), refusing bad profile files with a
counted reason, and ``distractd profiles`` listing and erasing them; the parts in process."""

import json
import os
import subprocess
import sys
import time

import msgpack
import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from distractd.daemon import (
    DEFAULTS, Metrics, Model, ProfileStore, Profiles, StreamAdaptation, StreamTable,
)
from distractd.models.detectors import adapt_checked
from distractd.pipeline import FEATURE_NAMES, extract_features
from distractd.pipeline.formats import Limits, Rejected, decode_message, encode_map
from distractd.simulators import replay, simulate_drive

from ._published import states_of

SPEED = 25


def _options(folder, *more):
    return ["profiles.enabled=true", f"profiles.dir={folder}", "sessions.segmentation=false",
            "sessions.idle_timeout_s=2", "adaptation.enabled=true", "adaptation.after_s=30",
            "adaptation.stride_s=1", "adaptation.min_windows=10", "adaptation.every_s=0", *more]


def _drive(daemon, recording, stream, driver):
    """Replay a drive as ``stream`` naming ``driver``; its published states, once all are in."""
    n_windows = len(extract_features(recording))
    replay([recording], daemon.input, speed=SPEED, prefix=stream, driver=driver)
    messages = daemon.collect(lambda m: len(states_of(m, stream)) >= n_windows)
    return states_of(messages, stream)


def _wait_for(condition, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def _profiles_cli(*args):
    return subprocess.run([sys.executable, "-m", "distractd.cli", "profiles", *args],
                          capture_output=True, text=True, timeout=60)


def test_a_drivers_second_drive_starts_warm_and_erase_removes_the_profile(start_daemon,
                                                                          tmp_path):
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "bob.npz").write_bytes(b"PK\x03\x04 not a profile")   # a corrupt file
    daemon = start_daemon(_options(folder))
    first = _drive(daemon, simulate_drive(7, duration_s=150.0), "car-a", "alice")
    # a new driver warms up: no window decided in the baseline's first minute
    assert first[0]["calibration"]["baseline"]["ready"] is False
    assert first[0]["adapted"] is None and first[-1]["adapted"] is not None
    assert _wait_for(lambda: (folder / "alice.npz").exists())
    assert daemon.metric("distractd_profiles_total", outcome="new") == 1
    assert _wait_for(lambda: daemon.metric("distractd_profiles_total", outcome="saved") == 1)

    second = _drive(daemon, simulate_drive(8, duration_s=60.0), "car-b", "alice")
    # a known driver starts warm: baseline and road centre ready at the first window, windows
    # decided from it on, scored by the adapted model of the first drive
    assert second[0]["calibration"]["baseline"] == {"ready": True, "progress": 1.0}
    assert second[0]["calibration"]["road"] == {"ready": True, "progress": 1.0}
    assert sum(m["state"] != "unknown" for m in second[:10]) >= 8
    assert second[0]["adapted"] == first[-1]["adapted"]
    assert daemon.metric("distractd_profiles_total", outcome="loaded") == 1

    cold = _drive(daemon, simulate_drive(9, duration_s=30.0), "car-c", "bob")
    assert cold[0]["calibration"]["baseline"]["ready"] is False and cold[0]["adapted"] is None
    assert daemon.metric("distractd_profiles_rejected_total", reason="unreadable") == 1
    assert daemon.metric("distractd_adaptation_fits_total", result="done") >= 1
    assert daemon.stop() == 0
    lines = [line for line in daemon.log_text.splitlines() if "bob.npz" in line]
    assert len(lines) == 1 and "refused (unreadable)" in lines[0] \
        and "the stream starts cold" in lines[0]
    assert "Traceback" not in daemon.log_text

    listed = _profiles_cli("list", "--json", "--set", f"profiles.dir={folder}")
    assert listed.returncode == 0, listed.stderr
    assert {p["driver"] for p in json.loads(listed.stdout)["profiles"]} == {"alice", "bob"}
    erased = _profiles_cli("erase", "alice", "--set", f"profiles.dir={folder}")
    assert erased.returncode == 0, erased.stderr
    assert not (folder / "alice.npz").exists() and (folder / "bob.npz").exists()
    again = _profiles_cli("erase", "alice", "--set", f"profiles.dir={folder}")
    assert again.returncode == 1 and "none for alice" in again.stdout


# --- the parts, in process ------------------------------------------------------------------


@pytest.fixture(scope="module")
def model():
    return Model("", DEFAULTS["model"]["max_bytes"])


def _table(model, folder, **profiles):
    config = {**DEFAULTS, "profiles": {**DEFAULTS["profiles"], "enabled": True,
                                        "dir": str(folder), **profiles},
              "adaptation": {**DEFAULTS["adaptation"], "enabled": True}}
    metrics = Metrics(CollectorRegistry())
    streams = StreamTable(config, model, metrics)
    streams.opened.append(lambda session: setattr(session, "adaptation", StreamAdaptation(
        len(model.columns), config["adaptation"], collect=True)))
    return streams, Profiles(config, model, streams, metrics), metrics


def _learned_session(model, streams, driver):
    """A session fed a drive, with an adapted model swapped in as the daemon does."""
    inbox = streams.open("s", 0.0)
    streams.name_driver(inbox.session, driver)
    session = inbox.session
    windows = session.process(simulate_drive(5, duration_s=150.0).samples)
    session.adaptation.add(windows.X[:, model.columns], windows.t_end)
    rows = windows.X[:, model.columns]
    adapted, _ = adapt_checked(model.detector, rows[np.isfinite(rows).all(axis=1)],
                               n_unlabelled=200)
    session.adaptation.detector, session.adaptation.adapted = adapted, {"t": 1.0, "windows": 9}
    return session, windows


def test_a_profile_round_trip_restores_what_the_session_learned(model, tmp_path):
    streams, profiles, metrics = _table(model, tmp_path)
    session, windows = _learned_session(model, streams, "ann")
    profiles.save("s")
    stored = (tmp_path / "ann.npz")
    assert stored.exists() and stored.stat().st_size < 200_000   # a small file
    with np.load(stored, allow_pickle=False) as archive:
        # an adapted SS-ELM keeps only its output weights: the hidden layer is the model's
        assert sorted(n for n in archive.files if n.startswith("adapted/")) == ["adapted/beta"]

    streams, profiles, metrics = _table(model, tmp_path)
    warm = streams.open("t", 0.0).session
    streams.name_driver(warm, "ann")
    assert metrics.profiles["loaded"]._value.get() == 1
    baseline, before = warm.processor.baseline, session.processor.baseline
    np.testing.assert_array_equal(baseline.ring, before.ring)
    assert warm.processor.glances.road_centre_deg == pytest.approx(
        session.processor.glances.road_centre_deg)
    X = windows.X[-50:]
    np.testing.assert_allclose(
        warm.adaptation.detector.window_scores(X, FEATURE_NAMES),
        session.adaptation.detector.window_scores(X, FEATURE_NAMES), rtol=1e-9, equal_nan=True)
    kept = session.adaptation
    n = min(kept.n_rows, len(kept.rows))
    assert warm.adaptation.n_rows == n
    # its first windows are standardised at once, against the stored ring; a cold session's
    # are not (its baseline is warming up)
    samples = simulate_drive(6, duration_s=12.0).samples
    first = warm.process(samples)
    cold = streams.open("u", 0.0).session.process(samples)
    assert len(first) == len(cold) > 0 and baseline.ready
    assert np.isnan(cold.X).all() and np.isfinite(first.X[:, model.columns]).mean() > 0.8


def _corrupt(path, name, value):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {n: archive[n] for n in archive.files}
    if name == "header":
        header = json.loads(arrays["header"].tobytes())
        header.update(value)
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    else:
        arrays[name] = value
    with open(path, "wb") as file:
        np.savez(file, **arrays)


@pytest.mark.parametrize("name, value, reason, field", [
    ("baseline/ring", np.zeros((3, 3)), "bad_field", "baseline/ring: must have shape"),
    ("baseline/count", None, "bad_field", "baseline/count: must count"),
    ("baseline/head", np.array([10 ** 6]), "bad_field", "baseline/head: must be in"),
    ("road/hist", None, "bad_field", "road/hist: must not be negative"),
    ("rows", np.full((4, 30), np.inf), "bad_field", "rows: must hold finite values"),
    ("adapted/beta", np.ones((3, 1)), "bad_field", "adapted: ValueError: beta must have shape"),
    ("adapted/evil", np.ones(3), "bad_field", "adapted: ValueError: evil is not an array"),
    ("header", {"version": 2}, "bad_header", "header.format: must be"),
    ("header", {"pipeline": "0" * 16}, "other_pipeline", "header.pipeline"),
    ("object", np.array([{"a": 1}], dtype=object), "unreadable", "file:"),
])
def test_every_bad_profile_is_refused_with_its_reason_and_the_stream_starts_cold(
        model, tmp_path, caplog, name, value, reason, field):
    streams, profiles, _ = _table(model, tmp_path)
    _learned_session(model, streams, "ann")
    profiles.save("s")
    path = tmp_path / "ann.npz"
    if value is None:   # a value of the right shape that breaks the field's rule
        with np.load(path, allow_pickle=False) as archive:
            value = archive[name].copy()
        value.flat[0] = -1 if name == "road/hist" else value.flat[0] + 1
    if name == "object":
        with np.load(path, allow_pickle=False) as archive:
            arrays = {n: archive[n] for n in archive.files}
        with open(path, "wb") as file:
            np.savez(file, **arrays, evil=value)   # pickled inside: never unpickled
    else:
        _corrupt(path, name, value)
    streams, profiles, metrics = _table(model, tmp_path)
    session = streams.open("t", 0.0).session
    caplog.clear()
    streams.name_driver(session, "ann")
    assert metrics.profiles_rejected[reason]._value.get() == 1
    assert metrics.profiles["loaded"]._value.get() == 0
    lines = [r.getMessage() for r in caplog.records if "ann.npz" in r.getMessage()]
    assert len(lines) == 1 and field in lines[0] and f"({reason})" in lines[0], lines
    assert not session.processor.baseline.ready and session.adaptation.detector is None
    assert session.adaptation.n_rows == 0 and np.isnan(session.processor.baseline.ring).all()


def test_a_profile_of_another_model_keeps_the_baseline_and_drops_the_adapted_model(model,
                                                                                  tmp_path):
    streams, profiles, _ = _table(model, tmp_path)
    _learned_session(model, streams, "ann")
    profiles.save("s")
    _corrupt(tmp_path / "ann.npz", "header", {"adapted": {
        **json.loads(np.load(tmp_path / "ann.npz")["header"].tobytes())["adapted"],
        "model_id": "0123456789abcdef"}})
    streams, profiles, metrics = _table(model, tmp_path)
    session = streams.open("t", 0.0).session
    streams.name_driver(session, "ann")
    assert metrics.profiles_rejected["other_model"]._value.get() == 1
    assert metrics.profiles["loaded"]._value.get() == 1
    assert session.adaptation.detector is None and session.adaptation.n_rows == 0
    assert np.isfinite(session.processor.baseline.ring).any()


def test_retention_deletes_profiles_unused_for_longer(tmp_path):
    store = ProfileStore(tmp_path, 1 << 20, max_age_days=1.0)
    for driver in ("old", "new"):
        store.write(driver, {}, {"rows": np.zeros((1, 2))})
    old = tmp_path / "old.npz"
    stamp = time.time() - 2 * 86400
    os.utime(old, (stamp, stamp))
    assert store.expire() == ["old"]
    assert not old.exists() and (tmp_path / "new.npz").exists()


def test_a_driver_key_that_is_not_a_driver_id_is_refused_naming_it():
    frames = encode_map("car", {"t": 1.0}, driver="alice")
    assert decode_message(frames, Limits())[3] == "alice"
    for bad in ("../etc", 7, "x" * 200):
        payload = msgpack.packb({"v": 1, "t": 1.0, "driver": bad})
        with pytest.raises(Rejected) as info:
            decode_message([b"samples.car", payload], Limits())
        assert info.value.reason == "wrong_type" and "driver must be a driver id" in str(
            info.value)
