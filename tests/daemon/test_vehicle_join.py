"""Vehicle samples on their own topic, joined to the same stream's eye samples by time: the join
alone on a simulated drive's real samples, then the daemon as a real subprocess."""

import time

import numpy as np
import zmq

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_recording
from distractd.daemon._vehicle import VehicleJoin
from distractd.pipeline import PipelineConfig, Recording, StreamProcessor
from distractd.pipeline.formats import FIELD_INDEX, VEHICLE_FIELDS, encode_block
from distractd.simulators import replay, simulate_drive

from ._published import states_of

DRIVE = simulate_drive(7, duration_s=20.0)
COLUMNS = [FIELD_INDEX[name] for name in VEHICLE_FIELDS]
SKEW_S = 0.005  # the car's samples come a little after the eye samples they were cut from


def split(samples, every=3):
    """The drive's samples as an eye source (vehicle fields NaN) and a car at a third of its
    rate (every ``every``-th sample's vehicle fields, ``SKEW_S`` later)."""
    eyes = samples.copy()
    eyes[:, COLUMNS] = np.nan
    car = np.full_like(samples[::every], np.nan)
    car[:, 0] = samples[::every, 0] + SKEW_S
    car[:, COLUMNS] = samples[::every][:, COLUMNS]
    return eyes, car


def held(eyes, car, max_age_s):
    """What each eye sample must take: the latest car sample at or before it, at most
    ``max_age_s`` older (a plain loop, not the join's arithmetic)."""
    expected = np.full((len(eyes), len(COLUMNS)), np.nan)
    for i, t in enumerate(eyes[:, 0]):
        before = [j for j in range(len(car)) if car[j, 0] <= t]
        if before and t - car[before[-1], 0] <= max_age_s:
            expected[i] = car[before[-1], COLUMNS]
    return expected


def test_each_eye_sample_takes_the_latest_vehicle_sample_no_older_than_the_bound():
    options = dict(DEFAULTS["vehicle"])
    eyes, car = split(DRIVE.samples[:600])
    car = np.delete(car, np.s_[100:120], axis=0)  # the car silent for 1 s: eye samples stay NaN
    join = VehicleJoin(options, 0.0)
    joined = []
    sent = 0
    # As the daemon does: a hop of eye samples fed after the car samples received by then.
    for start in range(0, len(eyes), 30):
        chunk = eyes[start:start + 30]
        until = int(np.searchsorted(car[:, 0], chunk[-1, 0], side="right"))
        assert join.add(car[sent:until]) == (0, 0)
        sent = until
        joined.append(join.fill(chunk.copy()))
    joined = np.concatenate(joined)
    expected = held(eyes, car, options["max_age_s"])
    np.testing.assert_array_equal(joined[:, COLUMNS], expected)
    gap = (eyes[:, 0] > car[99, 0] + options["max_age_s"]) & (eyes[:, 0] < car[100, 0])
    assert gap.sum() > 30 and np.isnan(joined[gap][:, COLUMNS]).all()
    assert np.isfinite(joined[~gap][3:, COLUMNS]).all()
    np.testing.assert_array_equal(np.delete(joined, COLUMNS, axis=1),
                                  np.delete(eyes, COLUMNS, axis=1))
    assert join.n <= 3  # only what a later eye sample can still use is kept


def test_late_and_overflowing_vehicle_samples_are_counted():
    options = {**DEFAULTS["vehicle"], "buffer_samples": 50}
    eyes, car = split(DRIVE.samples[:600])
    join = VehicleJoin(options, 0.0)
    assert join.add(car[:40]) == (0, 0)
    assert join.add(car[30:45]) == (10, 0)  # 10 at or before the newest: late; 5 taken
    assert join.add(car[45:60]) == (0, 10)  # 55 + 15 over 50: the 10 oldest dropped
    assert join.t[:join.n].tolist() == car[10:60, 0].tolist()
    join.fill(eyes[eyes[:, 0] < car[59, 0]].copy())
    assert join.t[:join.n].tolist() == car[58:60, 0].tolist()  # what later eyes can still use
    # Older than max_age_s before the newest eye sample joined: no eye sample can use them.
    stale = car[60:70].copy()
    stale[:, 0] = eyes[eyes[:, 0] < car[59, 0]][-1, 0] - options["max_age_s"] - 0.01
    stale[:, 0] += np.arange(10) * 1e-4
    assert join.add(stale) == (10, 0)
    assert join.add(np.array([[np.nan] * car.shape[1]])) == (1, 0)
    assert join.add(car[:0]) == (0, 0)
    later = car[70:80].copy()
    later[4, 0] = np.nan  # one sample without a time: only it is dropped
    assert join.add(later) == (1, 0)
    assert join.t[:join.n].tolist() == car[[58, 59, 70, 71, 72, 73, 75, 76, 77, 78, 79], 0].tolist()


def vehicle_frames(stream, block, seq):
    frames = encode_block(stream, block, seq)
    return [b"vehicle." + stream.encode("ascii"), frames[1]]


LAST_WINDOW_T = 19.0
"""The last window of the 20 s drive (windows end on the 0.5 s hop grid)."""


def last_t(messages, stream):
    states = states_of(messages, stream)
    return states[-1]["t"] if states else -1.0


def test_the_daemon_joins_counts_and_processes_a_car_alone(start_daemon):
    """One stream of eye samples with its car on the vehicle topic, the same eye samples without
    a car, and a car alone: the joined stream publishes the eye stream's states, the car alone
    is processed as a stream (its windows published), the joined values reach the pipeline,
    every vehicle sample is counted and the re-sent (late) ones are dropped by reason."""
    daemon = start_daemon(["vehicle.alone_after_s=0.3"])
    eyes, car = split(DRIVE.samples)
    context = zmq.Context()
    pub = context.socket(zmq.PUB)
    pub.linger = 5000
    pub.connect(daemon.input)
    time.sleep(0.5)  # slow joiner
    # The joined stream's car reads an impossible speed for 0.5 s: the pipeline's validation
    # must blank it in exactly the eye samples that took it.
    speeding = car.copy()
    speeding[100:110, FIELD_INDEX["speed"]] = 500.0
    n_car = n_late = sent = 0
    for seq, start in enumerate(range(0, len(eyes), 30)):
        chunk = eyes[start:start + 30]
        until = int(np.searchsorted(car[:, 0], chunk[-1, 0], side="right"))
        due = car[sent:until]
        pub.send_multipart(vehicle_frames("joined", speeding[sent:until], seq))
        pub.send_multipart(vehicle_frames("alone", due, seq))
        sent = until
        n_car += 2 * len(due)
        if seq == 5:  # the car re-sends its previous message: late
            pub.send_multipart(vehicle_frames("joined", due, seq))
            n_car += len(due)
            n_late += len(due)
        if seq == 7:  # an empty block: nothing to join, nothing dropped
            pub.send_multipart(vehicle_frames("joined", due[:0], seq))
        for stream in ("joined", "eyes"):
            pub.send_multipart(encode_block(stream, chunk, seq))
        time.sleep(0.02)
    pub.close()
    context.term()
    messages = daemon.collect(lambda m: all(last_t(m, stream) >= LAST_WINDOW_T
                                            for stream in ("joined", "eyes", "alone")),
                              timeout_s=60)
    deadline = time.monotonic() + 10
    while daemon.metric("distractd_vehicle_samples_total") != n_car \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daemon.metric("distractd_vehicle_samples_total") == n_car
    assert daemon.metric("distractd_samples_rejected_total", reason="vehicle_late") == n_late > 0
    assert daemon.metric("distractd_samples_rejected_total", reason="vehicle_overflow") == 0
    # Joined values reach the pipeline: its out_of_range count is the eye streams' and the car's
    # own (in process, the same pipeline) plus one per eye sample that took the 500 m/s.
    took = held(eyes, speeding, DEFAULTS["vehicle"]["max_age_s"])[:, VEHICLE_FIELDS.index("speed")]
    n_took = int(np.count_nonzero(took == 500.0))
    own = {name: StreamProcessor(PipelineConfig()) for name in ("eyes", "car")}
    own["eyes"].update(eyes)
    own["car"].update(car)
    expected = n_took + 2 * own["eyes"].rejected["out_of_range"] \
        + own["car"].rejected["out_of_range"]
    deadline = time.monotonic() + 10
    while daemon.metric("distractd_samples_rejected_total", reason="out_of_range") != expected \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert n_took > 20
    assert daemon.metric("distractd_samples_rejected_total", reason="out_of_range") == expected
    joined, eye_only = states_of(messages, "joined"), states_of(messages, "eyes")
    assert [(m["t"], m["state"], m["quality"]) for m in joined] \
        == [(m["t"], m["state"], m["quality"]) for m in eye_only]
    assert [m["t"] for m in joined] == np.arange(9.5, 19.01, 0.5).tolist()
    # The car alone: its windows over the whole drive (its first sample is 5 ms after the eyes'
    # first, too late for the 9.5 s window), scored by the shipped model's car sub-model and
    # undecided while its baseline warms up (the 60 s warm-up outlasts the 20 s drive).
    alone = states_of(messages, "alone")
    assert [m["t"] for m in alone] == np.arange(10.0, 19.01, 0.5).tolist()
    assert {m["state"] for m in alone} == {"unknown"}
    assert {m["model"] for m in alone} == {f"{load_model(default_model_path()).model_id}/vehicle"}
    assert "processed as vehicle samples alone" in daemon.stderr()
    assert f"rejected stream joined: {n_late} vehicle sample(s) dropped" in daemon.stderr()
    assert daemon.stop() == 0


def test_a_car_alone_is_decided_by_the_car_sub_model_as_predict_decides_it(start_daemon):
    """A stream of the car's samples alone (10 Hz, past the baseline's warm-up) through the real
    daemon: scored by the shipped model's ``vehicle`` sub-model, every window after the warm-up
    decided, each published state and score those of ``predict_recording`` on the same samples."""
    drive = simulate_drive(5, duration_s=100.0, protocol="visual-manual")
    samples = np.full_like(drive.samples[::6], np.nan)
    samples[:, 0] = drive.samples[::6, 0]
    samples[:, COLUMNS] = drive.samples[::6][:, COLUMNS]
    car = Recording(samples, drive.labels[::6])
    detector = load_model(default_model_path())
    expected = predict_recording(detector, car, DecisionRule(**decision_options(
        DEFAULTS, detector.feature_names)))
    assert expected.model_id == f"{detector.model_id}/vehicle"
    daemon = start_daemon()
    replay([car], daemon.input, speed=20, prefix="car")
    last = float(expected.windows.t_end[-5])   # the stream's last windows wait for its end
    published = states_of(daemon.collect(lambda m: last_t(m, "car") >= last, 60), "car")
    assert daemon.stop() == 0
    at = {float(t): i for i, t in enumerate(expected.windows.t_end)}
    rows = [(m, at[m["t"]]) for m in published]
    assert len(rows) >= len(expected.windows) - 5
    names = {1: "distracted", 0: "attentive", -1: "unknown"}
    assert [m["state"] for m, i in rows] == [names[int(expected.states[i])] for _, i in rows]
    decided = [(m, i) for m, i in rows if m["state"] != "unknown"]
    assert len(decided) >= 0.9 * sum(m["t"] > 70.0 for m, _ in rows)   # after the warm-up
    np.testing.assert_allclose([m["score"] for m, _ in decided],
                               [expected.scores[i] for _, i in decided], rtol=1e-9, atol=1e-12)
    assert {m["model"] for m, _ in rows} == {expected.model_id}
