"""Reload of configuration and model on SIGHUP, off the loop's thread.

:class:`Reloader` reads both in a :class:`_Reload` thread once asked (:meth:`Reloader.request`,
signal-safe), so that a slow disk or a big model never stops the loop (nor its watchdog pings);
once the thread has ended, :meth:`Reloader.poll` hands the loop what it loaded, to be swapped in
between two iterations, or keeps the old ones and counts a failure.
"""

import logging
import threading

from .._errors import DistractdError, ModelError
from ._config import load_config
from ._model import Model

__all__ = ["Reloader"]

log = logging.getLogger("distractd.daemon")


class Reloader:
    """Reloads configuration and model when asked, in a thread.

    Parameters
    ----------
    config_path : str or None
        The TOML file re-read (None: the defaults).
    overrides : sequence of str
        ``section.key=value`` overrides re-applied on reload.
    notifier : Notifier
    metrics : Metrics
    """

    def __init__(self, config_path, overrides, notifier, metrics):
        self.config_path = config_path
        self.overrides = tuple(overrides)
        self.notifier = notifier
        self.metrics = metrics
        self.requested = False
        self.loading = None

    def request(self, *_):
        """Ask for a reload (signal-safe: sets a flag the loop reads)."""
        self.requested = True

    def poll(self, model_id, stopping=False):
        """Start a requested reload (not while ``stopping``) and collect a finished one.

        Returns
        -------
        (dict, Model) or None
            The configuration and model a finished reload loaded, to be swapped in; None while
            none is, or when it failed (then the failure is counted and logged, keeping the
            model ``model_id``).
        """
        if self.requested and not stopping and self.loading is None:
            self.requested = False
            self.notifier.reloading()
            self.loading = _Reload(self._load)
            self.loading.start()
        if self.loading is None or self.loading.is_alive():
            return None
        loading, self.loading = self.loading, None
        if loading.error is not None:
            self.metrics.reload_failed.inc()
            log.error("reload rejected, keeping model %s: %s", model_id, loading.error)
            self.notifier.ready(f"reload rejected: {loading.error}")
            return None
        return loading.result

    def _load(self):
        config = load_config(self.config_path, self.overrides) if self.config_path \
            else load_config(overrides=self.overrides)
        return config, Model(config["model"]["path"], config["model"]["max_bytes"])


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
