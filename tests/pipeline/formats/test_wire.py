"""The wire format: round trips, and every rejection reason from a real malformed message."""

import msgpack
import numpy as np
import pytest

from distractd.pipeline.formats import (
    MESSAGE_REJECT_REASONS, Limits, Rejected, decode_output, decode_samples, encode_block,
    encode_event, encode_map, encode_state,
)
from distractd.pipeline import FIELD_INDEX, FIELDS, N_FIELDS

LIMITS = Limits(max_message_bytes=4096, max_block_samples=20)


def _block(n_samples, seed=0):
    block = np.random.default_rng(seed).random((n_samples, N_FIELDS))
    block[:, 0] = np.arange(n_samples) / 60.0
    block[1, FIELD_INDEX["eyelid_r"]] = np.nan
    return block


def test_block_round_trip_is_exact_and_zero_copy():
    block = _block(10)
    stream, decoded, seq = decode_samples(encode_block("car-1", block, seq=41), LIMITS)
    assert (stream, seq) == ("car-1", 41)
    np.testing.assert_array_equal(decoded, block)
    assert not decoded.flags.writeable  # a view of the message bytes (numpy.frombuffer)


def test_block_in_sender_field_order_and_float32():
    block = _block(4)
    fields = ["gaze_r_yaw", "t", "confidence"]
    columns = [FIELD_INDEX[f] for f in fields]
    payload = {"v": 1, "seq": 0, "fields": fields, "dtype": "<f4",
               "data": block[:, columns].astype("<f4").tobytes()}
    _, decoded, _ = decode_samples([b"samples.s", msgpack.packb(payload)], LIMITS)
    np.testing.assert_array_equal(decoded[:, columns], block[:, columns].astype("<f4"))
    others = [i for i in range(N_FIELDS) if i not in columns]
    assert np.isnan(decoded[:, others]).all()


def test_map_round_trip_and_extra_frames_ignored():
    frames = encode_map("s.2", {"t": 1.5, "gaze_r_yaw": 0.01, "future_field": 3}, seq=7)
    stream, block, seq = decode_samples(frames + [b"extra", b"frames"], LIMITS)
    assert (stream, seq, block.shape) == ("s.2", 7, (1, N_FIELDS))
    assert block[0, 0] == 1.5 and block[0, FIELD_INDEX["gaze_r_yaw"]] == 0.01
    assert np.isnan(np.delete(block[0], [0, FIELD_INDEX["gaze_r_yaw"]])).all()


def test_output_messages_round_trip():
    state = {"v": 1, "stream": "a", "t": 10.0, "window": [0.0, 10.0], "state": "attentive",
             "score": -0.5, "model": "m1", "quality": 1.0, "segment": None}
    assert decode_output(encode_state(state)) == ("state", "a", state)
    event = {"v": 1, "stream": "a", "t": 10.0, "type": "transition", "from": "unknown",
             "to": "attentive", "score": -0.5, "model": "m1"}
    assert decode_output(encode_event(event)) == ("event", "a", event)


def _payload(**message):
    return msgpack.packb(message)


GOOD_BLOCK = {"v": 1, "seq": 0, "fields": list(FIELDS), "dtype": "<f8",
              "data": np.zeros((2, N_FIELDS)).tobytes()}

MALFORMED = [
    ("bad_topic", [b"samples."]),
    ("bad_topic", [b"state.x", _payload(v=1, t=0.0)]),
    ("bad_topic", [b"samples.a b", _payload(v=1, t=0.0)]),
    ("oversized", [b"samples.a", b"\x00" * 5000]),
    ("oversized", [b"samples.a", _payload(**{**GOOD_BLOCK,
                                            "data": np.zeros((21, N_FIELDS)).tobytes()})]),
    ("undecodable", [b"samples.a", b"\xc1\xc1"]),
    ("undecodable", [b"samples.a", b"\x92\x01"]),
    ("not_a_map", [b"samples.a", msgpack.packb([1, 2])]),
    ("unknown_version", [b"samples.a", _payload(v=2, t=0.0)]),
    ("unknown_version", [b"samples.a", _payload(t=0.0)]),
    ("missing_t", [b"samples.a", _payload(v=1, gaze_r_yaw=0.1)]),
    ("wrong_type", [b"samples.a", _payload(v=1, t=0.0, gaze_r_yaw="left")]),
    ("wrong_type", [b"samples.a", _payload(v=1, t="now")]),
    ("wrong_type", [b"samples.a", _payload(v=1, t=0.0, seq="x")]),
    ("wrong_type", [b"samples.a", _payload(**{**GOOD_BLOCK, "data": "text"})]),
    ("bad_block", [b"samples.a", _payload(**{**GOOD_BLOCK, "seq": None})]),
    ("bad_block", [b"samples.a", _payload(**{**GOOD_BLOCK, "dtype": "<i4"})]),
    ("bad_block", [b"samples.a", _payload(**{**GOOD_BLOCK, "fields": []})]),
    ("bad_block", [b"samples.a", _payload(**{**GOOD_BLOCK, "data": b"\x00" * 13})]),
    ("bad_block", [b"samples.a", _payload(**{**GOOD_BLOCK, "fields": ["x"] * N_FIELDS})]),
]


@pytest.mark.parametrize("reason, frames", MALFORMED)
def test_every_malformed_message_is_rejected_with_its_reason(reason, frames):
    assert reason in MESSAGE_REJECT_REASONS
    with pytest.raises(Rejected) as info:
        decode_samples(frames, LIMITS)
    assert info.value.reason == reason
