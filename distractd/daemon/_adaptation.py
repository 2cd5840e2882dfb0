"""Adaptation of a semi-supervised cohort model to each stream's driver (``[adaptation]``).

:class:`StreamAdaptation` keeps one stream's window rows — the model's features, raw, as float32,
one window per ``stride_s`` of driving, the newest ``max_windows`` — and says when a fit is due
(``after_s`` of driving with every model feature and at least ``min_windows`` kept, then every
``every_s``). :class:`Adapter` runs the fits one at a time, from a queue of at most
``queue_size`` fits, in the fit worker process (:mod:`~distractd.daemon._fitworker`: no fit
holds the daemon's interpreter lock or loads scikit-learn into it) with
:func:`~distractd.models.detectors.adapt_checked` — the implementation of the offline
``distractd adapt``, its held-back check included — and hands the finished ones back to the
loop, which swaps the stream's scorer between two iterations, unless the check found the refit
worse (refused: the stream keeps its scorer). The loop never waits for a fit: a full queue
refuses the stream, which tries again at its next kept window; one fit at a time with one BLAS
thread bounds the CPU to one core (the worker asks the OS for a lower priority, nice 10, where
allowed). The daemon's side of a fit is numpy only: rows out, the refit's arrays back.
"""

import collections
import logging
import math
import queue
import threading
import time

import numpy as np

from ..models import detectors
from ._fitworker import Worker, pack, refit, unpack

__all__ = ["StreamAdaptation", "Adapter", "Fit", "Adaptation"]

log = logging.getLogger("distractd.daemon")

class StreamAdaptation:
    """One stream's windows for adaptation, and its adapted scorer.

    Parameters
    ----------
    n_features : int
        The loaded model's features.
    options : dict
        The ``[adaptation]`` section.
    collect : bool
        Whether to keep rows: False for a model that cannot adapt (only the driving time is
        followed, to count the one fit it skips).

    Attributes
    ----------
    detector : Detector or None
        The stream's adapted model once a fit is swapped in; None while the loaded model scores it.
    adapted : dict or None
        The swapped-in fit as the state message publishes it: ``{"t": end of the newest window in
        the fit (stream s), "windows": windows in the fit}``.
    pending : bool
        A fit of the stream is queued or running.
    driving_s : float
        Seconds of stream time covered by windows with every model feature so far.
    """

    __slots__ = ("stride_s", "every_s", "min_windows", "rows", "n_rows", "t_last", "t_newest",
                 "driving_s", "slot", "due_s", "collect", "detector", "adapted", "pending")

    def __init__(self, n_features, options, collect):
        self.stride_s = options["stride_s"]
        self.every_s = options["every_s"]
        self.min_windows = options["min_windows"]
        self.collect = collect
        self.rows = np.empty((options["max_windows"] if collect else 0, n_features), np.float32)
        self.n_rows = 0            # rows kept so far; the ring's next slot is n_rows % capacity
        self.t_last = math.nan     # end (s) of the newest window with every feature
        self.t_newest = math.nan   # ... of the newest kept one
        self.driving_s = 0.0
        self.slot = -1.0           # stride slot of the newest kept window
        self.due_s = options["after_s"]
        self.detector = None
        self.adapted = None
        self.pending = False

    def add(self, X, t_end):
        """Note windows (the model's features, raw, shape (n, n_features); end times in s);
        return whether a fit is due now.

        Driving time grows by the forward steps between windows with every feature (a tracker
        clock reset adds nothing). One window per ``stride_s`` of driving is kept, as
        :func:`~distractd.models.detectors.thin_windows` thins a drive. A fit is due at a kept
        window once the driving reaches the due time, ``min_windows`` rows are kept and no fit of
        the stream is pending.
        """
        finite = np.isfinite(X).all(axis=1)
        if not finite.any():
            return False
        t = t_end[finite]
        steps = np.diff(t, prepend=t[0] if math.isnan(self.t_last) else self.t_last)
        driving = self.driving_s + np.cumsum(np.maximum(steps, 0.0))
        self.t_last, self.driving_s = float(t[-1]), float(driving[-1])
        if not self.collect:
            return self.driving_s >= self.due_s
        if self.stride_s > 0:
            slots = np.floor(driving / self.stride_s)
            keep = np.diff(slots, prepend=self.slot) != 0
            self.slot = float(slots[-1])
        else:
            keep = np.ones(len(t), dtype=bool)
        if not keep.any():
            return False
        kept = X[finite][keep][-len(self.rows):]
        self.rows[(self.n_rows + np.arange(len(kept))) % len(self.rows)] = kept
        self.n_rows += len(kept)
        self.t_newest = float(t[keep][-1])
        return not self.pending and self.driving_s >= self.due_s \
            and min(self.n_rows, len(self.rows)) >= self.min_windows

    def fit(self, stream, detector, model_path=None):
        """A fit of the kept rows (oldest first, as float64) adapting ``detector`` (loaded from
        ``model_path``)."""
        capacity = len(self.rows)
        n = min(self.n_rows, capacity)
        order = (self.n_rows - n + np.arange(n)) % capacity
        return Fit(stream, self, detector, self.rows[order].astype(np.float64), self.t_newest,
                   model_path)

    def submitted(self):
        """The stream's fit is queued: none other until it is back; the next is due ``every_s``
        of driving later (never with ``every_s`` = 0)."""
        self.pending = True
        self.due_s = self.driving_s + self.every_s if self.every_s > 0 else math.inf

    def stop(self):
        """No fit is due any more (the model cannot adapt)."""
        self.due_s = math.inf


class Fit:
    """One stream's fit: what it is fitted on and, once run, its outcome.

    Attributes
    ----------
    stream : str
    owner : StreamAdaptation
        The stream's adaptation when the fit was submitted (a result for another one is stale).
    base : Detector
        The loaded model it adapts.
    model_path : str or None
        The file ``base`` was loaded from (the fit worker loads it; None: ``base`` is the
        shipped model's).
    rows : ndarray of shape (n_windows, n_features)
        The stream's kept windows (dropped once the fit has run).
    n_windows : int
    t : float
        End (s) of the newest window in ``rows``.
    result : Detector or None
        The adapted model.
    check : dict or None
        The held-back check (:func:`~distractd.models.detectors.adapt_checked`): ``worse`` means
        the result must not be swapped in.
    spread : tuple of float or None
        Standard deviation of the published scores of ``rows`` under ``base`` and under
        ``result``.
    error : str or None
        Why the fit failed (one line).
    wall_s, cpu_s : float
        Wall and CPU time of the fit, in seconds.
    """

    __slots__ = ("stream", "owner", "base", "model_path", "rows", "n_windows", "t", "result",
                 "check", "spread", "error", "wall_s", "cpu_s")

    def __init__(self, stream, owner, base, rows, t, model_path=None):
        self.stream = stream
        self.owner = owner
        self.base = base
        self.model_path = model_path
        self.rows = rows
        self.n_windows = len(rows)
        self.t = t
        self.result = self.check = self.spread = None
        self.error = None
        self.wall_s = self.cpu_s = 0.0

    def run(self):
        """Fit in this process (:func:`~distractd.daemon._fitworker.refit`, seed 0), as the
        worker process does; never raises."""
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            self.result, self.check, self.spread = refit(self.base, self.rows)
        except Exception as exc:  # a fit that fails must never end the daemon: counted, logged
            self.error = f"{type(exc).__name__}: {exc}"
        self.wall_s = time.perf_counter() - wall
        self.cpu_s = time.thread_time() - cpu
        self.rows = None

    def run_in(self, worker):
        """Fit in the worker process (:class:`~distractd.daemon._fitworker.Worker`): the rows
        sent, the refit's arrays and operating point read back into a model built with numpy
        only; never raises."""
        wall = time.perf_counter()
        try:
            header = {"model": str(self.model_path or detectors.DEFAULT_MODEL_PATH),
                      "model_id": self.base.model_id, "seed": 0}
            reply, arrays = unpack(worker.call(pack(header, {"rows": self.rows})))
            self.cpu_s = float(reply["cpu_s"])
            self.error = reply["error"]
            if self.error is None:
                self.check, self.spread = reply["check"], tuple(reply["spread"])
                own = {name[len("adapted/"):]: value for name, value in arrays.items()}
                self.result = self.base.with_arrays(reply["params"], own, reply["score_scale"],
                                                    reply["score_offset"])
        except Exception as exc:  # the worker ended, or said something unreadable: counted
            self.error = f"{type(exc).__name__}: {exc}"
        self.wall_s = time.perf_counter() - wall
        self.rows = None


class Adapter:
    """Fits run one at a time in the fit worker process, from a bounded queue, by one thread of
    the daemon that only waits on the worker (sending rows, reading the result back).

    Parameters
    ----------
    queue_size : int
        Most fits waiting (``adaptation.queue_size``).
    """

    def __init__(self, queue_size):
        self._queue = queue.Queue(queue_size)
        self._done = collections.deque()
        self._thread = None
        self.worker = Worker()

    def submit(self, fit):
        """Queue a fit without waiting; False when the queue is full."""
        try:
            self._queue.put_nowait(fit)
        except queue.Full:
            return False
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="distractd-adapt",
                                             daemon=True)
            self._thread.start()
        return True

    def full(self):
        """Whether a fit submitted now would be refused (no copy of rows made for nothing)."""
        return self._queue.full()

    def finished(self):
        """The fits finished since the previous call, in order."""
        done = []
        while self._done:
            done.append(self._done.popleft())
        return done

    def cancel(self):
        """Drop the fits still waiting; return them."""
        dropped = []
        while True:
            try:
                fit = self._queue.get_nowait()
            except queue.Empty:
                return dropped
            if fit is not None:
                dropped.append(fit)

    def close(self, timeout_s=1.0):
        """Drop the waiting fits, end the worker process and stop the thread (waiting at most
        ``timeout_s`` for each; the thread is a daemon thread and does not hold the process)."""
        self.cancel()
        self.worker.close(timeout_s)
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout_s)

    def _work(self):
        while True:
            fit = self._queue.get()
            if fit is None:
                return
            fit.run_in(self.worker)
            self._done.append(fit)


class Adaptation:
    """Adaptation in the daemon: each new session's :class:`StreamAdaptation`, the collection of
    its windows, the fits submitted to and finished by the :class:`Adapter`, and the scorer of an
    adapted stream.

    Parameters
    ----------
    config : dict
        The daemon's configuration (``[adaptation]``).
    model : Model
        The loaded model, the one the streams adapt.
    streams : StreamTable
        The sessions it adapts (it attaches itself to the new ones).
    metrics : Metrics
    """

    def __init__(self, config, model, streams, metrics):
        self.streams = streams
        self.metrics = metrics
        self.adapter = Adapter(config["adaptation"]["queue_size"])
        self.options = self.model = None
        self.configure(config, model)
        streams.opened.append(self.attach)

    def configure(self, config, model):
        """Take a (re)loaded configuration and model. When either changes what adapting means
        (another model, other ``[adaptation]`` options), the sessions start their adaptation
        afresh (their adapted models belong to the old ones), the waiting fits are stale, and a
        model that cannot adapt is said once."""
        if self.model is not None and model.detector.model_id == self.model.detector.model_id \
                and config["adaptation"] == self.options:
            self.model = model
            return
        fresh = self.model is None
        self.options = config["adaptation"]
        self.model = model
        if not fresh:
            for inbox in self.streams.inboxes.values():
                self.attach(inbox.session)
            self.metrics.fits_skipped["stale"].inc(len(self.adapter.cancel()))
        if self.options["enabled"] and model.obstacle is not None:
            log.warning("adaptation.enabled, but %s: streams run unadapted", model.obstacle)
        elif self.options["enabled"]:   # its imports and warm-up done before the first fit
            self.adapter.worker.start(model.path)

    def attach(self, session):
        """Give a session its :class:`StreamAdaptation` (None with ``[adaptation]`` off)."""
        options = self.options
        session.adaptation = None if not options["enabled"] else \
            StreamAdaptation(len(self.model.columns), options, self.model.obstacle is None)

    def collect(self, session, windows):
        """Keep a session's windows for its adaptation; submit its fit when due (never waiting:
        a full queue refuses it, and it tries again at its next kept window)."""
        adaptation = session.adaptation
        if not adaptation.add(windows.X[:, self.model.columns], windows.t_end):
            return
        if self.model.obstacle is not None:
            adaptation.stop()
            self.metrics.fits_skipped["unsupported_model"].inc()
        elif not self.adapter.full() and self.adapter.submit(
                adaptation.fit(session.stream, self.model.detector, self.model.path)):
            adaptation.submitted()
        else:
            self.metrics.fits_skipped["queue_full"].inc()

    def swap_finished(self):
        """Swap in the fits the adaptation thread finished — between two batches, so a batch is
        scored by one model per stream — and count them; a fit whose stream ended or whose
        model was replaced meanwhile is stale."""
        metrics = self.metrics
        inboxes = self.streams.inboxes
        for fit in self.adapter.finished():
            metrics.fit_seconds.observe(fit.wall_s)
            metrics.fit_cpu.inc(fit.cpu_s)
            fit.owner.pending = False
            inbox = inboxes.get(fit.stream)
            if inbox is None or inbox.session.adaptation is not fit.owner:
                metrics.fits_skipped["stale"].inc()
            elif fit.error is not None:
                metrics.fits["failed"].inc()
                log.warning("adaptation: stream %s: the fit on %d windows failed, the stream keeps "
                            "its scorer: %s", fit.stream, fit.n_windows, fit.error)
            else:
                before, after = fit.spread
                if before > 0:
                    metrics.fit_spread.observe(after / before)
                check = fit.check
                if check["worse"]:
                    metrics.fits["refused"].inc()
                    log.info("adaptation: stream %s: the fit on %d windows refused, the stream "
                             "keeps its scorer: held-back G-mean %.3f -> %.3f on %d %s windows",
                             fit.stream, fit.n_windows, check["before"], check["after"],
                             check["windows"], check["on"])
                    continue
                fit.owner.detector = fit.result
                fit.owner.adapted = {"t": fit.t, "windows": fit.n_windows}
                metrics.fits["done"].inc()
                log.info("adaptation: stream %s: adapted on %d windows up to t=%.1f s (fit %.2f s, "
                         "held-back G-mean %.3f -> %.3f, score spread %.3f -> %.3f)", fit.stream,
                         fit.n_windows, fit.t, fit.wall_s, check["before"], check["after"],
                         before, after)

    def scorer(self, session):
        """The detector that scores a session: the model adapted to its stream when there is one
        and the model itself was chosen, else the sub-model chosen (None: none can)."""
        chosen = session.choice.detector
        adapted = None if session.adaptation is None else session.adaptation.detector
        if adapted is not None and chosen is self.model.detector:
            return adapted
        return chosen

    def close(self):
        """Stop the fit thread (:meth:`Adapter.close`)."""
        self.adapter.close()
