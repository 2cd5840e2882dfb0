"""The daemon's periodic snapshot: metric gauges, systemd STATUS and the rates behind them."""

__all__ = ["Rates", "Status"]


class Rates:
    """Samples received and states published since :attr:`since_s` (monotonic s)."""

    def __init__(self, now_s):
        self.restart(now_s)

    def restart(self, now_s):
        self.since_s = now_s
        self.samples = 0
        self.states = 0


class Status:
    """What the daemon says about itself every ``service.status_interval_s``.

    Parameters
    ----------
    streams : StreamTable
    metrics : Metrics
    notifier : Notifier
    rates : Rates
    """

    def __init__(self, streams, metrics, notifier, rates):
        self.streams = streams
        self.metrics = metrics
        self.notifier = notifier
        self.rates = rates

    def report(self, model_id, now):
        """The snapshot: metric gauges and systemd STATUS; the rates restart."""
        inboxes = self.streams.inboxes
        for inbox in inboxes.values():
            self.streams.count_rejections(inbox.session)
        metrics = self.metrics
        metrics.streams = tuple((stream, inbox.session.processor.rate_hz)
                                for stream, inbox in inboxes.items())
        metrics.active_streams.set(len(inboxes))
        metrics.input_wall_rate.set(self.rates.samples / max(now - self.rates.since_s, 1e-9))
        metrics.loop_status.set_to_current_time()
        metrics.adapted_streams.set(sum(
            inbox.session.adaptation is not None
            and inbox.session.adaptation.detector is not None
            for inbox in inboxes.values()))
        self.notifier.status(self.text(model_id, now))
        self.rates.restart(now)

    def text(self, model_id, now):
        """``12 streams, 720 samples/s in, 24.0 states/s out, model <id>``."""
        elapsed = max(now - self.rates.since_s, 1e-9)
        return (f"{len(self.streams.inboxes)} streams, {self.rates.samples / elapsed:.0f} "
                f"samples/s in, {self.rates.states / elapsed:.1f} states/s out, model {model_id}")
