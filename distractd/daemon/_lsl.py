"""Lab Streaming Layer beside the daemon's other inputs: inlets in, state outlets out (pylsl).

:class:`LslBridge` is a thread that resolves the LSL streams matching ``lsl.inlets`` (LSL
predicates such as ``type='Gaze'``), opens an inlet per stream, pulls chunks, maps them with
:func:`~distractd.pipeline.formats.lsl_mapping` (clock correction included) and hands them to the
daemon's loop as native block messages (``samples.<stream_id>``, with ``seq``) over an in-process
PUSH/PULL pair, so they are decoded, validated and counted like any other input; the blocking LSL
calls (resolving, opening, ``time_correction``) never stall the loop; what becomes of every stream
it resolves is counted by outcome (:data:`LSL_OUTCOMES`), refusals and losses included.
:class:`LslStates` publishes every stream's states as an LSL outlet ``distractd.<stream>``
(``lsl.outlets``), each channel described by ``label``, ``type`` and ``unit`` (the XDF/LSL meta-data
convention, :data:`~distractd.pipeline.formats.STATE_CHANNEL_META`). A state of a stream the
bridge pulled from LSL is stamped with its window's end, which is already in this host's LSL clock
(the inlet's samples plus their clock correction), so a recorder lines it up with the samples it
describes; a state of any other stream (ZeroMQ, Pupil: clocks LSL does not know) is stamped at
its publication.

liblsl binds its data ports (TCP and UDP from 16572) on **all interfaces** and answers discovery
on the local network, so inlets and outlets are reachable from every host there; its
``lsl_api.cfg`` narrows discovery (``ResolveScope = machine``, ``ListenAddress``) but the data
ports stay on all interfaces (measured with liblsl 1.18, docs/inputs.md): isolate with a firewall
or a network namespace.
"""

import functools
import logging
import os
import threading
import time
from pathlib import Path

import zmq

from .._errors import ConfigError, SchemaError
from .. import __version__
from ..pipeline.formats import (
    STATE_CHANNEL_META, STATE_CHANNELS, encode_block, lsl_mapping, lsl_stream_id,
)


__all__ = ["LslBridge", "LslStates", "LSL_ENDPOINT", "LSL_OUTCOMES"]

log = logging.getLogger("distractd.daemon")

LSL_ENDPOINT = "inproc://distractd-lsl"
"""Where the bridge pushes its block messages and the loop pulls them."""

LSL_OUTCOMES = ("opened", "refused", "timed_out", "lost", "dropped")
"""What became of an LSL stream the bridge resolved (``distractd_lsl_streams_total{outcome}``):
opened; refused by its mapping (string channels, or no channel maps to a canonical field);
timed_out (its full description or clock offset not received within ``lsl.timeout_s``); lost (its
outlet went away unrecoverably: liblsl recovers streams with a source id silently); dropped (a chunk
the mapping cannot read). Refused, timed-out and dropped streams are not opened again."""


LIBLSL_LOG_LEVEL = -3
"""liblsl's own log level (its ``lsl_api.cfg`` ``[log] level``: -3 fatal only) where the operator's
configuration sets none: liblsl logs the normal end of a stream as ``ERR`` ("Stream transmission
broke off ... re-connecting"), and the daemon reports what became of every stream itself, one
line each (:data:`LSL_OUTCOMES`)."""
_LSL_CONFIG_FILES = ("lsl_api.cfg", "~/lsl_api/lsl_api.cfg", "/etc/lsl_api/lsl_api.cfg")


def _pylsl(option):
    """pylsl, imported when ``option`` needs it: an optional extra (``distractd[lsl]``) whose
    import (liblsl, about 0.3 s) stays off the start of a daemon without LSL."""
    try:
        return _configured_pylsl()
    except ImportError:
        raise ConfigError(f"{option} needs pylsl: pip install 'distractd[lsl]'") from None


@functools.cache
def _configured_pylsl():
    """pylsl with liblsl's configuration read as liblsl would (``$LSLAPICFG``, else the first
    of :data:`_LSL_CONFIG_FILES`) and, without a ``[log]`` section, :data:`LIBLSL_LOG_LEVEL`
    added; set before liblsl's first call, once per process."""
    import pylsl  # noqa: PLC0415 (an optional extra, imported where configured)

    found = next((path for path in (os.environ.get("LSLAPICFG"),
                                    *map(os.path.expanduser, _LSL_CONFIG_FILES))
                  if path and os.path.isfile(path)), None)
    content = Path(found).read_text(encoding="utf-8", errors="replace") if found else ""
    if "[log]" not in content:
        pylsl.set_config_content(f"{content}\n[log]\nlevel = {LIBLSL_LOG_LEVEL}\n")
    return pylsl


def _channels(info):
    """``desc/channels/channel`` of a full stream info as a list of dicts."""
    channels = []
    channel = info.desc().child("channels").child("channel")
    while not channel.empty():
        channels.append({key: channel.child_value(key) for key in ("label", "type", "eye",
                                                                   "unit")})
        channel = channel.next_sibling("channel")
    if len(channels) != info.channel_count():
        channels = [{"label": channel.get("label", "")} for channel in channels] + [
            {} for _ in range(info.channel_count() - len(channels))]
    return channels


class _Inlet:
    """One opened LSL stream: its inlet, mapping, stream id, sequence and clock correction."""

    def __init__(self, pylsl, info, timeout_s):
        self.inlet = pylsl.StreamInlet(info, max_buflen=60, max_chunklen=0, recover=True)
        full = self.inlet.info(timeout=timeout_s)
        channel_format = "string" if full.channel_format() == pylsl.cf_string else "numeric"
        self.mapping = lsl_mapping(full.name(), channel_format, _channels(full),
                                   full.desc().child_value("gaze_frame"))
        self.stream = lsl_stream_id(full.name(), full.source_id())
        self.seq = 0
        self.offset_s = self.inlet.time_correction(timeout=timeout_s)
        self.corrected_s = time.monotonic()
        log.info("lsl: stream %s (%s, %d channels%s), gaze frame %s, clock offset %r s",
                 self.stream, full.type(), full.channel_count(),
                 f"; ignored {', '.join(self.mapping.ignored)}" if self.mapping.ignored else "",
                 self.mapping.gaze_frame, self.offset_s)


class LslBridge(threading.Thread):
    """Pull the LSL streams matching ``config["lsl"]["inlets"]`` and push them to the loop.

    Parameters
    ----------
    context : zmq.Context
        The daemon's context (the PUSH socket connects to :data:`LSL_ENDPOINT` in it).
    lsl : dict
        The ``lsl`` configuration section.
    max_chunk : int
        Most samples per message (``input.max_block_samples``).
    gaze_frames : dict
        Filled with ``stream id -> gaze frame`` of every stream opened, before its first message.
    outcomes : dict
        ``outcome -> counter`` for every one of :data:`LSL_OUTCOMES` (``Metrics.lsl_streams``).

    Attributes
    ----------
    opened : set of str
        Stream ids of every stream opened, whose sample times are in this host's LSL clock.
    """

    def __init__(self, context, lsl, max_chunk, gaze_frames, outcomes):
        self.pylsl = _pylsl("lsl.inlets")
        super().__init__(name="distractd-lsl", daemon=True)
        self.context = context
        self.predicate = " or ".join(f"({p})" for p in lsl["inlets"])
        self.timeout_s = lsl["timeout_s"]
        self.correction_s = lsl["correction_interval_s"]
        self.max_chunk = max_chunk
        self.gaze_frames = gaze_frames
        self.outcomes = outcomes
        self.opened = set()
        self.stopping = threading.Event()

    def stop(self):
        self.stopping.set()
        self.join(5)

    def run(self):
        push = self.context.socket(zmq.PUSH)
        push.linger = 0
        push.connect(LSL_ENDPOINT)
        pylsl = self.pylsl
        resolver = pylsl.ContinuousResolver(pred=self.predicate, forget_after=5.0)
        inlets, refused = {}, set()
        try:
            while not self.stopping.is_set():
                for info in resolver.results():
                    uid = info.uid()
                    if uid not in inlets and uid not in refused:
                        try:
                            inlet = inlets[uid] = _Inlet(pylsl, info, self.timeout_s)
                            self.gaze_frames[inlet.stream] = inlet.mapping.gaze_frame
                            self.opened.add(inlet.stream)
                            self.outcomes["opened"].inc()
                        except (SchemaError, pylsl.util.TimeoutError) as exc:
                            refused.add(uid)
                            self.outcomes["refused" if isinstance(exc, SchemaError)
                                          else "timed_out"].inc()
                            log.warning("lsl: stream %r not used: %s", info.name(), exc)
                pulled = 0
                for uid, inlet in list(inlets.items()):
                    try:
                        pulled += self._pull(inlet, push)
                    except pylsl.util.LostError:
                        log.warning("lsl: stream %s lost", inlet.stream)
                        del inlets[uid]
                        self.outcomes["lost"].inc()
                    except (ValueError, RuntimeError) as exc:  # a chunk the mapping cannot read
                        log.warning("lsl: stream %s dropped: %s: %s", inlet.stream,
                                    type(exc).__name__, exc)
                        del inlets[uid]
                        refused.add(uid)
                        self.outcomes["dropped"].inc()
                if not pulled:
                    self.stopping.wait(0.005)
        finally:
            for inlet in inlets.values():
                inlet.inlet.close_stream()
            push.close(linger=0)

    def _pull(self, inlet, push):
        chunk, timestamps = inlet.inlet.pull_chunk(timeout=0.0, max_samples=self.max_chunk)
        if not timestamps:
            return 0
        now = time.monotonic()
        if now - inlet.corrected_s >= self.correction_s:
            inlet.offset_s = inlet.inlet.time_correction(timeout=self.timeout_s)
            inlet.corrected_s = now
        block = inlet.mapping.decode(chunk, timestamps, inlet.offset_s)
        push.send_multipart(encode_block(inlet.stream, block, inlet.seq))
        inlet.seq += 1
        return len(timestamps)


class LslStates:
    """An LSL outlet per stream, ``distractd.<stream>`` of type ``DistractionState``, carrying
    :data:`~distractd.pipeline.formats.STATE_CHANNELS` for every published state.

    Attributes
    ----------
    lsl_clock : set of str
        Streams whose sample times are in this host's LSL clock (:attr:`LslBridge.opened`): their
        states are stamped with the window's end; all others at publication (``local_clock()``).
    """

    def __init__(self, hop_s):
        self.pylsl = _pylsl("lsl.outlets")
        self.rate_hz = 1.0 / hop_s
        self.outlets = {}
        self.lsl_clock = set()

    def publish(self, message):
        stream = message["stream"]
        outlet = self.outlets.get(stream)
        if outlet is None:
            outlet = self.outlets[stream] = self._outlet(stream)
        state = {"distracted": 1.0, "attentive": 0.0}.get(message["state"], float("nan"))
        glance = message.get("glance") or {}
        off_road_s = glance.get("off_road_s")
        stamp = message["t"] if stream in self.lsl_clock else self.pylsl.local_clock()
        outlet.push_sample([message["t"], state, message["score"], message["quality"],
                            float("nan") if off_road_s is None else off_road_s], stamp)

    def drop(self, stream):
        """Close the outlet of an expired stream."""
        self.outlets.pop(stream, None)

    def _outlet(self, stream):
        pylsl = self.pylsl
        info = pylsl.StreamInfo(f"distractd.{stream}", "DistractionState", len(STATE_CHANNELS),
                                self.rate_hz, "double64", f"distractd.{stream}")
        desc = info.desc()
        desc.append_child_value("source_stream", stream)
        desc.append_child_value("timestamps", "window_end" if stream in self.lsl_clock
                                else "publication")
        acquisition = desc.append_child("acquisition")
        acquisition.append_child_value("manufacturer", "distractd")
        acquisition.append_child_value("version", __version__)
        channels = desc.append_child("channels")
        for label in STATE_CHANNELS:
            channel = channels.append_child("channel")
            channel.append_child_value("label", label)
            for key, value in STATE_CHANNEL_META[label].items():
                channel.append_child_value(key, value)
        log.info("lsl: outlet distractd.%s", stream)
        return pylsl.StreamOutlet(info)
