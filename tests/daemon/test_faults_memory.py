"""Memory after a stream-id flood: the sessions of expired streams leave every table of the daemon
(no reference to them remains). The daemon then trims the heap they used (issue 23, item 10; the
RSS figures before and after are in docs/results/robustness.md).
"""

import gc
import time
import weakref

import zmq

from distractd.daemon import Service
from distractd.pipeline.formats import encode_block
from distractd.simulators import simulate_drive

from .test_faults_stream import Running

N_STREAMS = 600


class TracedService(Service):
    """The daemon, keeping a weak reference to every session it opens (a listener of its stream
    table; the inbox holds the session, so a session that is gone has no inbox left either)."""

    opened = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.streams.opened.append(lambda session: self.opened.append(weakref.ref(session)))


def test_expired_sessions_leave_every_table():
    running = Running(TracedService, ["sessions.idle_timeout_s=1", "output.republish_s=0.2",
                                      "service.status_interval_s=0.2"])
    service = running.service
    registry = service.metrics.registry
    samples = simulate_drive(7, duration_s=12.0).samples   # a window completes: the full path
    with zmq.Context() as context:
        pub = context.socket(zmq.PUB)
        pub.linger = 5000
        pub.sndhwm = 0
        pub.connect(running.input)
        time.sleep(0.5)
        for k in range(N_STREAMS):
            pub.send_multipart(encode_block(f"flood-{k}", samples[::6], 0))
        pub.close()
    deadline = time.monotonic() + 120
    while registry.get_sample_value("distractd_streams_expired_total") < N_STREAMS \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)   # a status refresh after the last expiry
    assert registry.get_sample_value("distractd_streams_expired_total") == N_STREAMS
    assert registry.get_sample_value("distractd_active_streams") == 0
    assert service.streams.inboxes == {} and service.metrics.streams == ()
    assert running.stop() == 0
    gc.collect()
    assert len(TracedService.opened) == N_STREAMS
    assert sum(ref() is not None for ref in TracedService.opened) == 0
    assert sum(registry.get_sample_value("distractd_windows_classified_total", {"state": state})
               for state in ("attentive", "distracted", "unknown")) >= N_STREAMS
