"""The daemon: parts with their own state, and a short loop around the policy.

Per iteration, the loop reads the input sockets into the streams' inboxes (:class:`Inputs`, at
most ``service.poll_interval_s`` of waiting, ``service.max_batch_messages`` messages per socket),
feeds each inbox whose samples can complete a window to its session as one block
(:class:`StreamTable`), has the policy (:class:`Classifier`) score the windows completed by *all*
sessions in one batched call and publish their state and event messages together
(:class:`Output`), swaps in finished adaptation fits (:class:`Adaptation`), then does the periodic
work (republish latest states, expire idle sessions, systemd STATUS and WATCHDOG, metric
snapshots, a finished reload); after an iteration that read input, it rests until
``service.coalesce_s`` has passed since the wake-up, so that the next one reads the messages of the
interval at once. Signals only set flags: SIGHUP reloads configuration and model in a thread
(:class:`Reloader`), swapped in between iterations; SIGTERM/SIGINT drain the input queue (for at
most ``service.drain_timeout_s``), flush every stream and stop. An unexpected exception in one
stream's processing is caught at its stage, counted, and ends that stream's session only; the
process ends for faults of its own.

The parts know each other only as constructor arguments; a reload gives each part that follows
the configuration or the model the new ones (``configure(config, model)``).
"""

import logging
import os
import signal
import sys
import time

import zmq
from prometheus_client import CollectorRegistry
from threadpoolctl import threadpool_limits

from .._errors import ConfigError
from ._adaptation import Adaptation
from ._classifier import Classifier
from ._config import load_config
from ._inputs import Inputs
from ._lsl import LslBridge, LslStates
from ._metrics import Metrics, MetricsServer
from ._model import Model
from ._output import Output
from ._profiles import Profiles
from ._reload import Reloader
from ._sockets import Sockets
from ._status import Rates, Status
from ._streams import StreamTable
from ._systemd import Notifier

__all__ = ["Service", "run"]

log = logging.getLogger("distractd.daemon")


class Service:
    """The running daemon.

    Parameters
    ----------
    config : dict
        A validated configuration (:func:`~distractd.daemon.load_config`).
    config_path : str, optional
        The TOML file re-read on SIGHUP (with the same ``overrides``).
    overrides : sequence of str
        ``section.key=value`` overrides re-applied on reload.
    registry : CollectorRegistry, optional
        Metrics registry (a fresh one by default).
    notifier : Notifier, optional
        systemd notification (from the environment by default).

    Attributes
    ----------
    streams : StreamTable
        The sessions and inboxes of the streams.
    inputs : Inputs
        The input sockets, read into ``streams``.
    classifier : Classifier
        The policy: windows to published states and events.
    output : Output
        The output socket and LSL outlets.
    adaptation : Adaptation
        Each stream's adaptation and the fit thread.
    profiles : Profiles
        The driver profiles: loaded when a stream names its driver, written when it ends.
    reloader : Reloader
        The reload of configuration and model.
    parts : tuple
        The parts given a reloaded configuration and model after the stream table.
    """

    def __init__(self, config, config_path=None, overrides=(), registry=None, notifier=None):
        self.config = config
        self.metrics = metrics = Metrics(registry or CollectorRegistry(),
                                         per_stream=config["metrics"]["per_stream"])
        self.notifier = notifier or Notifier()
        self.model = model = Model(config["model"]["path"], config["model"]["max_bytes"])
        metrics.set_model(model.detector.model_id, model.detector.kind)
        self.rates = Rates(time.monotonic())
        self.streams = StreamTable(config, model, metrics)
        self.output = Output(metrics)
        self.streams.dropped.append(self.output.drop)
        self.adaptation = Adaptation(config, model, self.streams, metrics)
        self.profiles = Profiles(config, model, self.streams, metrics)
        self.classifier = Classifier(model, self.streams, self.output, self.adaptation, metrics,
                                     self.rates)
        self.inputs = Inputs(config, self.streams, metrics, self.rates)
        self.reloader = Reloader(config_path, overrides, self.notifier, metrics)
        self.status = Status(self.streams, metrics, self.notifier, self.rates)
        self.parts = (self.adaptation, self.profiles, self.classifier, self.inputs)
        _set_log_level(config)
        self._stop = False
        self.http_server = None

    def request_stop(self, *_):
        """Ask the loop to drain and stop (signal-safe)."""
        self._stop = True

    def request_reload(self, *_):
        """Ask the loop to reload configuration and model (signal-safe)."""
        self.reloader.request()

    def run(self, install_signals=True):
        """Run until asked to stop; return the exit status (0 after a clean drain)."""
        if install_signals:
            signal.signal(signal.SIGTERM, self.request_stop)
            signal.signal(signal.SIGINT, self.request_stop)
            signal.signal(signal.SIGHUP, self.request_reload)
        metrics = self.config["metrics"]
        if metrics["enabled"]:
            try:
                self.http_server = MetricsServer(self.metrics.registry, metrics["address"],
                                                 metrics["port"], metrics["cache_s"]).start()
            except OSError as exc:
                raise ConfigError(f"metrics.address:metrics.port {metrics['address']}:"
                                  f"{metrics['port']} cannot be bound: {exc.strerror}") from None
        context = zmq.Context()
        blas = threadpool_limits(limits=1)  # one loop thread; BLAS threads only contend
        try:
            with Sockets(context, self.config, self.metrics) as (sub, pub, pupil, lsl):
                self.output.pub = pub
                self.inputs.open(sub, pupil, lsl)
                if self.config["lsl"]["outlets"]:
                    self.output.lsl = LslStates(self.model.pipeline_config.hop_s)
                bridge = None
                if lsl is not None:
                    bridge = LslBridge(context, self.config["lsl"],
                                       self.config["input"]["max_block_samples"],
                                       self.streams.gaze_frames, self.metrics.lsl_streams)
                    if self.output.lsl is not None:  # states of LSL streams: stamped in its clock
                        self.output.lsl.lsl_clock = bridge.opened
                    bridge.start()
                try:
                    self._loop()
                finally:
                    if bridge is not None:
                        bridge.stop()
        finally:
            self.profiles.close()
            self.adaptation.close()
            blas.restore_original_limits()
            context.term()
            if self.http_server is not None:
                self.http_server.close()
        return 0

    def _loop(self):
        """Until a stop has drained the input: read, feed the due inboxes, classify and publish
        (the policy), then the periodic work; at the end, flush every stream."""
        now = time.monotonic()
        self.rates.restart(now)
        due = _Due(now)
        drain_until = None
        self.notifier.ready(self.status.text(self.model.detector.model_id, now))
        log.info("ready: model %s (%s); %s", self.model.detector.model_id,
                 self.model.detector.kind, "; ".join(self.endpoints()))
        while True:
            service = self.config["service"]
            stopping = self._stop
            if stopping and drain_until is None:
                drain_until = self._start_drain(service["drain_timeout_s"])
            touched, n_read, woke = self.inputs.read(service["poll_interval_s"] * 1e3, stopping)
            if touched:
                pending = self.streams.ingest(touched, woke)
                if pending:
                    self.classifier.classify(pending)
            self.adaptation.swap_finished()
            now = time.monotonic()
            if stopping and (n_read == 0 or now >= drain_until):
                break
            self._periodic(now, due, stopping)
            if n_read and not stopping and n_read < service["max_batch_messages"]:
                _coalesce(woke + service["coalesce_s"])
        self._finish(now, still_reading=n_read > 0)

    def _periodic(self, now, due, stopping):
        """The work whose time has come: republish the latest states and end the idle streams
        (every ``output.republish_s``), ping the watchdog, report the status (every
        ``service.status_interval_s``), swap in a finished reload."""
        if now >= due.republish_s:
            self.output.discard_subscriptions()
            self.output.republish(self.streams.inboxes.values(), now)
            expired = self.streams.expire(now)
            self.classifier.end(expired)
            self.streams.release(expired)
            due.republish_s = now + self.config["output"]["republish_s"]
        if self.notifier.watchdog_s and now >= due.watchdog_s:
            self.notifier.watchdog()
            due.watchdog_s = now + self.notifier.watchdog_s / 3
        if now >= due.status_s:
            self.status.report(self.model.detector.model_id, now)
            self.inputs.flush_log(now)
            self.streams.fault_log.flush(now)
            due.status_s = now + self.config["service"]["status_interval_s"]
        loaded = self.reloader.poll(self.model.detector.model_id, stopping)
        if loaded is not None:
            self._swap(*loaded)

    def _start_drain(self, timeout_s):
        """Say that the daemon stops; return when the drain of the input must end."""
        self.notifier.stopping(f"draining input for at most {timeout_s:g} s")
        return time.monotonic() + timeout_s

    def _finish(self, now, still_reading):
        """After the drain: say what was left unread and held back, flush every stream."""
        if still_reading:
            log.warning("input still arriving after service.drain_timeout_s=%g s: stopped "
                        "reading it", self.config["service"]["drain_timeout_s"])
        self.inputs.flush_log(now, force=True)
        self.streams.fault_log.flush(now, force=True)
        n_flushed = self.classifier.end_all(list(self.streams.inboxes.values()))
        status = f"stopping: {n_flushed} streams flushed"
        self.notifier.status(status)
        log.info(status)

    def _swap(self, config, model):
        """Swap in a reloaded configuration and model (:meth:`Reloader.poll`), between two
        iterations.

        Socket endpoints, metrics address, security settings and ``adaptation.queue_size`` take
        effect only at restart. Sessions restart when the model's window settings, the
        smoothing or ``[sessions]`` change (:meth:`StreamTable.configure`). Streams adapted to the
        old model (or under other ``[adaptation]`` options) drop their adapted model and start
        collecting again; waiting fits are stale (:meth:`Adaptation.configure`).
        """
        self.config = config
        self.model = model
        restart = self.streams.configure(config, model)
        for part in self.parts:
            part.configure(config, model)
        _set_log_level(config)
        self.metrics.set_model(model.detector.model_id, model.detector.kind)
        self.metrics.reload_ok.inc()
        log.info("reloaded: model %s (%s)%s", model.detector.model_id, model.detector.kind,
                 ", sessions restarted" if restart else "")
        self.notifier.ready(f"reloaded model {model.detector.model_id}")

    def endpoints(self):
        """Every endpoint the daemon serves or reads, as the READY log line names them."""
        config = self.config
        named = [f"input {endpoint} (bind)" for endpoint in config["input"]["bind"]]
        named += [f"input {endpoint} (connect)" for endpoint in config["input"]["connect"]]
        if self.inputs.pupil is not None:
            named.append(f"input Pupil Remote {config['pupil']['remote']} "
                         f"(stream {config['pupil']['stream']})")
        named += [f"input LSL {predicate}" for predicate in config["lsl"]["inlets"]]
        named.append(f"output {config['output']['bind']}")
        if config["lsl"]["outlets"]:
            named.append("output LSL outlets")
        if self.http_server is not None:
            named.append(f"metrics http://{config['metrics']['address']}:"
                         f"{self.http_server.port}/metrics")
        return named


class _Due:
    """When the periodic work is next due (monotonic s)."""

    __slots__ = ("republish_s", "watchdog_s", "status_s")

    def __init__(self, now_s):
        self.republish_s = self.watchdog_s = self.status_s = now_s


def _set_log_level(config):
    logging.getLogger("distractd").setLevel(config["service"]["log_level"].upper())


def _coalesce(until_s):
    """Rest until ``until_s`` (monotonic s) after a wake-up that read input, so that the next
    wake-up finds the messages of the whole interval queued: one poll, one drain ending in
    ``zmq.Again`` and one classification call for all of them instead of one per message or two
    (``service.coalesce_s``; a quiet input is still read at once, and a drain that filled
    ``service.max_batch_messages`` does not rest, see :meth:`Service._loop`)."""
    rest_s = until_s - time.monotonic()
    if rest_s > 0:
        time.sleep(rest_s)


def run(config_path=None, overrides=()):
    """Load the configuration and run the daemon until SIGTERM; then end the process with its
    exit status.

    After a clean stop every socket, connection and thread of the daemon is closed, and the
    process ends at once (``os._exit``, logs flushed): the interpreter's finalisation, freeing
    the compiled kernels' and the sessions' objects one by one, took 2-6 s of the shutdown on a
    loaded 2-vCPU machine (with 300 streams), beyond what ``service.drain_timeout_s`` + 5 s allows.
    """
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_config(config_path, overrides)
    status = Service(config, config_path, overrides).run()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
