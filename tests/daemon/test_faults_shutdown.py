"""Shutdown is bounded: SIGTERM to exit within ``service.drain_timeout_s`` + 5 s under a blasting
publisher (the daemon as a real subprocess).

The bound is the contract with the unit's ``TimeoutStopSec``: drain at most
``service.drain_timeout_s``, flush the streams for at most 1 s, then end the process at once. The
interpreter's own finalisation used to take 2-6 s more, and the exit came 7-11 s after the drain.
"""

import signal
import time

from .test_lifecycle import blast, stop

DRAIN_S = 1.0


def test_sigterm_under_a_blasting_publisher_exits_within_the_drain_timeout_plus_5_s(
        start_daemon):
    daemon = start_daemon([f"service.drain_timeout_s={DRAIN_S}", "service.log_level=info"])
    publisher = blast(daemon, n_streams=300)
    try:
        daemon.collect(lambda m: len({name for _, name, _ in m}) >= 300, timeout_s=120)
        signalled = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        status = daemon.process.wait(timeout=120)
        took_s = time.monotonic() - signalled
    finally:
        stop(publisher)
    daemon.close()
    assert status == 0, daemon.log_text[-2000:]
    assert took_s <= DRAIN_S + 5.0, (took_s, daemon.log_text[-2000:])
    assert "streams flushed" in daemon.log_text
    assert "Traceback" not in daemon.log_text
