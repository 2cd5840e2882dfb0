"""The model the daemon serves: a detector loaded, checked and warmed up (:class:`Model`).

A model file the daemon cannot use is refused at load (start, ``run --check``, SIGHUP) with one
:class:`~distractd.ModelError` line that names the file once.
"""

import time

import numpy as np

from .._errors import DistractdError, ModelError
from .._numba import cache_is_fresh, finish_helper, start_helper
from ..models import detectors, load_model
from ..models.detectors import DEFAULT_MODEL_PATH, adaptation_obstacle
from ..models.segmentation import SegmentPrototypes
from ..pipeline import (
    FEATURE_NAMES, FIELD_INDEX, PipelineConfig, RunningBaseline, StreamProcessor, Windows,
    empty_block, feature_fields,
)
from ..pipeline._processor import _run as _stream_kernel
from ._config import DEFAULTS
from ._files import check_archive
from ._session import StreamSegmenter

__all__ = ["Model", "default_model_path"]

_EXTRA_S = 2.0
"""The warm-up's synthetic stream is one window and this long: a few windows complete."""


def default_model_path():
    """The model shipped in the package (``distractd/data/default_model.npz``)."""
    return DEFAULT_MODEL_PATH


class Model:
    """A loaded detector with everything a session needs from it, checked and warmed up.

    ``extras["segmenter"]`` (optional) holds :meth:`SegmentPrototypes.to_artifact` output, in the
    model's z-scored feature space. ``needs`` lists, per model feature, the canonical fields it is
    computed from (:func:`~distractd.pipeline.feature_fields`), for the field check;
    ``obstacle`` says why it cannot be adapted to a stream's driver (None when it can). The file
    must be a regular file of at most ``max_bytes`` bytes whose arrays expand to at most as many;
    whatever else is wrong with it (missing parts, wrong types) is a
    :class:`~distractd.ModelError` naming it. ``warm_up=False`` leaves the warm-up out (the
    helper of :meth:`_warm_up` runs its own part). Adaptation's fits run in their own process
    (:mod:`~distractd.daemon._fitworker`), which compiles what they need itself.
    """

    def __init__(self, path, max_bytes=DEFAULTS["model"]["max_bytes"], *, warm_up=True):
        self.path = str(path or default_model_path())
        self.max_bytes = max_bytes
        check_archive(self.path, max_bytes, "model file", ModelError)
        try:
            self.detector = load_model(self.path)
        except DistractdError as exc:
            raise _naming(self.path, exc) from None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                RecursionError) as exc:  # a header with parts missing or of the wrong type
            raise ModelError(f"model file {self.path} cannot be used: {type(exc).__name__}: "
                             f"{exc}") from None
        try:
            self.columns = self.detector.feature_columns(FEATURE_NAMES)
            self.pipeline_config = PipelineConfig.from_dict(self.detector.pipeline_config)
            self.needs = feature_fields(self.detector.feature_names,
                                        self.pipeline_config.use_tracker_flags)
            segmenter = self.detector.extras.get("segmenter")
            self.prototypes = SegmentPrototypes.from_artifact(*segmenter) if segmenter else None
            self.obstacle = adaptation_obstacle(self.detector)
        except (DistractdError, TypeError) as exc:
            raise _naming(self.path, exc) from None
        if warm_up:
            self._warm_up()

    def segmenter(self, enabled):
        if not enabled or self.prototypes is None:
            return None
        return StreamSegmenter(self.prototypes, self.normalize)

    def normalize(self, X_windows):
        """The model's z-score of its features among full window feature rows."""
        return self.detector.normalize(X_windows[:, self.columns])

    def scores(self, X_windows):
        """Scores of full window feature rows, each by the most complete sub-model whose features
        it has (the daemon scores each stream by the sub-model chosen for it); NaN where none."""
        return self.detector.window_scores(X_windows, FEATURE_NAMES)

    def _warm_up(self):
        """Compile every kernel and run every part once on a synthetic stream (also a check).

        When numba's cache does not hold the stream kernel yet (a cold start), a helper process
        (``python -m distractd.daemon._precompile``) compiles the baseline's and the scoring
        kernels meanwhile (:mod:`distractd._numba`), waited for at most as long as the stream
        kernel took; this process then loads them from the cache. Every part still runs here, so
        READY follows a complete warm-up either way."""
        helper = None
        if not cache_is_fresh(_stream_kernel):
            helper = start_helper(f"{__package__}._precompile", self.path, str(self.max_bytes))
        start = time.monotonic()
        try:
            windows = self._stream_windows()
        finally:
            finish_helper(helper, timeout_s=time.monotonic() - start)
        self._score(windows.X, windows.t_end)

    def warm_up_scoring(self):
        """The helper's part of a cold warm-up: the baseline and the scoring kernels, on
        synthetic windows of the same types as the stream kernel's."""
        n = int(round(_EXTRA_S / self.pipeline_config.hop_s)) + 1
        t_end = self.pipeline_config.window_s + self.pipeline_config.hop_s * np.arange(n)
        X = 0.01 * np.sin(np.arange(n * len(FEATURE_NAMES)) / 7.0).reshape(n, -1)
        if self.pipeline_config.baseline:
            X = RunningBaseline.from_config(self.pipeline_config, FEATURE_NAMES).update(t_end, X)
        self._score(X, t_end)

    def _stream_windows(self):
        """The windows of a synthetic stream, fed as the wire's read-only blocks and as joined
        (writable) ones: the pipeline hands its kernel one array type, so one compile serves
        both."""
        n = int(round((self.pipeline_config.window_s + _EXTRA_S) * 60.0))
        block = empty_block(n)
        block[:, FIELD_INDEX["t"]] = np.arange(n) / 60.0
        for field in ("gaze_r_yaw", "gaze_r_pitch", "gaze_l_yaw", "gaze_l_pitch", "head_x",
                      "head_y", "head_z", "head_yaw", "head_pitch", "head_roll"):
            block[:, FIELD_INDEX[field]] = 0.01 * np.sin(np.arange(n) / 7.0)
        block[:, FIELD_INDEX["confidence"]] = 1.0
        for field in ("speed", "steering", "lane_offset", "accelerator", "brake"):   # the car's
            block[:, FIELD_INDEX[field]] = 0.1 + 0.01 * np.sin(np.arange(n) / 7.0)  # channel too
        processor = StreamProcessor(self.pipeline_config)
        wire = block[: n // 2]
        wire.setflags(write=False)
        return Windows.concat([processor.update(wire), processor.update(block[n // 2:])])

    def _score(self, X, t_end):
        """Every scoring part once on windows ``X`` ending at ``t_end``; a failure is a
        :class:`~distractd.ModelError` naming the file."""
        try:
            scores = self.detector.decision_function(np.nan_to_num(X[:, self.columns]))
            detectors.smooth_decisions(t_end, scores)  # the decision rule's kernel
            for submodel in self.detector.fallbacks:   # a broken sub-model fails here, not later
                submodel.window_scores(np.nan_to_num(X), FEATURE_NAMES, submodel)
            segmenter = self.segmenter(True)
            if segmenter is not None:
                segmenter.update(X, t_end)
        except (ValueError, TypeError, IndexError, DistractdError) as exc:
            raise ModelError(f"model file {self.path} fails on synthetic windows: "
                             f"{type(exc).__name__}: {exc}") from None
        if scores.shape != (len(X),):
            raise ModelError(f"model file {self.path}: decision_function returned shape "
                             f"{scores.shape} for {len(X)} windows")


def _naming(path, exc):
    """A :class:`~distractd.ModelError` of one line that names the model file once: a
    :class:`~distractd.DistractdError`'s message as it is when it names the file already, else
    after ``model file PATH:``."""
    text = str(exc) if isinstance(exc, DistractdError) else f"{type(exc).__name__}: {exc}"
    return ModelError(text if path in text else f"model file {path}: {text}")
