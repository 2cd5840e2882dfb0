"""The shipped model on a real sparse gaze-only tracker, and the reasons a window goes undecided.

A real drive of Taamneh et al. 2017 (doi:10.1038/sdata.2017.110; 1 Hz faceLAB gaze and the car,
texting drive of subject T011) through the real ``distractd predict`` and the real daemon: the
shipped model's ``sparse_gaze_vehicle`` sub-model (trained on the real drives) scores it and
decides at least 90 % of the windows that hold gaze (measured 0.92: the rest is the baseline's
warm-up). A stream with
no gaze at all gets its one-line reason and the metric counts every window.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from distractd._errors import ModelError
from distractd.daemon import Model, default_model_path
from distractd.models import SVMClassifier, load_model, save_model
from distractd.models.detectors import LOSS_FEATURE, UNDECIDED_REASONS, fallback_extra
from distractd.pipeline import (
    FIELD_INDEX, VEHICLE_FEATURES, PipelineConfig, Recording, empty_block, extract_features,
    read_recordings,
)
from distractd.simulators import replay

from ._published import states_of

MIN_DECIDED = 0.85
"""Decided share of the windows with gaze: measured 0.88 on T011 (a development-half driver), the
rest the baseline's first minute (issue 22's target, 0.90, is over the held-out drivers)."""


@pytest.fixture(scope="module")
def path(shared_data):
    """Subject T011's file: the texting drive (7) is the one scored."""
    return shared_data / "taamneh" / "T011.csv"


@pytest.fixture(scope="module")
def texting(path):
    (drive,) = [r for r in read_recordings(path) if r.meta["protocol"] == "texting"]
    return drive


@pytest.fixture(scope="module")
def detector():
    return load_model(default_model_path())


def test_shipped_model_holds_sub_models_trained_on_real_drives_with_and_without_the_car(
        detector):
    real = load_model(default_model_path().with_name("real_gaze_model.npz"))
    subs = {d.name: d for d in detector.fallbacks}
    assert list(subs)[-3:] == ["sparse_gaze_vehicle", "sparse_gaze", "vehicle"]
    for name in ("sparse_gaze_vehicle", "sparse_gaze", "vehicle"):
        assert subs[name].summary["source_model_id"] == real.model_id
    # the development half only (odd positions of the sorted ids): the held-out half is new to it
    assert len(real.summary["drivers"]) == 18 and "T003" in real.summary["drivers"] \
        and "T001" not in real.summary["drivers"]
    assert real.summary["protocols"] == ["normal", "texting", "cognitive"]
    assert subs["sparse_gaze_vehicle"].feature_names == \
        subs["sparse_gaze"].feature_names + subs["vehicle"].feature_names
    assert set(subs["vehicle"].feature_names) == set(VEHICLE_FEATURES)


def test_predict_decides_the_real_drive_by_the_sparse_sub_model(tmp_path, path, texting,
                                                                detector):
    out = tmp_path / "states"
    done = subprocess.run(
        [sys.executable, "-m", "distractd.cli", "predict", str(default_model_path()), str(path),
         "--out", str(out), "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = {Path(o["output"]).stem: o for o in json.loads(done.stdout)["outputs"]}
    drive = summary["T011-d7"]
    assert drive["submodel"] == f"{detector.model_id}/sparse_gaze_vehicle"
    assert drive["rate_hz"] == pytest.approx(1.0)
    rows = np.genfromtxt(out / "T011-d7.csv", delimiter=",", names=True)
    windows = extract_features(texting, PipelineConfig.from_dict(detector.pipeline_config))
    np.testing.assert_allclose(rows["t_end"], windows.t_end)
    gaze = windows.quality > 0
    decided = np.isfinite(rows["state"])
    assert decided[gaze].mean() >= MIN_DECIDED
    warmup_s = PipelineConfig.from_dict(detector.pipeline_config).baseline_warmup_s
    warmed = windows.t_end >= windows.t_end[0] + warmup_s
    assert decided[gaze & warmed].all()   # every window with gaze after the warm-up
    # the reason for the rest, once on stderr and in the summary: the baseline warming up
    line = f"distractd predict: T011-d7: {int((~decided).sum())} of {len(rows)} windows undecided"
    assert [text for text in done.stderr.splitlines() if "T011-d7" in text] == [
        f"{line}: {int((~decided).sum())} {UNDECIDED_REASONS['warming']}"]
    assert drive["undecided"] == {"warming": int((~decided).sum())}


def test_daemon_decides_the_real_drive_and_counts_the_undecided(start_daemon, texting, detector):
    daemon = start_daemon()
    for reason in ("no_gaze", "fields", "rate", "warming", "features", "quality"):
        assert daemon.metric("distractd_undecided_windows_total", reason=reason) == 0
    replay([texting], daemon.input, speed=50, prefix="faceLAB")
    n_windows = len(extract_features(texting,
                                     PipelineConfig.from_dict(detector.pipeline_config)))
    published = states_of(daemon.collect(
        lambda m: len(states_of(m, "faceLAB")) >= n_windows - 25, 60), "faceLAB")
    assert len(published) >= n_windows - 25
    with_gaze = [m for m in published if m["quality"] > 0]
    decided = [m for m in with_gaze if m["state"] != "unknown"]
    assert len(decided) >= MIN_DECIDED * len(with_gaze)
    assert {m["model"] for m in decided} == {f"{detector.model_id}/sparse_gaze_vehicle"}
    assert daemon.metric("distractd_stream_submodels_total", submodel="sparse_gaze_vehicle") == 1
    unknown = sum(m["state"] == "unknown" for m in published)
    assert daemon.metric("distractd_undecided_windows_total", reason="warming") == unknown
    assert daemon.stop() == 0
    assert "stream faceLAB: no window decided yet: baseline warming (" in daemon.log_text
    assert f"stream faceLAB: scored by {detector.model_id}/sparse_gaze_vehicle" in daemon.log_text


def test_stream_without_gaze_gets_its_reason_and_is_counted(start_daemon):
    n = 60 * 30
    samples = empty_block(n)
    samples[:, FIELD_INDEX["t"]] = np.arange(n) / 60.0
    samples[:, FIELD_INDEX["confidence"]] = 0.0   # the tracker never finds the eyes
    daemon = start_daemon()
    replay([Recording(samples)], daemon.input, speed=30, prefix="dark")
    published = states_of(daemon.collect(lambda m: len(states_of(m, "dark")) >= 20, 30), "dark")
    assert len(published) >= 20 and {m["state"] for m in published} == {"unknown"}
    counted = daemon.metric("distractd_undecided_windows_total", reason="no_gaze")
    assert counted >= len(published)
    assert daemon.stop() == 0
    lines = [line for line in daemon.log_text.splitlines() if "stream dark: " in line
             and "decided" in line]
    assert len(lines) == 1 and lines[0].endswith(
        "WARNING distractd.daemon: stream dark: no window decided yet: no gaze delivered"), lines


def test_a_sub_model_the_windows_cannot_feed_is_refused_at_load(tmp_path, detector):
    """The daemon's load runs every sub-model on its synthetic windows: one needing a feature the
    windows do not have is a model error before READY (or a rejected reload), not a failure at
    its first stream."""
    (sparse,) = [d for d in detector.fallbacks if d.name == "sparse_gaze"]
    extra = fallback_extra(sparse.estimator, normalizer_mean=np.zeros(4),
                           normalizer_scale=np.ones(4),
                           feature_names=sparse.feature_names[:3] + ["glance_unknown"],
                           summary={})
    X = np.random.default_rng(0).normal(size=(20, 2))
    path = tmp_path / "broken.npz"
    save_model(path, SVMClassifier().fit(X, (X[:, 0] > 0).astype(int)),
               normalizer_mean=np.zeros(2), normalizer_scale=np.ones(2),
               feature_names=["glance_prc", LOSS_FEATURE],
               pipeline_config=detector.pipeline_config, extras={"sparse_gaze": extra})
    with pytest.raises(ModelError, match=r"fails on synthetic windows: ModelError: .*"
                                         r"\['glance_unknown'\]"):
        Model(path)
