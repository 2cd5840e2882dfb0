"""The monitor on a camera: real face clips through the front-end into a real daemon.

The public clips are short (1.8-53 s) and none holds a look away for 3 s or the eyes shut for
1 s, while the daemon calibrates for a minute (road centre: 60 s of gaze) and its eyelid channel
for 10 s. Each scene is therefore made of a clip's own frames in a new order
(tests/camera/splice_video.py): frames played forward and back for the calibrations, a head turn
or a closure shown for longer by playing its frames back and forth. Every frame is a real face;
only the order of the frames, and so the durations, are made.

- glance channel and escalation, live: the front-end publishes to the daemon (``--to``) from the
  Intel sample clip (CC BY 4.0): a woman looking at the camera while turning her head a little
  (frames 16-21), then turned to her right (head and eyes about 45 degrees, frames 0-5) for 6 s;
- fatigue channel, through ``distractd conformance --recording``: the tfjs-models demo clip
  (Apache-2.0, development half). Its blink at frames 119-124 (both lids shut 120-122) is held for
  2 s — a microsleep; its 0.9 s squeeze (frames 233-262), which the labels call "eyes held shut",
  shuts the right eye only (the left stays narrowed and open: seen on the frames, and so the face
  mesh reads it) — no microsleep, as Euro NCAP's microsleep is both eyes closed.
"""

import json
import subprocess
import sys
import time

import numpy as np
import zmq

from distractd.pipeline import read_recording
from distractd.pipeline.formats import decode_output
from distractd.simulators._demo import running_daemon

from .conftest import run_camera, splice

GLANCE_CLIP = "clips/intel_head-pose-face-detection-female.gif"
FATIGUE_CLIP = "clips/tfjs-models_facemesh_demo_input.mp4"


def back_and_forth(first, last, n):
    """``n`` frame indices playing ``first..last`` forward, then back, and so on."""
    cycle = list(range(first, last + 1)) + list(range(last - 1, first, -1))
    return [cycle[i % len(cycle)] for i in range(n)]


def test_a_look_away_held_6_s_raises_the_alert_and_the_escalation_live(faces, camera_program,
                                                                       tmp_path):
    fps = 12.0833  # the clip's frame rate as FFmpeg reads it (12.5 fps nominal)
    warm, away, back = round(65 * fps), round(6 * fps), round(14 * fps)
    order = (back_and_forth(16, 21, warm) + back_and_forth(0, 5, away)
             + back_and_forth(16, 21, back))
    video = tmp_path / "look-away.avi"
    made = splice(faces / GLANCE_CLIP, video, order)
    fps = made["fps"]
    away_start, away_end = warm / fps, (warm + away) / fps
    end_t = (len(order) - 1) / fps

    with running_daemon() as daemon, zmq.Context() as context:
        sub = context.socket(zmq.SUB)
        sub.linger = 0
        sub.subscribe(b"")
        sub.connect(daemon.output)
        time.sleep(0.3)  # the subscription reaches the daemon before the first sample
        (summary,) = run_camera(camera_program, video, "--to", daemon.input,
                                "--stream", "cam-glance", "--out", tmp_path / "look-away.csv")
        states, alerts = [], []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (states and states[-1]["t"] >= end_t - 10.5):
            if sub.poll(200):
                kind, stream, message = decode_output(sub.recv_multipart())
                if stream == "cam-glance" and kind == "state" and "age_s" not in message:
                    states.append(message)
                elif stream == "cam-glance" and message.get("type") == "alert":
                    alerts.append(message)
        sub.close()
    assert summary["frames"] == len(order) and summary["face_fraction"] > 0.99
    assert states and states[-1]["t"] >= end_t - 10.5, "the daemon's states stopped early"

    # what was published, also written: turned to her right is + yaw (her nose to the image's
    # left), the head and the near (left) eye; the right eye, turned away, is not measured
    recording = read_recording(tmp_path / "look-away.csv")
    away = (recording.t >= away_start + 0.2) & (recording.t < away_end)
    facing = recording.t < away_start
    assert np.nanmedian(np.degrees(recording.column("head_yaw")[away])) > 35.0
    assert np.nanmedian(np.degrees(recording.column("gaze_l_yaw")[away])) > 30.0
    assert np.isnan(recording.column("gaze_r_yaw")[away]).mean() > 0.9
    for eye in ("r", "l"):   # her eyes on the lens while her head turns a little
        yaw = np.degrees(recording.column(f"gaze_{eye}_yaw")[facing])
        assert np.nanpercentile(np.abs(yaw), 90) < 15.0

    # calibrated by the time the look away starts
    ready = [s for s in states if s["glance"]["road"] == "ready"]
    assert ready and ready[0]["t"] <= away_start
    # one long-distraction alert, 3 s into the look away
    (alert,) = [a for a in alerts if a["kind"] == "long_distraction"]
    glance_start = alert["glances"][0][0]
    assert abs(glance_start - away_start) < 0.35
    assert 3.0 <= alert["t"] - glance_start <= 3.0 + 1.5 / fps and alert["away_s"] >= 3.0
    assert [a["kind"] for a in alerts] == ["long_distraction"]
    # the escalation: pre-alert at 3 s, prompt at 5 s, never unresponsive; back to none
    level = {s["t"]: s["escalation"]["level"] for s in states}
    during = {t: v for t, v in level.items() if away_start <= t <= away_end}
    assert max(during.values()) == 2
    assert min(t for t, v in during.items() if v >= 1) >= away_start + 2.5
    assert min(t for t, v in during.items() if v == 2) <= away_start + 5.5
    assert max(level.values()) == 2
    after = [s for s in states if s["t"] >= away_end + 1.0]
    assert after and after[-1]["glance"]["on_road"] is True
    assert after[-1]["escalation"]["level"] == 0


def test_a_blink_held_2_s_is_a_microsleep_and_a_one_eyed_squeeze_is_not(faces, camera_program,
                                                                        tmp_path):
    warm = list(range(0, 231)) + list(range(229, 115, -1))  # 11.5 s: the open level (10 s)
    held = list(range(116, 120)) + back_and_forth(120, 122, 60) + list(range(123, 131))
    between = list(range(131, 233))
    squeeze = list(range(233, 325))                        # frames 233-262: right eye shut
    tail = list(range(323, 0, -1))
    order = warm + held + between + squeeze + tail
    video = tmp_path / "closures.avi"
    fps = splice(faces / FATIGUE_CLIP, video, order, width=640)["fps"]
    recording = tmp_path / "closures.csv"
    run_camera(camera_program, video, "--out", recording)

    held_start = (len(warm) + 3) / fps                     # frame 119: the lids closing
    squeeze_start = (len(warm) + len(held) + len(between)) / fps
    annotations = tmp_path / "closures.annotations.csv"
    annotations.write_text(
        "name,family,start_s,end_s,expected,limit_s\n"
        f"blink_held_2s,microsleep,{held_start:.3f},{held_start + 2.0:.3f},microsleep,1.5\n"
        f"one_eye_squeeze,negative,{squeeze_start:.3f},{squeeze_start + 1.0:.3f},none,\n")
    out = tmp_path / "scorecard"
    done = subprocess.run([sys.executable, "-m", "distractd.cli", "conformance", "--recording",
                           str(recording), "--annotations", str(annotations), "--out", str(out),
                           "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((out / "scorecard.json").read_text())
    rows = {row["name"]: row for row in card["scenarios"]}
    assert rows["blink_held_2s"]["pass"] and rows["blink_held_2s"]["got"] == ["microsleep"]
    assert 1.0 <= rows["blink_held_2s"]["latency_s"] <= 1.5
    (microsleep,) = rows["blink_held_2s"]["alerts"]
    assert microsleep["closed_s"] >= 1.0
    assert rows["one_eye_squeeze"]["pass"] and rows["one_eye_squeeze"]["got"] == ["none"]
    assert np.isclose(card["passed"], 2)
