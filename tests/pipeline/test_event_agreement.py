"""Event agreement with human coders: the matching on hand-made spans, the coded-set readers, and
the streaming detectors against the naive I-VT on a small real subset (IRF and HFC at 60 Hz)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from distractd.models.evaluation import (
    AgreementPool, cohen_kappa, event_agreement, flags_from_spans, hfc_names, match_events,
    naive_ivt, read_hfc, read_irf, spans_from_flags,
)
from distractd.pipeline import FIELD_INDEX, Recording, empty_block


def test_matching_is_one_to_one_by_largest_overlap():
    reference = [(0.0, 1.0), (2.0, 3.0), (5.0, 6.0)]
    test = [(0.5, 2.2), (0.9, 1.5), (2.1, 2.9), (7.0, 8.0)]
    # (0.5, 2.2) overlaps the first by 0.5 and the second by 0.2; (0.9, 1.5) the first by 0.1
    np.testing.assert_array_equal(match_events(reference, test), [[0, 0], [1, 2]])
    scores = event_agreement(reference, test)
    assert scores["hits"] == 2 and scores["n_reference"] == 3 and scores["n_test"] == 4
    assert scores["f1"] == pytest.approx(4 / 7)
    assert scores["rto_onset_s"] == pytest.approx((0.5 + 0.1) / 2)
    assert scores["rtd_onset_s"] == pytest.approx(0.2)
    assert scores["rto_offset_s"] == pytest.approx((1.2 - 0.1) / 2)
    assert scores["rtd_offset_s"] == pytest.approx(0.65)


def test_one_test_event_spanning_two_reference_events_is_one_hit():
    scores = event_agreement([(0.0, 1.0), (1.5, 2.5)], [(0.0, 2.5)])
    assert scores["hits"] == 1 and scores["f1"] == pytest.approx(2 / 3)


def test_touching_spans_match_and_empty_sets_score_nan():
    assert event_agreement([(0.0, 1.0)], [(1.0, 2.0)])["hits"] == 1
    assert event_agreement([(0.0, 1.0)], [(1.01, 2.0)])["hits"] == 0
    assert np.isnan(event_agreement([], [])["f1"])
    assert event_agreement([(0.0, 1.0)], [])["f1"] == 0.0


def test_reversed_span_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"test\[0\] must have end >= start"):
        event_agreement([(0.0, 1.0)], [(2.0, 1.0)])


def test_kappa_and_pool_on_hand_made_labels():
    a = np.array([1, 1, 0, 0, 0, 0, 1, 0], dtype=bool)
    b = np.array([1, 0, 0, 0, 0, 0, 1, 1], dtype=bool)
    # observed 6/8, chance 3/8 * 3/8 + 5/8 * 5/8 = 34/64
    assert cohen_kappa(a, b) == pytest.approx((0.75 - 34 / 64) / (1 - 34 / 64))
    pool = AgreementPool()
    pool.add([(0.0, 1.0)], a[:4], [(0.2, 0.8)], b[:4])
    pool.add([(0.0, 1.0), (3.0, 4.0)], a[4:], [(5.0, 6.0)], b[4:])
    scores = pool.result()
    assert (scores["hits"], scores["n_reference"], scores["n_test"]) == (1, 3, 2)
    assert scores["kappa"] == pytest.approx(cohen_kappa(a, b))


def test_flags_and_spans_round_trip_on_a_grid():
    rate = 60.0
    t = (np.arange(120) + 0.5) / rate
    spans = np.array([[10 / rate, 14 / rate], [30.4 / rate, 31.6 / rate], [50.3 / rate, 50.7 / rate]])
    flags = flags_from_spans(spans, len(t), rate)
    # 10..14 whole samples 10-13; 30.4-31.6 covers 60 % of samples 30 and 31; 40 % of 50: not most
    np.testing.assert_array_equal(np.flatnonzero(flags), [10, 11, 12, 13, 30, 31])
    np.testing.assert_allclose(spans_from_flags(t, flags, 1 / rate), [[10 / rate, 14 / rate],
                                                                    [30 / rate, 32 / rate]])


def test_irf_reader_keeps_the_expert_events_and_the_tracker_grid(shared_data):
    coded = read_irf(shared_data / "irf", "S1", 60.0)
    t = coded.recording.t
    assert np.allclose(np.diff(t), 1 / 60.0) and t[0] == pytest.approx(0.5 / 60.0)
    assert len(coded.coders["expert"]["blink"]) == 22
    assert coded.kinds == ("saccade", "fixation", "blink")
    assert read_irf(shared_data / "irf", "S3", 60.0).kinds == ("blink",)


def test_hfc_reader_gives_twelve_coders_with_saccades_between_fixations(shared_data):
    trial = hfc_names(shared_data / "hfc")[0]
    coded = read_hfc(shared_data / "hfc", trial, 60.0)
    assert len(coded.coders) == 12
    for events in coded.coders.values():
        fixations, saccades = events["fixation"], events["saccade"]
        assert len(saccades) < len(fixations)
        ends = set(np.round(fixations[:, 1], 6))
        assert all(round(start, 6) in ends for start in saccades[:, 0])
    span = coded.recording.t[-1]
    assert 14.0 < span < 15.5   # adult trials are 15 s


def test_missing_trial_names_the_file(shared_data):
    with pytest.raises(FileNotFoundError, match="adult_nope"):
        read_hfc(shared_data / "hfc", "adult_nope", 60.0)


def test_naive_ivt_flags_fast_samples_only():
    block = empty_block(60)
    block[:, 0] = np.arange(60) / 60.0
    yaw = np.where(np.arange(60) >= 30, np.radians(2.0), 0.0)   # a 2 deg step: 120 deg/s
    for eye in ("r", "l"):
        block[:, FIELD_INDEX[f"gaze_{eye}_yaw"]] = yaw
        block[:, FIELD_INDEX[f"gaze_{eye}_pitch"]] = 0.0
    block[:, FIELD_INDEX["confidence"]] = 1.0
    block[45:48, FIELD_INDEX["confidence"]] = 0.0
    flags, spans = naive_ivt(Recording(block))
    np.testing.assert_array_equal(np.flatnonzero(flags["saccade"]), [30])
    np.testing.assert_array_equal(np.flatnonzero(flags["blink"]), [45, 46, 47])
    assert len(spans["fixation"]) == 3


def _real_events_benchmark():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "real_events.py"
    spec = importlib.util.spec_from_file_location("real_events", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_detectors_beat_the_naive_ivt_on_a_real_subset_at_60_hz(shared_data):
    """IRF S1-S2 and two HFC adult trials at 60 Hz, default settings (chosen leave-one-set-out).

    Measured (2026-11-25): IRF saccade F1 0.892 vs naive 0.756, blink 0.957; HFC fixation F1
    0.881 vs naive 0.785, the coders' mean pairwise F1 0.921. The margins are below those.
    """
    bench = _real_events_benchmark()
    records = []
    bench.run_events(records.append, rates=(60,), subset=True, data=shared_data)
    scores = {(r["set"], r["event"]): r for r in records}
    irf_saccade, hfc_fixation = scores["irf", "saccade"], scores["hfc", "fixation"]
    assert irf_saccade["detector_f1"] >= irf_saccade["naive_f1"] + 0.10
    assert irf_saccade["detector_f1"] >= 0.86
    assert hfc_fixation["detector_f1"] >= hfc_fixation["naive_f1"] + 0.06
    assert hfc_fixation["detector_f1"] >= hfc_fixation["coders_f1"] - 0.07
    assert scores["hfc", "saccade"]["detector_f1"] >= scores["hfc", "saccade"]["naive_f1"] + 0.05
    assert scores["irf", "blink"]["detector_f1"] >= 0.93
    assert hfc_fixation["n_coders"] == 12 and abs(irf_saccade["detector_rto_onset_s"]) < 0.01
