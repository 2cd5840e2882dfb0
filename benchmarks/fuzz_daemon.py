"""Fuzz the real daemon: malformed messages of every kind beside a good stream, with an oracle.

``distractd run`` runs as a subprocess on free loopback ports with the shipped model. One thread
replays a simulated drive (stream ``good``, block form) at ``--speed``; meanwhile this process sends
``--messages`` malformed or hostile messages drawn uniformly from :data:`KINDS` (type confusion in
every field of both forms, truncated and random msgpack, deep nesting, huge containers, odd topics,
single and extra frames, forged ``seq``, absurd times, a stream-id flood, IEEE 754 extremes
(:data:`FLOAT_EXTREMES`) in every number slot and text beyond ASCII (:data:`UNICODE`) in stream ids,
field names, keys, extra frames and every string or number slot), pacing itself on the
daemon's received count so nothing is lost in queues. Then it sends payloads over ZeroMQ's own
bound (4 x ``input.max_message_bytes``) on separate connections, which ZeroMQ drops.

Oracle (printed as one JSON object; ``ok`` is their conjunction):

- ``crashes``: the daemon is alive throughout and exits 0 on SIGTERM;
- ``hangs``: it takes every message within 600 s of its sending (a wait that times out ends the
  run with ``hangs`` 1);
- ``counts_match``: ``distractd_messages_received_total`` equals every message sent, each
  ``distractd_messages_rejected_total{reason}`` equals the messages of the kinds expected under
  that reason, ``distractd_seq_resets_total`` the forged sequence numbers, no message is counted
  lost, and ``distractd_connections_closed_total{socket="input"}`` grows by exactly the dropped
  connections;
- ``stream_errors``: ``distractd_stream_errors_total`` stays 0 (no stage of any stream raised);
- ``good_stream_identical``: the good stream's published states (time, window, state, score,
  quality) equal the batch prediction of the same drive (``predict_windows`` with the daemon's
  decision rule), as for a clean run.

Run: ``.venv/bin/python benchmarks/fuzz_daemon.py [--messages 1000000] [--seed 0]``.
"""

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import msgpack
import numpy as np
import zmq
from prometheus_client.parser import text_string_to_metric_families

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_windows
from distractd.pipeline.formats import FIELDS, N_FIELDS, STATE_NAMES, decode_output, encode_block
from distractd.simulators import NotifyReceiver, free_port, replay, simulate_drive

MAX_MESSAGE_BYTES = 65536
MAX_BLOCK_SAMPLES = 64
VALID_STREAMS = ("fz-extra", "fz-seq", "fz-time", "fz-float", "fz-fblock", "fz-uni")
"""Streams of the accepted hostile kinds; each gets its session before the flood fills the table."""

FLOAT_EXTREMES = (1.7976931348623157e308, -1.7976931348623157e308, 1e308, -1e308, 9e307, -9e307,
                  1e300, -1e300, float("inf"), -float("inf"), float("nan"), 5e-324, -5e-324,
                  2.2250738585072014e-308, 1e-310, -0.0, 0.0, 2.0**63, 1e18)
"""IEEE 754 doubles at and near the edges: the largest, ±9e307 (whose quotient by a hop
overflows), infinities, NaN, subnormals, the smallest normal, signed zeros."""

UNICODE = ("é", "²", "١٢", "流", "😀", "\u200b", "\u202e", "t\u0301", "Ａ", "ß", "ǅ", "\ufeff",
           "t\u0000", "Ω" * 200)
"""Text beyond ASCII: accents, superscript and Arabic-Indic digits, CJK, emoji, zero-width and
bidirectional controls, a combining accent, full-width letters, a BOM, an embedded NUL, a long
string."""

_BLOCK_SEQ = iter(range(1, 2**62))
"""Sequence numbers of the accepted ``fz-fblock`` stream (its first message is a map)."""

_ODD = [None, True, False, 1.5, -7, 2**64 - 1, "x", b"\x00bin", [], [1.0], {}, {"t": 1.0}]
"""Values of every msgpack type, for type confusion."""


def _pick(rng, values):
    return values[int(rng.integers(len(values)))]


def _map(rng, **fields):
    return {"v": 1, "t": float(rng.uniform(0, 100)), "gaze_r_yaw": 0.01, **fields}


def _block(rng, **fields):
    n = int(rng.integers(1, 4))
    return {"v": 1, "seq": int(rng.integers(0, 1000)), "fields": ["t", "head_x"], "dtype": "<f8",
            "data": rng.random((n, 2)).tobytes(), **fields}


def _packed(message):
    return msgpack.packb(message, use_bin_type=True)


def _either(rng, **fields):
    return _map(rng, **fields) if rng.integers(2) else _block(rng, **fields)


def _not_number(rng):
    return _pick(rng, [None, True, "x", b"\x00", [], [1.0], {}, {"a": 1}, *UNICODE][1:])


def _extreme_block(rng):
    """A block of accepted stream ``fz-fblock``: its next ``seq``, times and values drawn from
    :data:`FLOAT_EXTREMES` and ordinary numbers."""
    n = int(rng.integers(1, 5))
    names = ["t", *(FIELDS[k] for k in rng.choice(np.arange(1, N_FIELDS),
                                                    size=int(rng.integers(1, 4)), replace=False))]
    values = np.array(FLOAT_EXTREMES + (0.5, 1.0, 100.0))[rng.integers(0, len(FLOAT_EXTREMES) + 3,
                                                                       size=(n, len(names)))]
    return {"v": 1, "seq": next(_BLOCK_SEQ), "fields": names, "dtype": "<f8",
            "data": values.tobytes()}


def _invalid_utf8_key():
    """A map whose key is a msgpack str that is not UTF-8."""
    return b"\x83\xa1v\x01\xa1t\xcb" + np.float64(1.0).tobytes()[::-1] + b"\xa2\xff\xfe\x01"


KINDS = {
    # kind: (expected reason or None for accepted, maker(rng, i) -> frames)
    "topic_empty_id": ("bad_topic", lambda rng, i: [b"samples.", _packed(_map(rng))]),
    "topic_odd_bytes": ("bad_topic", lambda rng, i: [
        b"samples." + bytes([0x20 + int(rng.integers(0, 8))]) + rng.bytes(int(rng.integers(0, 9))),
        _packed(_map(rng))]),
    "topic_too_long": ("bad_topic", lambda rng, i: [b"samples." + b"a" * 129, _packed(_map(rng))]),
    "single_frame": ("bad_topic", lambda rng, i: [b"samples.fz-one"]),
    "payload_over_bound": ("oversized", lambda rng, i: [
        b"samples.fz-big", b"\x00" * (MAX_MESSAGE_BYTES + 1 + int(rng.integers(0, 4000)))]),
    "block_too_many_rows": ("oversized", lambda rng, i: [b"samples.fz-rows", _packed(
        {**_block(rng), "fields": ["t"], "data": np.zeros(MAX_BLOCK_SAMPLES + 1).tobytes()})]),
    "random_bytes": ("undecodable", lambda rng, i: [
        b"samples.fz-rand", b"\xc1" + rng.bytes(int(rng.integers(0, 64)))]),
    "truncated_msgpack": ("undecodable", lambda rng, i: [b"samples.fz-trunc", (
        lambda p: p[:int(rng.integers(0, len(p)))])(_packed(_either(rng)))]),
    "trailing_bytes": ("undecodable", lambda rng, i: [
        b"samples.fz-trail", _packed(_either(rng)) + b"\x01"]),
    "deep_nesting": ("undecodable", lambda rng, i: [
        b"samples.fz-deep", b"\x82\xa1v\x01\xa1t" + b"\x91" * 5000 + b"\x01"]),
    "huge_container": ("undecodable", lambda rng, i: [b"samples.fz-huge", _pick(rng, [
        b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff",
        b"\xc6\xff\xff\xff\xff", _packed({str(k): k for k in range(300)}),
        _packed({"v": 1, "t": 1.0, "x": list(range(5000))})])]),
    "not_a_map": ("not_a_map", lambda rng, i: [b"samples.fz-list", _packed(_pick(rng, [
        [1.0, 2.0], 7, "v", None, b"\x01", 1.5, True]))]),
    "version_confusion": ("unknown_version", lambda rng, i: [b"samples.fz-v", _packed(
        {**_either(rng), "v": _pick(rng, [2, 0, "1", True, 1.0, [1], {"v": 1}, None, b"1"])})]),
    "map_missing_t": ("missing_t", lambda rng, i: [b"samples.fz-not", _packed(_pick(rng, [
        {"v": 1, "gaze_r_yaw": 0.1}, {"v": 1, "t": None}, {"v": 1}]))]),
    "map_t_type": ("wrong_type", lambda rng, i: [
        b"samples.fz-t", _packed(_map(rng, t=_not_number(rng)))]),
    "map_field_type": ("wrong_type", lambda rng, i: [b"samples.fz-f", _packed(
        _map(rng, **{FIELDS[int(rng.integers(1, N_FIELDS))]: _not_number(rng)}))]),
    "seq_type": ("wrong_type", lambda rng, i: [b"samples.fz-s", _packed(_either(
        rng, seq=_pick(rng, [1.5, "1", True, [], {}, -1, 2**64 - 1, b"\x01"])))]),
    "block_without_seq": ("bad_block", lambda rng, i: [b"samples.fz-b", _packed(
        {k: v for k, v in _block(rng).items() if k != "seq"})]),
    "block_dtype_type": ("wrong_type", lambda rng, i: [b"samples.fz-b", _packed(
        _block(rng, dtype=_pick(rng, [["<f8"], {"<f8": 1}, 8, None, b"<f8", 1.5, True])))]),
    "block_dtype_unknown": ("bad_block", lambda rng, i: [b"samples.fz-b", _packed(
        _block(rng, dtype=_pick(rng, ["<i2", ">f8", "float64", "", "<f8\x00"])))]),
    "block_fields_type": ("wrong_type", lambda rng, i: [b"samples.fz-b", _packed(_block(
        rng, fields=_pick(rng, ["t", {"t": 0}, 3, None, [1, 2], ["t", None], [["t"]], b"t"])))]),
    "block_fields_bad": ("bad_block", lambda rng, i: [b"samples.fz-b", _packed(_block(
        rng, fields=_pick(rng, [[], ["t", "nope"], ["t", "t"], ["head_x", "head_y"]])))]),
    "block_data_type": ("wrong_type", lambda rng, i: [b"samples.fz-b", _packed(
        _block(rng, data=_pick(rng, ["abcdefgh" * 2, [1.0, 2.0], 16, None, {"a": 1}, 1.5])))]),
    "block_data_ragged": ("bad_block", lambda rng, i: [b"samples.fz-b", _packed(
        _block(rng, data=rng.bytes(int(rng.integers(1, 16)) * 16 + int(rng.integers(1, 16)))))]),
    "extra_frames": (None, lambda rng, i: [b"samples.fz-extra", _packed(_map(rng)),
                                           *[rng.bytes(8)] * int(rng.integers(1, 4))]),
    "forged_seq": ("seq_reset", lambda rng, i: [b"samples.fz-seq", _packed(
        _block(rng, seq=int(rng.integers(0, 2**63 - 1))))]),
    "absurd_times": (None, lambda rng, i: [b"samples.fz-time", _packed(_map(rng, t=_pick(rng, [
        *FLOAT_EXTREMES, -5.0, 2**63, 2**64 - 1, -2**63])))]),
    "extreme_values": (None, lambda rng, i: [b"samples.fz-float", _packed(_map(rng, **{
        FIELDS[k]: _pick(rng, FLOAT_EXTREMES)
        for k in rng.choice(np.arange(1, N_FIELDS), size=int(rng.integers(1, 6)), replace=False)
    }))]),
    "extreme_block": (None, lambda rng, i: [b"samples.fz-fblock", _packed(_extreme_block(rng))]),
    "extreme_seq": ("wrong_type", lambda rng, i: [b"samples.fz-s", _packed(_either(
        rng, seq=_pick(rng, [x for x in FLOAT_EXTREMES] + [2**63, -2**63])))]),
    "extreme_version": ("unknown_version", lambda rng, i: [b"samples.fz-v", _packed(
        {**_either(rng), "v": _pick(rng, FLOAT_EXTREMES)})]),
    "unicode_topic": ("bad_topic", lambda rng, i: [
        ("samples." + _pick(rng, UNICODE)[:100]).encode(),
        _packed(_map(rng))]),
    "unicode_values": ("wrong_type", lambda rng, i: [b"samples.fz-u", _packed(_pick(rng, [
        _map(rng, **{FIELDS[int(rng.integers(1, N_FIELDS))]: _pick(rng, UNICODE)}),
        _map(rng, t=_pick(rng, UNICODE)), _either(rng, seq=_pick(rng, UNICODE)),
        _block(rng, fields=["t", 7, _pick(rng, UNICODE)])]))]),
    "unicode_version": ("unknown_version", lambda rng, i: [b"samples.fz-u", _packed(
        {**_either(rng), "v": _pick(rng, UNICODE)})]),
    "unicode_block": ("bad_block", lambda rng, i: [b"samples.fz-u", _packed(_pick(rng, [
        _block(rng, fields=["t", _pick(rng, UNICODE)]),
        _block(rng, fields=["t", "head_x" + _pick(rng, UNICODE)]),
        _block(rng, dtype="<f" + _pick(rng, ["８", "٨", "8\u200b"]))]))]),
    "unicode_keys": (None, lambda rng, i: [b"samples.fz-uni", _packed(
        {**_map(rng), **{_pick(rng, UNICODE): _pick(rng, [1.0, _pick(rng, UNICODE), None])
                         for _ in range(int(rng.integers(1, 4)))}}),
        *[_pick(rng, UNICODE).encode()] * int(rng.integers(0, 3))]),
    "invalid_utf8": ("undecodable", lambda rng, i: [b"samples.fz-u", _invalid_utf8_key()]),
    "stream_flood": ("flood", lambda rng, i: [
        f"samples.fz-flood-{i}".encode(), _packed(_map(rng))]),
}
"""Every hostile kind with its expected accounting: a rejection reason, ``seq_reset`` (accepted,
counted as a sequence reset after the stream's first), ``flood`` (accepted while the session table
has room, then ``too_many_streams``) or None (accepted)."""


class Daemon:
    """``distractd run`` as a subprocess on free ports, with its metrics and an output subscriber."""

    def __init__(self, overrides, context):
        self.input = f"tcp://127.0.0.1:{free_port()}"
        self.output = f"tcp://127.0.0.1:{free_port()}"
        self.metrics_port = free_port()
        command = [sys.executable, "-m", "distractd.cli", "run"]
        for override in (f'input.bind=["{self.input}"]', f"output.bind={self.output}",
                         f"metrics.port={self.metrics_port}", "service.status_interval_s=0.2",
                         *overrides):
            command += ["--set", override]
        self.notify = NotifyReceiver()
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(command, stderr=self.log, text=True,
                                        env={**os.environ, "NOTIFY_SOCKET": self.notify.path})
        if self.notify.wait_for("READY=1", timeout_s=300) is None:
            self.process.kill()
            raise RuntimeError(f"daemon did not start: {self.stderr()[-2000:]}")
        self.sub = context.socket(zmq.SUB)
        self.sub.linger = 0
        self.sub.rcvhwm = 0
        self.sub.subscribe(b"state.good")
        self.sub.connect(self.output)
        self.states = []
        self._collecting = threading.Event()

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def collect(self):
        """Collect the good stream's states in a thread until :meth:`stop_collecting`."""
        self._collecting.set()

        def run():
            while self._collecting.is_set():
                if self.sub.poll(100):
                    self.states.append(decode_output(self.sub.recv_multipart())[2])
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def stop_collecting(self):
        self._collecting.clear()
        self._thread.join()
        self.sub.close(linger=0)

    def metrics(self):
        """``{(name, frozenset(labels)): value}`` of one scrape."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode("utf-8")
        return {(s.name, frozenset(s.labels.items())): s.value
                for family in text_string_to_metric_families(text) for s in family.samples}

    def value(self, name, **labels):
        return self.metrics().get((name, frozenset(labels.items())), 0.0)


def _wait(condition, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _oversized_connections(context, daemon, n):
    """Send a payload over ZeroMQ's bound on ``n`` fresh connections, one at a time, until the
    daemon drops each; return how many connections it counted closed meanwhile."""
    before = daemon.value("distractd_connections_closed_total", socket="input")
    frames = [b"samples.fz-huge-conn", b"\x00" * (4 * MAX_MESSAGE_BYTES + 1)]
    for k in range(n):
        sock = context.socket(zmq.PUB)
        sock.linger = 0
        sock.reconnect_ivl = -1   # a dropped connection stays dropped
        sock.connect(daemon.input)
        try:
            deadline = time.monotonic() + 60
            while daemon.value("distractd_connections_closed_total", socket="input") \
                    < before + k + 1:
                if time.monotonic() > deadline:
                    raise RuntimeError("the daemon did not drop an oversized connection")
                sock.send_multipart(frames)   # dropped by PUB until the subscription arrives
                time.sleep(0.2)
        finally:
            sock.close(linger=0)
    time.sleep(0.5)
    return int(daemon.value("distractd_connections_closed_total", socket="input") - before)


def run(n_messages, seed, speed, n_dropped_connections, max_streams=200, out=sys.stdout):
    rng = np.random.default_rng(seed)
    drive = simulate_drive(7, duration_s=120.0)
    detector = load_model(default_model_path())
    rule = DecisionRule(**decision_options(DEFAULTS, detector.feature_names))
    windows, scores, labels = predict_windows(detector, drive, rule)
    expected_states = np.array([STATE_NAMES[label] for label in labels], dtype=object)
    kinds = list(KINDS)
    sent = dict.fromkeys(kinds, 0)
    context = zmq.Context()
    daemon = Daemon([f"input.max_message_bytes={MAX_MESSAGE_BYTES}",
                     f"input.max_block_samples={MAX_BLOCK_SAMPLES}",
                     f"sessions.max_streams={max_streams}", "sessions.idle_timeout_s=3600",
                     "service.rejection_log_interval_s=5"], context)
    alive = True
    hang = None
    start = time.monotonic()
    rusage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        daemon.collect()
        time.sleep(0.3)
        summary = {}
        good = threading.Thread(target=lambda: summary.update(replay(
            [drive], daemon.input, speed=speed, prefix="good", context=context)))
        good.start()
        _wait(lambda: daemon.value("distractd_active_streams") >= 1, 60, "the good stream")
        fuzzer = context.socket(zmq.PUB)
        fuzzer.linger = 10000
        fuzzer.sndhwm = 0
        fuzzer.connect(daemon.input)
        time.sleep(0.5)
        for stream in VALID_STREAMS:   # their sessions exist before the flood fills the table
            first = _map(rng) if stream == "fz-fblock" else _block(rng)  # (its seq starts at 1)
            fuzzer.send_multipart([f"samples.{stream}".encode(), _packed(first)])
        n_first = len(VALID_STREAMS)
        _wait(lambda: daemon.value("distractd_active_streams") >= 1 + n_first, 60,
              "the fuzz streams' sessions")
        chunk = 20000
        for lo in range(0, n_messages, chunk):
            for i in range(lo, min(lo + chunk, n_messages)):
                kind = kinds[int(rng.integers(len(kinds)))]
                fuzzer.send_multipart(KINDS[kind][1](rng, i))
                sent[kind] += 1
            alive = alive and daemon.process.poll() is None
            if not alive:
                break
            _wait(lambda: daemon.value("distractd_messages_received_total")
                  >= n_first + lo, 600, "the daemon to catch up")
        good.join()
        n_good = summary["messages"]
        total = n_first + sum(sent.values()) + n_good
        _wait(lambda: daemon.process.poll() is not None
              or daemon.value("distractd_messages_received_total") >= total, 600,
              "every message to be received")
        dropped = _oversized_connections(context, daemon, n_dropped_connections)
        fuzzer.close()
        metrics = daemon.metrics()
        alive = alive and daemon.process.poll() is None
        elapsed_s = time.monotonic() - start
        if alive:
            daemon.process.send_signal(signal.SIGTERM)
        exit_code = daemon.process.wait(timeout=120)
        time.sleep(0.5)
        daemon.stop_collecting()
    except RuntimeError as exc:   # a wait timed out: the daemon stopped taking input (a hang)
        hang = str(exc)
    finally:
        if daemon.process.poll() is None:
            daemon.process.kill()
        daemon.notify.__exit__()
    if hang is not None:
        result = {"benchmark": "fuzz_daemon", "seed": seed, "per_kind": sent, "hangs": 1,
                  "hang": hang, "ok": False, "daemon_log_tail": daemon.stderr()[-3000:]}
        print(json.dumps(result), file=out, flush=True)
        return result
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (cpu.ru_utime + cpu.ru_stime) - (rusage_before.ru_utime + rusage_before.ru_stime)

    def metric(name, **labels):
        return metrics.get((name, frozenset(labels.items())), 0.0)

    expected = {}
    for kind, n in sent.items():
        reason = KINDS[kind][0]
        if reason == "flood":
            room = max_streams - 1 - n_first
            expected["too_many_streams"] = expected.get("too_many_streams", 0) + max(0, n - room)
        elif reason is not None:
            expected[reason] = expected.get(reason, 0) + n
    counted = {reason: int(metric("distractd_messages_rejected_total", reason=reason))
               for reason in sorted(set(expected) - {"seq_reset"} | {"too_many_streams"})}
    counted["seq_reset"] = int(metric("distractd_seq_resets_total"))
    expected.setdefault("too_many_streams", 0)
    counts_match = (counted == {k: int(v) for k, v in expected.items()}
                    and int(metric("distractd_messages_received_total")) == total
                    and metric("distractd_messages_lost_total") == 0
                    and dropped == n_dropped_connections)
    published = {}
    for message in daemon.states:
        published.setdefault(message["t"], message)
    states = [published[t] for t in sorted(published)]
    identical = (
        [m["t"] for m in states] == windows.t_end.tolist()
        and [m["window"] for m in states] == np.c_[windows.t_start, windows.t_end].tolist()
        and [m["state"] for m in states] == expected_states.tolist()
        and np.allclose([m["score"] for m in states], scores, rtol=1e-12, equal_nan=True)
        and np.allclose([m["quality"] for m in states], windows.quality, rtol=1e-12))
    result = {
        "benchmark": "fuzz_daemon", "seed": seed, "kinds": len(KINDS),
        "max_streams": max_streams, "messages_malformed": sum(sent.values()), "messages_good": n_good,
        "messages_total": total, "per_kind": sent, "dropped_connections": dropped,
        "crashes": 0 if alive and exit_code == 0 else 1, "hangs": 0, "exit_code": exit_code,
        "counts_expected": {k: int(v) for k, v in sorted(expected.items())},
        "counts_counted": counted, "counts_match": bool(counts_match),
        "stream_errors": int(sum(value for (name, _), value in metrics.items()
                                 if name == "distractd_stream_errors_total")),
        "samples_rejected": {name: int(value) for (metric_name, labels), value in metrics.items()
                             if metric_name == "distractd_samples_rejected_total" and value
                             for _, name in labels},
        "good_windows": len(windows), "good_states_received": len(states),
        "good_stream_identical": bool(identical), "elapsed_s": round(elapsed_s, 1),
        "daemon_cpu_s": round(cpu_s, 1),
        "daemon_us_per_message": round(1e6 * cpu_s / max(total, 1), 2),
        "load_average": os.getloadavg()[0],
    }
    result["ok"] = (result["crashes"] == 0 and result["counts_match"] and identical
                    and result["stream_errors"] == 0)
    if not result["ok"]:
        result["daemon_log_tail"] = daemon.stderr()[-3000:]
    print(json.dumps(result), file=out, flush=True)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speed", type=float, default=20.0,
                        help="replay speed of the good stream (x real time)")
    parser.add_argument("--dropped-connections", type=int, default=5,
                        help="connections sent a payload over ZeroMQ's bound")
    parser.add_argument("--max-streams", type=int, default=200,
                        help="the daemon's sessions.max_streams (the flood fills it)")
    args = parser.parse_args(argv)
    result = run(args.messages, args.seed, args.speed, args.dropped_connections,
                 args.max_streams)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
