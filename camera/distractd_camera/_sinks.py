"""Where samples go: a CSV recording every distractd command reads, and the daemon's input.

Both use distractd's public contracts only, as any outside tracker does (this program runs in its
own environment, without the distractd package): distractd's CSV recording form, a header of
canonical field names and empty cells for missing values (README "Messages"), and the wire
protocol's map form, one sample per message ``[b"samples.<stream>", msgpack({"v": 1, ...})]`` on
a socket that connects to the daemon's input (docs/daemon.md "Wire protocol").
"""

import csv
import math

import msgpack
import zmq

__all__ = ["CsvWriter", "Publisher"]


class CsvWriter:
    """Rows of ``fields`` to a CSV file; NaN is written as an empty cell."""

    def __init__(self, path, fields):
        self._file = open(path, "w", newline="", encoding="utf-8")
        self._writer = csv.writer(self._file)
        self._writer.writerow(fields)
        self._fields = fields

    def write(self, row):
        self._writer.writerow(["" if math.isnan(row[name]) else repr(float(row[name]))
                               for name in self._fields])

    def close(self):
        self._file.close()


class Publisher:
    """Samples to a daemon's input (``endpoint``) as stream ``stream``, in the map form.

    Connects an XPUB socket and waits (up to ``timeout_s``) for the daemon's subscription before
    the first sample: a plain PUB would drop the first messages while the connection forms.
    """

    def __init__(self, endpoint, stream, timeout_s=30.0):
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.XPUB)
        self._socket.linger = 2000  # on close, up to 2 s to deliver what is still queued
        self._socket.connect(endpoint)
        if not self._socket.poll(int(timeout_s * 1000)):
            self.close()
            raise TimeoutError(f"{endpoint}: no distractd subscribed within {timeout_s:g} s")
        self._socket.recv()  # the daemon's subscription to the input topic
        self._topic = f"samples.{stream}".encode("ascii")

    def write(self, sample):
        message = {"v": 1, **{k: v for k, v in sample.items() if not math.isnan(v)}}
        self._socket.send_multipart([self._topic, msgpack.packb(message)])

    def close(self):
        self._socket.close()
        self._context.term()
