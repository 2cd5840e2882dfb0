"""Write a video made of a clip's own frames in a given order (run by the camera environment).

    python splice_video.py SOURCE OUT.avi '[0, 1, 2, 2, 2, 3]' [WIDTH]

The tests use it to make scenes the public clips lack out of their real frames: a closure held
for longer than the clip holds it (its shut frames shown again), a warm-up long enough for the
daemon's calibrations (frames played forward and back), a look away held for seconds. Frames
keep their pixels (motion-JPEG at the source's frame rate), scaled down to ``WIDTH`` pixels wide
when given (the cost of the test: a webcam's 640 x 480 rather than a 1080 x 720 clip); only
their order changes.
"""

import json
import sys

import cv2


def main(source, out, order, width=None):
    capture = cv2.VideoCapture(source)
    fps = capture.get(cv2.CAP_PROP_FPS)
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    if width:
        height = round(frames[0].shape[0] * width / frames[0].shape[1])
        frames = [cv2.resize(f, (width, height), interpolation=cv2.INTER_AREA) for f in frames]
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(out, cv2.VideoWriter_fourcc(*"MJPG"), fps, (width, height))
    for index in order:
        writer.write(frames[index])
    writer.release()
    print(json.dumps({"fps": fps, "frames": len(order)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), *map(int, sys.argv[4:5]))
