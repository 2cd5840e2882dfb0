"""The daemon's stream table: one :class:`_Inbox` (and its :class:`Session`) per stream id.

A stream's first accepted message opens its session (:meth:`StreamTable.open`, refused as
``too_many_streams`` when ``sessions.max_streams`` are active); the inbox holds its samples until
they can complete a window (:meth:`StreamTable.ingest` feeds the due ones to their sessions). The
table expires the streams idle for ``sessions.idle_timeout_s`` and drops the session of a stream
whose processing failed (:meth:`StreamTable.fault`). Other parts follow the table through its
listeners: ``opened`` are called with each new session, ``named`` with a session whose stream
named its driver, ``dropped`` with the id of each stream that left it (failed or expired), after
its last windows were published.
"""

import logging
import math

import numpy as np

from ..models.detectors import decision_options
from ..pipeline import T_MAX_S
from ..pipeline.formats import Rejected
from ._memory import trim_heap
from ._ratelog import RateLimitedLog
from ._session import Session, StreamFault

__all__ = ["StreamTable"]

log = logging.getLogger("distractd.daemon")


class StreamTable:
    """The daemon's streams: ``inboxes`` maps each stream id to its :class:`_Inbox`.

    Parameters
    ----------
    config : dict
        The daemon's configuration (``[sessions]``, the decision rule's options,
        ``service.rejection_log_interval_s``).
    model : Model
        The loaded model (the sessions' window settings, decision rule and segmenter).
    metrics : Metrics

    Attributes
    ----------
    inboxes : dict of str to _Inbox
    gaze_frames : dict of str to str
        ``"head"`` for the stream ids of eye-in-head sources (Pupil, LSL), set by their inputs.
    opened : list of callable
        Called with each new :class:`Session` before its first samples.
    named : list of callable
        Called with a :class:`Session` whose stream named its driver (:meth:`name_driver`).
    dropped : list of callable
        Called with the id of each stream that left the table.
    """

    def __init__(self, config, model, metrics):
        self.metrics = metrics
        self.inboxes = {}
        self.gaze_frames = {}
        self.opened = []
        self.named = []
        self.dropped = []
        self._ended_since_trim = 0  # sessions expired since the heap was last trimmed
        self.config = self.model = None
        self.configure(config, model)

    def configure(self, config, model):
        """Take a (re)loaded configuration and model; return whether the sessions restarted.

        New sessions are opened with them. On a reload, the sessions restart (are dropped, each
        stream's next message opens a new one) when the model's window settings, the decision
        rule's options or ``[sessions]`` change; when only the model changes, each session checks
        its fields again (a new model may need fields the old one did not).
        """
        restart = self.model is not None and (
            model.pipeline_config != self.model.pipeline_config
            or config["smoothing"] != self.config["smoothing"]
            or config["sessions"] != self.config["sessions"])
        swapped = self.model is not None \
            and model.detector.model_id != self.model.detector.model_id
        self.config = config
        self.model = model
        self.fault_log = RateLimitedLog(config["service"]["rejection_log_interval_s"],
                                        "stream error:", "errors", logging.ERROR)
        if restart:
            self.inboxes.clear()
            self.metrics.active_streams.set(0)
        elif swapped:
            for inbox in self.inboxes.values():
                inbox.session.recheck_fields()
        return restart

    def open(self, stream, now):
        """Open a stream's session and inbox; raise :class:`Rejected` when the table is full."""
        limit = self.config["sessions"]["max_streams"]
        if len(self.inboxes) >= limit:
            raise Rejected("too_many_streams", f"stream {stream}: sessions.max_streams={limit} "
                                               f"streams are active")
        pipeline_config = self.model.pipeline_config
        decision = decision_options(self.config, self.model.detector.feature_names)
        session = Session(stream, pipeline_config, decision,
                          self.model.segmenter(self.config["sessions"]["segmentation"]), now)
        for opened in self.opened:
            opened(session)
        inbox = self.inboxes[stream] = _Inbox(session, pipeline_config)
        self.metrics.active_streams.set(len(self.inboxes))
        log.info("stream %s: new session (%d active)", stream, len(self.inboxes))
        if self.gaze_frames.get(stream) == "head":
            session.gaze_frame = "head"
            log.warning("stream %s: eye-in-head gaze without head pose (a head-mounted tracker): "
                        "the glance channel learns its road centre in eye-in-head angles and a "
                        "head turn with the eyes centred looks like the road; the model's gaze "
                        "features were learned on car-frame gaze (docs/inputs.md)", stream)
        return inbox

    def name_driver(self, session, driver):
        """A message of the stream named its driver: the first name holds for the session (a
        new driver is a new stream); the ``named`` listeners are called with it."""
        if session.driver is None:
            session.driver = driver
            for listener in self.named:
                listener(session)

    def fault(self, stream, stage, exc, now, session=None):
        """An unexpected exception of one stream at ``stage`` (a
        :data:`~distractd.daemon._session.STREAM_STAGES`; a :class:`StreamFault` names its own):
        count it, mark the stream's session failed and drop it from the table (the stream's next
        message opens a new one), log one line, rate-limited, with the traceback at debug level.
        ``session``: the session that failed, when known (it may have ended already)."""
        if isinstance(exc, StreamFault):
            stage, exc = exc.stage, exc.__cause__
        self.metrics.stream_errors[stage].inc()
        inbox = self.inboxes.get(stream)
        dropped = inbox is not None and (session is None or inbox.session is session)
        if dropped:
            del self.inboxes[stream]
            session = inbox.session
            session.failed = True   # before the listeners: nothing of it is kept
            self.metrics.active_streams.set(len(self.inboxes))
            for listener in self.dropped:
                listener(stream)
        where = "a message" if stream is None else f"stream {stream}"
        self.fault_log.warning(stage, f"{where} failed at {stage}"
                               f"{', its session dropped' if dropped else ''}: "
                               f"{type(exc).__name__}: {exc}", now)
        log.debug("%s failed at %s", where, stage, exc_info=exc)
        if session is not None:
            session.failed = True

    def ingest(self, touched, now):
        """Feed each touched inbox that is due to its session; return the windows completed.

        Returns
        -------
        list of (Session, Windows, float)
            Sessions with completed windows and the arrival time of their first message of this
            batch.
        """
        pending = []
        for inbox in touched:
            arrival = inbox.arrival_s
            inbox.arrival_s = None
            session = inbox.session
            if session.failed or not inbox.due(now):
                continue
            stage = "ingest"
            try:
                block = inbox.take()
                stage = "pipeline"
                windows = session.process(block)
            except Exception as exc:
                self.fault(session.stream, stage, exc, now, session)
                continue
            if len(windows):
                pending.append((session, windows, arrival))
        return pending

    def expire(self, now):
        """Remove the streams idle for ``sessions.idle_timeout_s``; return their inboxes (to be
        ended, then :meth:`release` d)."""
        idle_s = self.config["sessions"]["idle_timeout_s"]
        expired = [stream for stream, inbox in self.inboxes.items()
                   if now - inbox.session.last_seen_s > idle_s]
        return [self.inboxes.pop(stream) for stream in expired]

    def release(self, expired):
        """Say that the expired streams ended (their last windows published): log, count, call
        the ``dropped`` listeners and trim the heap every :data:`_TRIM_AFTER_SESSIONS`."""
        idle_s = self.config["sessions"]["idle_timeout_s"]
        for inbox in expired:
            log.info("stream %s: expired after %.0f s without input", inbox.session.stream,
                     idle_s)
            for listener in self.dropped:
                listener(inbox.session.stream)
        if expired:
            self.metrics.streams_expired.inc(len(expired))
            self.metrics.active_streams.set(len(self.inboxes))
            self._ended_since_trim += len(expired)
            if self._ended_since_trim >= _TRIM_AFTER_SESSIONS:
                trim_heap()
                self._ended_since_trim = 0

    def count_rejections(self, session):
        """Count the samples the session's pipeline rejected since the previous call."""
        for reason, count in session.new_rejections().items():
            self.metrics.samples_rejected[reason].inc(count)


_TRIM_AFTER_SESSIONS = 256
"""Expired sessions after which the heap is trimmed (:func:`trim_heap`: about 20 MB of session
memory)."""


_HOLD_MAX_SAMPLES = 256
"""Most samples an inbox holds before feeding them regardless (36 KB)."""


class _Inbox:
    """A stream's session and the samples received but not yet fed to its pipeline.

    Windows end on the hop grid, and the window ending at ``E * hop_s`` completes at the stream's
    first sample with ``t >= E * hop_s + lag_s`` (:class:`~distractd.pipeline.StreamProcessor`).
    Messages whose samples all come before the next such time (:attr:`due_t`) cannot complete a
    window, so they are held and the pipeline runs about once per hop instead of once per
    message, completing the same windows at the same moment (the pipeline's results do not depend
    on how a stream is cut into blocks). Held samples are fed anyway when time goes backwards
    (the pipeline judges resets), after a forward step over ``max_jump_s`` (the pipeline holds such
    a sample until the next one confirms it), after ``hop_s`` of wall time or
    :data:`_HOLD_MAX_SAMPLES` samples, and at the end of the stream.

    Map-form samples arrive as rows (:func:`~distractd.pipeline.formats.decode_message`) and are
    held as rows, made into one array when a block arrives after them or at :meth:`take`: one
    array per hop rather than one per message.

    A stream that receives vehicle samples has a :class:`~distractd.daemon._vehicle.VehicleJoin`
    (``vehicle``): :meth:`take` joins their values to the held eye samples.

    Parameters
    ----------
    session : Session
    pipeline_config : PipelineConfig
        The session's window settings.
    """

    __slots__ = ("session", "hop_s", "lag_s", "max_jump_s", "blocks", "rows", "n_held",
                 "held_since_s", "arrival_s", "t_last", "t_fed", "due_t", "ready", "vehicle")

    def __init__(self, session, pipeline_config):
        self.session = session
        self.hop_s = pipeline_config.hop_s
        self.lag_s = pipeline_config.lag_s
        self.max_jump_s = pipeline_config.max_jump_s
        self.blocks = []        # held arrays, oldest first ...
        self.rows = []          # ... then the held rows received after the newest of them
        self.n_held = 0
        self.held_since_s = 0.0
        self.arrival_s = None   # monotonic arrival (s) of the first message of the current batch
        self.t_last = math.nan  # sample time (s) of the newest sample received
        self.t_fed = math.nan   # ... and of the newest fed to the pipeline
        self.due_t = -math.inf  # the earliest sample time that can complete a window
        self.ready = False
        self.vehicle = None     # the stream's VehicleJoin, from its first vehicle message

    def add(self, samples, now_s):
        """Hold a message's samples (a block, or rows in canonical field order); return True for
        the stream's first message of the batch."""
        first = self.arrival_s is None
        if first:
            self.arrival_s = now_s
        if len(samples):
            if not self.n_held:
                self.held_since_s = now_s
            if type(samples) is np.ndarray:
                if self.rows:
                    self._join_rows()
                self.blocks.append(samples)
                t_first, t_newest = samples[0, 0], samples[-1, 0]
            else:
                self.rows.extend(samples)
                t_first, t_newest = samples[0][0], samples[-1][0]
            self.n_held += len(samples)
            if t_newest >= self.due_t or t_first < self.t_last:
                self.ready = True
            self.t_last = t_newest
        return first

    def due(self, now_s):
        """Whether the held samples must be fed now."""
        return self.n_held > 0 and (self.ready or self.n_held >= _HOLD_MAX_SAMPLES
                                    or now_s - self.held_since_s >= self.hop_s)

    def take(self):
        """Remove and return the held samples as one block (None when none are held)."""
        if not self.n_held:
            return None
        if self.rows:
            self._join_rows()
        block = self.blocks[0] if len(self.blocks) == 1 else np.concatenate(self.blocks)
        if self.vehicle is not None and not self.vehicle.alone:
            block = self.vehicle.fill(block)
        self.blocks = []
        self.n_held = 0
        self.ready = False
        t_fed = block[-1, 0]
        t_before = block[-2, 0] if len(block) > 1 else self.t_fed
        self.t_fed = t_fed
        self.due_t = -math.inf if t_fed - t_before > self.max_jump_s else \
            _next_window_t(t_fed, self.hop_s, self.lag_s)
        return block

    def _join_rows(self):
        """Make the held rows one array, after the held arrays (``None`` becomes NaN)."""
        self.blocks.append(np.array(self.rows, dtype=np.float64))
        self.rows = []


def _next_window_t(t, hop_s, lag_s):
    """The earliest sample time after ``t`` (s) that completes a window: the smallest
    ``E * hop_s + lag_s > t`` for a whole ``E``, in the pipeline's own arithmetic (``-inf`` when
    ``t`` is not finite or beyond ``T_MAX_S``, where validation drops the sample: ``1e308 /
    hop_s`` would overflow)."""
    if not abs(t) <= T_MAX_S:
        return -math.inf
    end = math.floor((t - lag_s) / hop_s)
    for end in (end, end + 1.0, end + 2.0):
        if end * hop_s + lag_s > t:
            return end * hop_s + lag_s
    return -math.inf
