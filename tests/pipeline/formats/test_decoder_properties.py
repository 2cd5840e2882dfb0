"""Property-based tests (Hypothesis) of every decoder, on arbitrary floats (±inf, NaN, ±1e308,
±9e307, subnormals), shapes and strings (Unicode, empty, huge): the wire's map and block forms,
the sample schema, the Pupil adapter and the LSL mapping. Each input either decodes to a canonical
block holding exactly what was sent, or is refused through the documented path (``Rejected`` with
one of :data:`MESSAGE_REJECT_REASONS`, or ``SchemaError``) in one bounded line; nothing else escapes
(issue 23). Derandomized, so CI runs the same examples every time."""

import collections
import math
import operator

import msgpack
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from distractd import SchemaError
from distractd.pipeline import T_MAX_S
from distractd.pipeline.formats import (
    FIELD_INDEX, FIELDS, MESSAGE_REJECT_REASONS, N_FIELDS, REFUSED_MAPPINGS, Limits, PupilAdapter,
    Rejected, UnsupportedGaze, block_from_columns, block_from_maps, decode_samples, encode_block,
    encode_map, gaze_normal, lsl_mapping, maps_from_block,
)

PROPERTIES = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

EXTREMES = st.sampled_from([1e308, -1e308, 9e307, -9e307, 1.7976931348623157e308, 5e-324,
                            -5e-324, 2.2250738585072014e-308, 0.0, -0.0, math.inf, -math.inf,
                            math.nan, T_MAX_S, math.nextafter(T_MAX_S, math.inf)])
FLOATS = st.floats() | EXTREMES
FLOATS32 = st.floats(width=32) | st.sampled_from([3.4028234663852886e38, 1e-45, math.inf,
                                                  math.nan])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)))  # msgpack strings are UTF-8
HUGE_TEXT = st.builds(operator.mul, st.characters(blacklist_categories=("Cs",)),
                      st.integers(4000, 70000))
STRINGS = TEXT | HUGE_TEXT | st.sampled_from(FIELDS)
INTS = st.integers(-2**63, 2**64 - 1)  # what msgpack can carry
SCALARS = st.none() | st.booleans() | INTS | FLOATS | STRINGS | st.binary(max_size=64)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(TEXT | INTS, inner, max_size=4), max_leaves=12)
"""Anything msgpack can carry."""

SAMPLE_MAPS = st.tuples(
    st.fixed_dictionaries({"v": st.just(1) | VALUES, "t": FLOATS | VALUES},
                          optional={**{name: FLOATS | st.none() | VALUES for name in FIELDS[1:]},
                                    "seq": st.integers(0, 2**63 - 1) | VALUES}),
    st.dictionaries(st.sampled_from(FIELDS + ("v", "seq")) | STRINGS, VALUES, max_size=4),
    st.booleans(),
).map(lambda parts: {**parts[1], **parts[0]} if parts[2] else {**parts[0], **parts[1]})
"""Sample maps, mostly well-formed, with arbitrary values in any field and arbitrary extra keys."""


def _assert_rejected_in_one_line(rejected):
    assert rejected.reason in MESSAGE_REJECT_REASONS
    text = str(rejected)
    assert len(text.splitlines()) == 1 and len(text) <= 1000, text[:2000]


def _same(decoded, sent):
    """Bit-for-bit equal floats (NaN payloads aside), -0.0 kept apart from 0.0."""
    decoded, sent = np.asarray(decoded, dtype=np.float64), np.asarray(sent, dtype=np.float64)
    both_nan = np.isnan(decoded) & np.isnan(sent)
    return decoded.shape == sent.shape and bool(np.all(both_nan | (
        (decoded == sent) & (np.signbit(decoded) == np.signbit(sent)))))


@PROPERTIES
@given(message=SAMPLE_MAPS)
@example(message={"v": 1, "t": 1e308})
@example(message={"v": 1, "t": -9e307, "gaze_r_yaw": 5e-324})
@example(message={"v": 1, "t": math.nan, "seq": 2**63 - 1})
@example(message={"v": True, "t": 1.0})
@example(message={"v": 1, "t": 1.0, "confidence": True})
@example(message={"v": 1, "t": "1.0"})
def test_a_sample_map_decodes_to_what_it_holds_or_is_rejected(message):
    frames = [b"samples.car-1", msgpack.packb(message)]
    try:
        stream, block, seq = decode_samples(frames, Limits())
    except Rejected as rejected:
        _assert_rejected_in_one_line(rejected)
        return
    assert type(message["v"]) is int and message["v"] == 1
    assert stream == "car-1" and block.shape == (1, N_FIELDS) and block.dtype == np.float64
    assert seq == message.get("seq")
    sent = [math.nan if message.get(name) is None else message[name] for name in FIELDS]
    assert all(type(value) in (int, float) for value in sent)
    assert _same(block[0], sent)


def _block_messages():
    """Block-form payloads: columns of arbitrary floats in any field order and dtype, or junk in
    any part (fields, dtype, data, seq)."""
    fields = st.lists(st.sampled_from(FIELDS), min_size=1, max_size=N_FIELDS, unique=True)
    dtype = st.sampled_from(["<f8", "<f4"])

    @st.composite
    def build(draw):
        names = draw(fields | st.lists(STRINGS, max_size=6))
        kind = draw(dtype | st.sampled_from([">f8", "<i8", "f8", ""]) | VALUES)
        n_rows = draw(st.integers(0, 40))
        if kind in ("<f8", "<f4") and names:
            elements = FLOATS if kind == "<f8" else FLOATS32
            values = draw(hnp.arrays(np.dtype(kind), (n_rows, len(names)), elements=elements))
            data = values.tobytes()
        else:
            data = draw(st.binary(max_size=512))
        data = draw(st.just(data) | st.binary(max_size=64) | VALUES)
        message = {"v": 1, "seq": draw(st.integers(0, 2**63 - 1) | VALUES),
                   "fields": draw(st.just(names) | VALUES), "dtype": kind, "data": data}
        for key in draw(st.sets(st.sampled_from(sorted(message)), max_size=2)):
            del message[key]
        return message

    return build()


@PROPERTIES
@given(message=_block_messages())
@example(message={"v": 1, "seq": 0, "fields": ["t"], "dtype": "<f8",
                  "data": np.array([1e308, -9e307, math.nan]).tobytes()})
@example(message={"v": 1, "seq": 0, "fields": ["t", "t"], "dtype": "<f8", "data": bytes(16)})
@example(message={"v": 1, "seq": 0, "fields": ["gaze_r_yaw"], "dtype": "<f8", "data": bytes(8)})
@example(message={"v": 1, "seq": 0, "fields": [], "dtype": "<f8", "data": b""})
def test_a_block_decodes_to_its_columns_or_is_rejected(message):
    frames = [b"samples.car-1", msgpack.packb(message)]
    try:
        stream, block, seq = decode_samples(frames, Limits())
    except Rejected as rejected:
        _assert_rejected_in_one_line(rejected)
        return
    fields, dtype = message["fields"], np.dtype(message["dtype"])
    sent = np.frombuffer(message["data"], dtype=dtype).reshape(-1, len(fields))
    assert stream == "car-1" and seq == message["seq"] and "t" in fields
    assert block.shape == (len(sent), N_FIELDS) and block.dtype == np.float64
    for column, name in enumerate(fields):
        assert _same(block[:, FIELD_INDEX[name]], sent[:, column].astype(np.float64))
    others = [i for i, name in enumerate(FIELDS) if name not in fields]
    assert np.isnan(block[:, others]).all()


@PROPERTIES
@given(frames=st.lists(st.binary(max_size=96) | st.sampled_from([b"samples.s", b"samples."]),
                       max_size=4),
       topic=st.binary(max_size=200) | STRINGS.map(lambda s: b"samples." + s.encode()))
@example(frames=[b"\x81\xa1v\x01"], topic=b"samples.\xc3\xa9")
@example(frames=[msgpack.packb({"v": 1, "t": 1.0})], topic=b"samples." + b"x" * 129)
def test_arbitrary_bytes_and_topics_are_decoded_or_rejected(frames, topic):
    for message in (frames, [topic, *frames[1:]], [topic, *frames]):
        try:
            stream, block, _ = decode_samples(message, Limits(max_message_bytes=64))
        except Rejected as rejected:
            _assert_rejected_in_one_line(rejected)
            continue
        assert block.ndim == 2 and block.shape[1] == N_FIELDS and stream.isascii()


@PROPERTIES
@given(block=hnp.arrays(np.float64, st.tuples(st.integers(0, 30), st.just(N_FIELDS)),
                        elements=FLOATS),
       stream=st.from_regex(r"[A-Za-z0-9_.:\-]{1,128}", fullmatch=True),
       seq=st.integers(0, 2**63 - 1))
def test_encode_then_decode_is_exact_for_any_float(block, stream, seq):
    decoded_stream, decoded, decoded_seq = decode_samples(encode_block(stream, block, seq),
                                                          Limits(max_block_samples=30))
    assert (decoded_stream, decoded_seq) == (stream, seq) and _same(decoded, block)
    if len(block) and not math.isnan(block[0, 0]):
        sample = {name: float(value) for name, value in zip(FIELDS, block[0])}
        _, one, _ = decode_samples(encode_map(stream, sample, seq), Limits())
        assert _same(one[0], block[0])


PYTHON_NUMBERS = (st.integers() | FLOATS | st.fractions() | st.booleans() | st.none()
                  | FLOATS32.map(np.float32) | FLOATS.map(np.float64) | STRINGS)
"""What a caller of the schema's Python API can hand it: unbounded ints, fractions, numpy
scalars, bools, strings."""


@PROPERTIES
@given(samples=st.lists(st.dictionaries(st.sampled_from(FIELDS) | STRINGS, PYTHON_NUMBERS,
                                        max_size=8), max_size=5))
@example(samples=[{"t": 2**1100}])
@example(samples=[{"t": 0.0, "gaze_r_yaw": -(2**1024)}])
def test_sample_maps_become_a_block_or_a_schema_error(samples):
    try:
        block = block_from_maps(samples)
    except SchemaError as error:
        assert len(str(error).splitlines()) == 1
        with_mappings = None
    else:
        assert block.shape == (len(samples), N_FIELDS) and block.dtype == np.float64
        for row, sample in zip(block, samples):
            assert _same(row, [math.nan if sample.get(name) is None else float(sample[name])
                               for name in FIELDS])
        with_mappings = block
    # the fast path (plain dicts) and the field-by-field path (other mappings) agree
    try:
        other = block_from_maps([collections.UserDict(sample) for sample in samples])
    except SchemaError:
        assert with_mappings is None
    else:
        assert with_mappings is not None and _same(other, with_mappings)


@PROPERTIES
@given(fields=st.lists(st.sampled_from(FIELDS) | STRINGS, max_size=N_FIELDS + 2),
       shape=st.tuples(st.integers(0, 5), st.integers(0, N_FIELDS + 2)) | st.tuples(
           st.integers(0, 3)), data=st.data())
def test_columns_become_a_block_or_a_schema_error(fields, shape, data):
    values = data.draw(hnp.arrays(np.float64, shape, elements=FLOATS))
    try:
        block = block_from_columns(fields, values)
    except SchemaError as error:
        assert len(str(error).splitlines()) == 1
        return
    assert block.shape == (len(values), N_FIELDS) and "t" in fields
    assert len(set(fields)) == len(fields) and set(fields) <= set(FIELDS)
    for column, name in enumerate(fields):
        assert _same(block[:, FIELD_INDEX[name]], values[:, column])


@PROPERTIES
@given(block=hnp.arrays(np.float64, st.tuples(st.integers(0, 10), st.just(N_FIELDS)),
                        elements=FLOATS))
def test_maps_from_a_block_and_back_is_exact(block):
    block[:, 0] = np.where(np.isnan(block[:, 0]), 0.0, block[:, 0])  # a map must carry t
    assert _same(block_from_maps(maps_from_block(block)), block)


# --- Pupil Core -----------------------------------------------------------------------------

PUPIL_TOPICS = st.sampled_from(["gaze.3d.0.", "gaze.3d.1.", "gaze.3d.01.", "pupil.0.3d",
                                "pupil.1.3d", "pupil.0.2d", "blinks", "notify.x", "gaze.2d.0.",
                                "surfaces.screen", "gaze.3d.0.\n", "gaze.3d.\u2028"]) | TEXT
VECTORS = st.lists(FLOATS, min_size=3, max_size=3) | VALUES


@st.composite
def pupil_messages(draw):
    """Pupil backbone messages: datums of Capture's shape with arbitrary values anywhere."""
    topic = draw(PUPIL_TOPICS)
    datum = draw(st.fixed_dictionaries(
        {"timestamp": FLOATS | VALUES},
        optional={"confidence": FLOATS | VALUES, "gaze_normal_3d": VECTORS,
                  "gaze_normals_3d": st.dictionaries(st.sampled_from(["0", "1"]) | TEXT | INTS,
                                                     VECTORS, max_size=3) | VALUES,
                  "base_data": st.lists(st.fixed_dictionaries(
                      {"id": st.sampled_from([0, 1]) | VALUES,
                       "diameter_3d": FLOATS | VALUES}), max_size=2) | VALUES,
                  "diameter_3d": FLOATS | VALUES, "id": st.sampled_from([0, 1, "0"]) | VALUES,
                  "type": st.sampled_from(["onset", "offset"]) | VALUES}))
    frames = [topic.encode(), msgpack.packb(datum)]
    return draw(st.just(frames) | st.lists(st.binary(max_size=64), max_size=3))


def _pupil_gaze(t, yaw):
    return [b"gaze.3d.0.", msgpack.packb({"timestamp": t, "confidence": 0.9,
                                          "gaze_normal_3d": gaze_normal(yaw, 0.05)})]


GOOD_PUPIL = [_pupil_gaze(10.0 + i / 120.0, 0.01 * math.sin(i / 5.0)) for i in range(120)]


def _feed_pupil(messages):
    """Every row the adapter releases (flushed at the end) and the rejections' reasons."""
    adapter, rows, reasons = PupilAdapter(), [], []
    for frames in messages:
        try:
            block = adapter.update(frames)
        except Rejected as rejected:
            _assert_rejected_in_one_line(rejected)
            reasons.append(rejected.reason)
            continue
        except UnsupportedGaze as refused:  # 2-D or surface gaze: refused, counted by mapping
            assert len(str(refused).splitlines()) == 1
            reasons.append(refused.mapping)
            continue
        assert block.ndim == 2 and block.shape[1] == N_FIELDS
        rows.extend(block)
    rows.extend(adapter.flush())
    return np.array(rows).reshape(-1, N_FIELDS), reasons


def _gaze_timestamp(frames):
    """The timestamp of a gaze datum the adapter would take, else None."""
    if len(frames) < 2 or not frames[0].startswith(b"gaze.3d."):
        return None
    try:
        datum = msgpack.unpackb(frames[1], strict_map_key=False)
    except Exception:  # junk bytes: not a datum
        return None
    return datum.get("timestamp") if isinstance(datum, dict) else None


@PROPERTIES
@given(bad=st.lists(st.tuples(st.integers(0, len(GOOD_PUPIL)), pupil_messages()), max_size=12))
@example(bad=[(30, _pupil_gaze(math.nan, 0.0)), (60, _pupil_gaze(math.nan, 0.0))])
@example(bad=[(30, _pupil_gaze(1e308, 0.0)), (31, _pupil_gaze(-math.inf, 0.0))])
def test_pupil_gaze_around_bad_datums_is_released_whole_and_in_order(bad):
    """Datums the adapter rejects, or gaze stamped with a time the pipeline drops (non-finite or
    beyond ``T_MAX_S``), neither lose nor reorder the good gaze samples around them."""
    clean, _ = _feed_pupil(GOOD_PUPIL)
    bad = [(at, frames) for at, frames in bad if _is_pupil_noise(frames)]
    mixed = list(GOOD_PUPIL)
    for at, frames in sorted(bad, key=operator.itemgetter(0), reverse=True):
        mixed.insert(at, frames)
    rows, reasons = _feed_pupil(mixed)
    kept = rows[np.isfinite(rows[:, 0]) & (np.abs(rows[:, 0]) <= T_MAX_S)]
    assert _same(kept, clean)
    assert all(reason in MESSAGE_REJECT_REASONS + REFUSED_MAPPINGS for reason in reasons)


def _is_pupil_noise(frames):
    """Whether a message must leave the good gaze stream as it is: the adapter rejects it, or it
    is gaze whose time the pipeline drops. (Pupil and blink datums it accepts legitimately change
    the gaze samples after them: their diameter, their blink flag.)"""
    t = _gaze_timestamp(frames)
    if isinstance(t, (int, float)) and not isinstance(t, bool) and not abs(t) <= T_MAX_S:
        return True
    try:
        PupilAdapter().update(frames)
    except (Rejected, UnsupportedGaze):
        return True
    return False


# --- Lab Streaming Layer --------------------------------------------------------------------

CHANNEL_WORDS = (st.sampled_from(["gaze_r_yaw", " Head_Yaw ", "HEAD_X", "confidence", "t",
                                  "gaze_normal0_x", "gaze_normal1_z", "diameter0_3d",
                                  "DirectionX", "directiony", "DirectionZ", "Diameter", "Radius",
                                  "Confidence", "right", "left", "both", "deg", "degrees", "mm",
                                  "cm", "m", ""]) | TEXT | HUGE_TEXT)
CHANNELS = st.lists(st.fixed_dictionaries({}, optional={key: CHANNEL_WORDS for key in (
    "label", "type", "eye", "unit")}), max_size=12)


@PROPERTIES
@given(channels=CHANNELS, channel_format=st.sampled_from(["float32", "double64", "string"]),
       gaze_frame=CHANNEL_WORDS, data=st.data())
@example(channels=[{"label": "gaze_r_yaw", "unit": "deg"}], channel_format="float32",
         gaze_frame="", data=None)
def test_an_lsl_description_maps_chunks_of_any_floats(channels, channel_format, gaze_frame,
                                                      data):
    try:
        mapping = lsl_mapping("stream", channel_format, channels, gaze_frame)
    except SchemaError as error:
        assert len(str(error).splitlines()) == 1
        return
    assert channel_format != "string" and (mapping.columns or mapping.vectors)
    if data is None:
        return
    n = data.draw(st.integers(0, 20))
    chunk = data.draw(hnp.arrays(np.float64, (n, len(channels)), elements=FLOATS))
    stamps = data.draw(hnp.arrays(np.float64, (n,), elements=FLOATS))
    offset = data.draw(FLOATS)
    with np.errstate(all="ignore"):  # inf - inf and the like: NaN, as the pipeline expects
        block = mapping.decode(chunk, stamps, offset)
        assert block.shape == (n, N_FIELDS) and block.dtype == np.float64
        assert _same(block[:, 0], stamps + offset)
    fields = [field for _, field, _ in mapping.columns]
    derived = {FIELD_INDEX[f"gaze_{side}_{angle}"] for side, _ in mapping.vectors
               for angle in ("yaw", "pitch")}
    if mapping.compose:  # eye-in-head gaze plus head pose: the gaze columns are sums
        derived |= {FIELD_INDEX[name] for name in FIELDS if name.startswith("gaze_")}
    for channel, field, scale in mapping.columns:
        if fields.count(field) == 1 and field not in derived:
            assert _same(block[:, field], chunk[:, channel] * scale)
