"""The review page: a drive on a zoomable timeline in the browser, and its labels corrected there.

``distractd review IN [--labels FILE] [--model MODEL] [--port P]`` serves one drive on 127.0.0.1:
its signals, eye events, glances, windows, the detector's score and state, segments, the truth and
the labels being corrected; the expert selects stretches, sets them distracted, attentive or
unknown, and saves the interval CSV that ``distractd train --labels`` reads (docs/review.md).
"""

from ._drive import GLANCES_AWAY, PANELS, ReviewDrive, load_drive
from ._labels import (
    GENERATIONS, LabelFile, StaleLabels, check_intervals, file_digest, read_label_file,
    save_intervals, save_path,
)
from ._server import (
    BACKLOG, MAX_BODY_BYTES, MAX_CONNECTIONS, MAX_PX, TIMEOUT_S, TOKEN_HEADER, ReviewServer,
    serve_review,
)

__all__ = [
    "ReviewDrive", "load_drive", "PANELS", "GLANCES_AWAY", "LabelFile", "read_label_file",
    "save_path", "check_intervals", "save_intervals", "ReviewServer", "serve_review", "MAX_PX",
    "MAX_BODY_BYTES", "BACKLOG", "TIMEOUT_S", "MAX_CONNECTIONS", "TOKEN_HEADER", "StaleLabels",
    "file_digest", "GENERATIONS",
]
