"""Reload of configuration and model on SIGHUP, off the loop's thread.

:meth:`Reloading.start_reload` reads both in a :class:`_Reload` thread, so that a slow disk or a
big model never stops the loop (nor its watchdog pings); once the thread has ended, the loop calls
:meth:`Reloading.finish_reload`, which swaps them in between two iterations, or keeps the old
ones and counts a failure.
"""

import logging
import threading

from .._errors import DistractdError, ModelError
from ._config import load_config
from ._model import Model

__all__ = ["Reloading"]

log = logging.getLogger("distractd.daemon")


class Reloading:
    """The reload of :class:`~distractd.daemon.Service` (a part of it: it works on the service's
    configuration, model, stream table and metrics)."""

    def start_reload(self):
        """Re-read configuration and model in a :class:`_Reload` thread, so that a slow disk or
        a big model never stops the loop (nor its watchdog pings); return the thread."""
        self.notifier.reloading()
        loading = _Reload(self._load)
        loading.start()
        return loading

    def _load(self):
        config = load_config(self.config_path, self.overrides) if self.config_path \
            else load_config(overrides=self.overrides)
        return config, Model(config["model"]["path"], config["model"]["max_bytes"],
                             config["adaptation"]["enabled"])

    def finish_reload(self, loading):
        """Swap in what a finished :class:`_Reload` loaded; on any error keep both old ones and
        count a failure. Return whether it was swapped.

        Socket endpoints, metrics address, security settings and ``adaptation.queue_size`` take
        effect only at restart. Sessions restart when the model's window settings or the
        smoothing change. Streams adapted to the old model (or under other ``[adaptation]``
        options) drop their adapted model and start collecting again; waiting fits are stale.
        """
        if loading.error is not None:
            self.metrics.reload_failed.inc()
            log.error("reload rejected, keeping model %s: %s", self.model.detector.model_id,
                      loading.error)
            self.notifier.ready(f"reload rejected: {loading.error}")
            return False
        config, model = loading.result
        restart = (model.pipeline_config != self.model.pipeline_config
                   or config["smoothing"] != self.config["smoothing"]
                   or config["sessions"] != self.config["sessions"])
        swapped = model.detector.model_id != self.model.detector.model_id
        readapt = swapped or config["adaptation"] != self.config["adaptation"]
        self.model = model
        self._apply(config)
        if restart:
            self.inboxes.clear()
            self.metrics.active_streams.set(0)
        elif swapped:  # a new model may need fields the old one did not
            for inbox in self.inboxes.values():
                inbox.session.recheck_fields()
        if readapt:  # adapted models belong to the old model (or options)
            for inbox in self.inboxes.values():
                inbox.session.adaptation = self._stream_adaptation()
            self.metrics.fits_skipped["stale"].inc(len(self.adapter.cancel()))
            self._check_adaptation()
        self.metrics.set_model(model.detector.model_id, model.detector.kind)
        self.metrics.reload_ok.inc()
        log.info("reloaded: model %s (%s)%s", model.detector.model_id, model.detector.kind,
                 ", sessions restarted" if restart else "")
        self.notifier.ready(f"reloaded model {model.detector.model_id}")
        return True


class _Reload(threading.Thread):
    """Runs ``load()`` once; then :attr:`result` holds its value or :attr:`error` a
    :class:`~distractd.DistractdError` saying why it failed."""

    def __init__(self, load):
        super().__init__(name="distractd-reload", daemon=True)
        self.load = load
        self.result = None
        self.error = None

    def run(self):
        try:
            self.result = self.load()
        except DistractdError as exc:
            self.error = exc
        except Exception as exc:  # a hostile file must never end the daemon: refused, counted
            self.error = ModelError(f"{type(exc).__name__}: {exc}")
