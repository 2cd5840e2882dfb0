"""Property-based test (Hypothesis) of a session fed arbitrary messages in process (issue 23): a
good stream, with bad messages of any kind between its messages, gives exactly the states and
events it gives alone; every bad message is refused through the documented path and counted by a
known reason, at the wire (``Rejected``, :data:`MESSAGE_REJECT_REASONS`) or, for a sample whose
time is not finite or beyond ``T_MAX_S``, by the pipeline (:data:`SAMPLE_REJECT_REASONS`); nothing
raises.

The session runs as the daemon's loop runs it (decode, accept, process; at the first windows the
sub-model choice and the field check; publish with the chosen sub-model's scores)."""

import math
from collections import Counter

import msgpack
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from distractd.daemon import Model, Session, decision_options, load_config
from distractd.pipeline import FEATURE_NAMES, SAMPLE_REJECT_REASONS, T_MAX_S
from distractd.pipeline.formats import (
    FIELD_INDEX, FIELDS, MESSAGE_REJECT_REASONS, Limits, Rejected, decode_samples, encode_block,
    encode_map,
)
from distractd.simulators import simulate_drive

PROPERTIES = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MODEL = Model("")
DECISION = decision_options(load_config(), MODEL.detector.feature_names)
LIMITS = dict(max_message_bytes=65536, max_block_samples=64)

DRIVE = simulate_drive(7, duration_s=150.0)
GOOD = [encode_block("car", DRIVE.samples[lo:lo + 30], seq=i)
        for i, lo in enumerate(range(0, len(DRIVE.samples), 30))]
"""The good stream: 150 s of a simulated driver at 60 Hz, in blocks of 30 samples."""

FLOATS = st.floats() | st.sampled_from([1e308, -1e308, 9e307, -9e307, 5e-324, -0.0, math.inf,
                                        -math.inf, math.nan])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.builds(
    lambda c, n: c * n, st.characters(blacklist_categories=("Cs",)), st.integers(1000, 5000))
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | FLOATS | TEXT
                      | st.binary(max_size=32),
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
BAD_TIMES = st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 9e307, -9e307,
                             math.nextafter(T_MAX_S, math.inf), -2 * T_MAX_S])
"""Times the pipeline drops: not finite, or beyond ``T_MAX_S``."""


def _packed(payload):
    return [b"samples.car", msgpack.packb(payload)]


def _refused_messages():
    """Messages the wire decoder refuses by construction, one reason each."""
    sample = st.dictionaries(st.sampled_from(FIELDS[1:]), FLOATS, max_size=5)
    return st.one_of(
        st.builds(lambda junk: [b"samples.car", b"\xc1" + junk], st.binary(max_size=64)),
        st.builds(lambda value: _packed(value), VALUES.filter(lambda v: not isinstance(v, dict))),
        st.builds(lambda s, v: _packed({**s, "v": v, "t": 1.0}),
                  sample, VALUES.filter(lambda v: type(v) is not int or v != 1)),
        st.builds(lambda s: _packed({**s, "v": 1}), sample),                    # no t
        st.builds(lambda s, name, v: _packed({**s, "v": 1, "t": 1.0, name: v}),  # not a number
                  sample, st.sampled_from(FIELDS), VALUES.filter(
                      lambda v: v is not None and type(v) not in (int, float))),
        st.builds(lambda fields, data: _packed({"v": 1, "seq": 0, "fields": fields,
                                                "dtype": "<f8", "data": data}),
                  st.lists(TEXT, max_size=4).filter(lambda f: not set(f) <= set(FIELDS)
                                                    or "t" not in f or len(set(f)) < len(f)),
                  st.binary(max_size=256)),
        st.builds(lambda dtype: _packed({"v": 1, "seq": 0, "fields": ["t"], "dtype": dtype,
                                         "data": bytes(8)}),
                  VALUES.filter(lambda d: d not in ("<f8", "<f4"))),
        st.builds(lambda n: _packed({"v": 1, "seq": 0, "fields": ["t"], "dtype": "<f8",
                                     "data": bytes(n)}), st.integers(1, 7)),    # not whole rows
        st.just(_packed({"v": 1, "t": 1.0, "pad": bytes(70000)})),              # oversized
    )


def _block_of(times, values):
    """A block message of samples at ``times``, their other fields cycling through ``values``."""
    block = np.column_stack([times, np.resize(values, (len(times), len(FIELDS) - 1))])
    return list(times), encode_block("car", block, seq=0)


def _dropped_samples():
    """Well-formed messages whose every sample carries a time the pipeline drops."""
    maps = st.builds(lambda t, sample: ([t], encode_map("car", {**sample, "t": t})), BAD_TIMES,
                     st.dictionaries(st.sampled_from(FIELDS[1:]), FLOATS, max_size=6))
    blocks = st.builds(_block_of, st.lists(BAD_TIMES, min_size=1, max_size=5),
                       st.lists(FLOATS, min_size=1, max_size=8))
    return maps | blocks


def _run(messages):
    """Feed ``messages`` to one session as the daemon's loop does; return its states, events,
    message rejections and sample rejections by reason."""
    session = Session("car", MODEL.pipeline_config, DECISION, MODEL.segmenter(True), 0.0)
    limits = Limits(**LIMITS)
    states, events, refused = [], [], Counter()
    for i, frames in enumerate(messages):
        try:
            stream, block, seq = decode_samples(frames, limits)
        except Rejected as rejected:
            text = str(rejected)
            assert len(text.splitlines()) == 1 and len(text) <= 1000, text[:300]
            refused[rejected.reason] += 1
            continue
        assert stream == "car"
        session.accept(seq, i / 100.0)
        windows = session.process(block)
        if len(windows):
            if not session.fields_checked:
                session.choice = MODEL.detector.choose(session.fields_seen,
                                                       session.processor.rate_hz)
                session.check_fields(windows, MODEL.detector.model_id,
                                     MODEL.detector.feature_names, MODEL.columns, MODEL.needs,
                                     session.choice)
            chosen = session.choice.detector
            scores = np.full(len(windows), np.nan) if chosen is None \
                else chosen.window_scores(windows.X, FEATURE_NAMES, chosen)
            published, happened = session.decide(
                windows, scores, (chosen or MODEL.detector).model_id)
            states += published
            events += happened
    assert set(refused) <= set(MESSAGE_REJECT_REASONS)
    rejected = Counter(session.new_rejections())
    assert set(rejected) <= set(SAMPLE_REJECT_REASONS)
    return states, events, refused, rejected


CLEAN = _run(GOOD)


def _published(messages):
    """The payloads as the daemon sends them (msgpack bytes)."""
    return [msgpack.packb(message) for message in messages]


def test_the_good_stream_gets_decisions():
    states, _, refused, _ = CLEAN
    decided = Counter(state["state"] for state in states)
    assert not refused and len(states) > 200
    assert decided["attentive"] + decided["distracted"] > 50, decided


@PROPERTIES
@given(bad=st.lists(st.tuples(st.integers(0, len(GOOD)),
                              _refused_messages().map(lambda m: ("refused", m))
                              | _dropped_samples().map(lambda m: ("dropped", m))),
                    max_size=25))
@example(bad=[(40, ("dropped", ([1e308], encode_map("car", {"t": 1e308})))),
              (41, ("dropped", ([-9e307], encode_map("car", {"t": -9e307})))),
              (42, ("dropped", ([1e308, 1e308], encode_block(
                  "car", np.array([[1e308], [1e308]]), seq=1, fields=("t",)))))])
@example(bad=[(60, ("dropped", ([math.nan], encode_map("car", {"t": math.nan,
                                                             "head_yaw": 0.1}))))])
def test_bad_messages_around_a_good_stream_change_nothing_but_the_counts(bad):
    messages = list(GOOD)
    n_refused, times = 0, []
    for at, (kind, message) in sorted(bad, key=lambda item: item[0], reverse=True):
        if kind == "refused":
            messages.insert(at, message)
            n_refused += 1
        else:
            stamps, frames = message
            messages.insert(at, frames)
            times += stamps
    states, events, refused, rejected = _run(messages)
    clean_states, clean_events, _, clean_rejected = CLEAN
    assert _published(states) == _published(clean_states)  # as sent: NaN scores compare
    assert _published(events) == _published(clean_events)
    assert sum(refused.values()) == n_refused
    expected = Counter(clean_rejected)
    expected["nonfinite_t"] += sum(not math.isfinite(t) for t in times)
    expected["t_out_of_range"] += sum(math.isfinite(t) and abs(t) > T_MAX_S for t in times)
    assert +rejected == +expected


def test_a_dropped_sample_leaves_a_gaze_only_stream_on_its_sub_model():
    """A gaze-only stream (no head pose) is scored by the gaze_only sub-model; one message whose
    sample is dropped for its NaN time, but carries head pose, must not move the stream to the
    model that needs head pose (its windows would all be unknown)."""
    samples = DRIVE.samples.copy()
    samples[:, [FIELD_INDEX[name] for name in FIELDS if name.startswith("head_")]] = np.nan
    good = [encode_block("car", samples[lo:lo + 30], seq=i)
            for i, lo in enumerate(range(0, len(samples), 30))]
    head = {name: 0.1 for name in FIELDS if name.startswith("head_")}
    mixed = good[:5] + [encode_map("car", {**head, "t": math.nan})] + good[5:]
    clean_states, mixed_states = _run(good)[0], _run(mixed)[0]
    assert {state["model"] for state in clean_states} == {
        f"{MODEL.detector.model_id}/gaze_only"}
    assert _published(mixed_states) == _published(clean_states)
