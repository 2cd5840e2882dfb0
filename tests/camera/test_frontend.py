"""The camera front-end on real face clips: a recording every distractd command reads, with the
head roll and blinks the clip's labels show (tfjs-models' face-mesh demo clip, Apache-2.0,
development half; labels in ../shared/data/faces/labels), and blink detection on the labelled
clips of the development half at or above the naive eye-aspect-ratio floor of the same run."""

import subprocess

import numpy as np
import pytest

from distractd.pipeline import describe, read_recording


CLIP = "tfjs-models_facemesh_demo_input"
FPS = 30.0


@pytest.fixture(scope="module")
def recording(blink_study):
    """The clip's summary line and recording, from the blink study's run."""
    records, folder = blink_study
    (summary,) = [r for r in records if r.get("bench") == "camera_frontend" and r["clip"] == CLIP]
    return summary, read_recording(folder / f"{CLIP}.csv")


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


def test_blinks_are_found_at_least_as_well_as_by_the_naive_eye_aspect_ratio(blink_study):
    records, _ = blink_study
    pooled = {r["detector"]: r for r in records
              if r["bench"] == "camera_blinks_pooled" and r["half"] == "development"}
    camera, naive = pooled["camera"], pooled["naive_ear"]
    assert camera["clips"] == naive["clips"] == 7
    assert camera["n_reference"] == naive["n_reference"] == 16
    assert camera["f1"] >= naive["f1"]                              # [0.875 and 0.875]
    assert camera["f1"] >= 0.8


def test_a_camera_that_cannot_be_opened_is_one_line_and_status_1(camera_program, tmp_path):
    done = subprocess.run([str(camera_program), "--camera", "99", "--out",
                           str(tmp_path / "x.csv")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "distractd-camera: error: /dev/video99: cannot open this camera")
    done = subprocess.run([str(camera_program), "--out", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("give VIDEO file(s) or --camera N")
