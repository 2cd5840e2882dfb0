"""Frames from a video file or a live camera, each with its timestamp and the moment it arrived.

A file's frames are stamped by decode order at the file's frame rate (``index / fps``, the
clock the clips' labels use); a camera's by the monotonic clock when the frame was read, so
``t`` is the tracker's own clock as the daemon expects (DESIGN §2: monotonic within a stream).
"""

import time

import cv2

__all__ = ["SourceError", "VideoSource"]


class SourceError(Exception):
    """A video file or camera that cannot be opened or read; the message names it."""


class VideoSource:
    """Frames of a video file (``path``) or a camera (``camera`` index, ``/dev/video<N>``).

    Parameters
    ----------
    path : str, optional
        Video file (anything FFmpeg decodes: mp4, mpg, avi, gif, ...).
    camera : int, optional
        Camera index, opened with OpenCV's V4L2 back end.
    width, height : int, default=640, 480
        Frame size asked of a camera (it may give another; :attr:`width` says).
    """

    def __init__(self, path=None, camera=None, width=640, height=480):
        if (path is None) == (camera is None):
            raise ValueError("VideoSource: give a path or a camera, not both")
        self.live = camera is not None
        self.name = f"/dev/video{camera}" if self.live else str(path)
        if self.live:
            self._capture = cv2.VideoCapture(int(camera), cv2.CAP_V4L2)
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        else:
            self._capture = cv2.VideoCapture(str(path))
        if not self._capture.isOpened():
            raise SourceError(f"{self.name}: cannot open this "
                              f"{'camera' if self.live else 'video file'}")
        ok, self._first = self._capture.read()
        if not ok:
            raise SourceError(f"{self.name}: no frame could be read")
        self.height, self.width = self._first.shape[:2]
        fps = self._capture.get(cv2.CAP_PROP_FPS)
        if not self.live and not 0 < fps < 1000:
            raise SourceError(f"{self.name}: frame rate must be in (0, 1000) fps, got {fps}")
        self.rate_hz = fps if 0 < fps < 1000 else 30.0

    def frames(self):
        """Yield ``(t, frame_bgr, arrived)``: the frame's timestamp in seconds, the frame, and
        ``time.perf_counter()`` when it was read (for the latency to its published sample).
        A file's frames end at its end; a camera that stops delivering raises
        :class:`SourceError`."""
        frame, index, start = self._first, 0, time.monotonic()
        while frame is not None:
            arrived = time.perf_counter()
            t = time.monotonic() - start if self.live else index / self.rate_hz
            yield t, frame, arrived
            ok, frame = self._capture.read()
            index += 1
            if not ok and self.live:   # a file ends; a camera that stops is an error
                raise SourceError(f"{self.name}: the camera stopped delivering frames after "
                                  f"{index}")
            frame = frame if ok else None

    def close(self):
        self._capture.release()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
