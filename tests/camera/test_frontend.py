"""The camera front-end on a real face clip: a recording every distractd command reads, with the
head roll, blinks and held closure the clip's labels show (tfjs-models' face-mesh demo clip,
Apache-2.0, development half; labels in ../shared/data/faces/labels)."""

import subprocess

import numpy as np
import pytest

from distractd.pipeline import describe, read_recording

from .conftest import run_camera

CLIP = "clips/tfjs-models_facemesh_demo_input.mp4"
FPS = 30.0


@pytest.fixture(scope="module")
def recording(faces, camera_program, tmp_path_factory):
    out = tmp_path_factory.mktemp("camera") / "clip.csv"
    (summary,) = run_camera(camera_program, faces / CLIP, "--out", out)
    return summary, read_recording(out)


def frames(first, last):
    return slice(first, last + 1)


def test_every_frame_is_one_sample_at_the_cameras_rate(recording):
    summary, rec = recording
    assert summary["frames"] == rec.n_samples == 325 and summary["face_fraction"] == 1.0
    assert np.allclose(np.diff(rec.t), 1.0 / FPS)
    info = describe(rec)
    assert info["rate_hz"] == pytest.approx(FPS)
    for name in ("head_x", "head_z", "head_yaw", "head_roll", "gaze_r_yaw", "gaze_l_pitch",
                 "eyelid_r", "eyelid_l", "confidence"):
        column = rec.column(name)
        assert np.isfinite(column).all(), name
    assert np.all(rec.column("confidence") == 1.0)
    # a laptop webcam about half a metre away
    assert 0.3 < np.median(rec.column("head_z")) < 0.9


def test_head_roll_follows_the_labelled_tilts_both_ways(recording):
    _, rec = recording
    roll = np.degrees(rec.column("head_roll"))
    one_way, other_way = roll[frames(60, 100)], roll[frames(140, 175)]   # labels: 45-105, 131-182
    assert np.median(one_way) * np.median(other_way) < 0
    assert min(abs(np.median(one_way)), abs(np.median(other_way))) > 15.0   # labels: 20-42 deg
    assert abs(np.median(roll[frames(0, 30)])) < 10.0                      # upright at the start


def test_eyelids_shut_in_the_labelled_blinks_and_closure_and_open_between(recording):
    _, rec = recording
    opening = np.nanmean([rec.column("eyelid_r"), rec.column("eyelid_l")], axis=0)
    for first, last in ((30, 35), (119, 124), (236, 262)):        # checked by eye
        assert opening[frames(first, last)].min() < 0.2, (first, last)
    held = opening[frames(240, 258)]
    assert np.mean(held < 0.5) > 0.8                               # shut through the squeeze
    open_frames = np.r_[frames(5, 25), frames(130, 155), frames(290, 320)]
    assert np.median(opening[open_frames]) > 0.8


def test_a_bad_video_is_one_line_and_status_1(camera_program, tmp_path):
    bad = tmp_path / "not-a-video.mp4"
    bad.write_bytes(b"this is no video")
    done = subprocess.run([str(camera_program), str(bad), "--out", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"distractd-camera: error: {bad}: cannot open this video file")
