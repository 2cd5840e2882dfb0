"""``distractd conformance``: the scenario scorecard, through the daemon as a real subprocess.

Simulated: per driver, the scenarios are scripted into calm drives (one per drive side and
tracker/driver setting, a drowsiness build-up in a drive of its own; :mod:`._scenarios`, the
lids, head and tracker changes by :mod:`._body_scripts`), replayed over ZeroMQ into
``distractd run`` (as ``demo`` does), and every alert the daemon publishes (glance, fatigue,
unresponsive) is matched to the scenario it falls in. Recorded: a
recording and a sidecar CSV of its annotated scenarios (docs/conformance.md) are scored the same
way, so a carmaker can run its own track tests.
"""

import csv
import json
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zmq
from tqdm import tqdm

from .._errors import ConfigError, unreadable
from ..pipeline import ALERT_KINDS, FATIGUE_ALERT_KINDS, T_MAX_S, Recording
from ..pipeline.formats import decode_output
from ._body_scripts import (
    closure_plan, drowsy_plan, lose_eyes, nod_heads, occlude_face, scale_aperture,
    script_eyelids, shift_head, slump,
)
from ._demo import running_daemon
from ._replay import replay, stream_ids
from ._scenarios import (
    FAMILIES, LOST_FRACTION, REFERENCE_APERTURE_MM, SILENCE_AFTER_S, WARMUP_S, layout_drive,
    mirror_left_hand, scenario_library,
)
from ._simulate import cohort_seeds, simulate_drive_truth

__all__ = ["run_conformance", "score_recording", "read_annotations", "judge", "headline"]

EXPECTED = (*ALERT_KINDS, *FATIGUE_ALERT_KINDS, "unresponsive", "none")
"""What a scenario may expect: the glance alerts, the fatigue alerts, the escalation's top-level
``unresponsive`` alert (docs/daemon.md) or silence."""
_ALERT_DETAILS = ("away_s", "closed_s", "perclos")
_END_MARGIN_S = 10.0
"""The last window published for a stream ends up to a window length before the stream does."""
_ANNOTATION_COLUMNS = ("name", "family", "start_s", "end_s", "expected", "limit_s")


def judge(alerts, name, family, start_s, end_s, expected, limit_s, reached_s=np.inf,
          earliest_s=0.0):
    """Score one scenario against the alerts (dicts with ``kind`` and ``t``) of its stream.

    The alerts that count are those raised from ``start_s`` until ``SILENCE_AFTER_S`` after the
    later of ``end_s`` and the deadline ``start_s + limit_s``. A positive scenario passes when the
    first alert of the ``expected`` kind came by the deadline and not before ``earliest_s`` after
    the start (a drowsiness warning while still alert); ``"none"`` passes when no alert of any
    kind came. A scenario the daemon's published states did not reach (``reached_s``) fails as
    ``"not processed"``.
    """
    until = max(end_s, start_s + (limit_s or 0.0)) + SILENCE_AFTER_S
    row = {"name": name, "family": family, "expected": expected,
           "limit_s": None if limit_s is None else round(float(limit_s), 3),
           "earliest_s": round(float(earliest_s), 3), "start_s": round(float(start_s), 3)}
    if reached_s < until:
        return {**row, "got": ["not processed"], "latency_s": None, "pass": False, "alerts": []}
    inside = sorted((a for a in alerts if start_s <= a["t"] <= until), key=lambda a: a["t"])
    if expected == "none":
        latency = None
        passed = not inside
    else:
        hits = [a["t"] - start_s for a in inside if a["kind"] == expected]
        latency = round(hits[0], 3) if hits else None
        passed = latency is not None and earliest_s <= latency <= limit_s
    return {**row, "got": sorted({a["kind"] for a in inside}) or ["none"], "latency_s": latency,
            "pass": bool(passed), "alerts": [_alert_record(a) for a in inside]}


def _alert_record(alert):
    """An alert as the scorecard keeps it: kind, time, its detail numbers and the glances or
    eye closures it was based on (whichever it carries)."""
    record = {"kind": alert["kind"], "t": round(alert["t"], 3)}
    for key in _ALERT_DETAILS:
        if alert.get(key) is not None:
            record[key] = round(alert[key], 3)
    for key in ("glances", "closures"):
        if alert.get(key):
            record[key] = [[round(a, 3), round(b, 3)] for a, b in alert[key]]
    return record


class _AlertCollector(threading.Thread):
    """Subscribe to the daemon's events and states; keep the alerts per stream."""

    def __init__(self, endpoint):
        super().__init__(daemon=True)
        self.endpoint = endpoint
        self.alerts = {}
        self.reached = {}
        self.messages = 0
        self._done = threading.Event()

    def run(self):
        with zmq.Context() as context, context.socket(zmq.SUB) as sub:
            sub.linger = 0
            sub.rcvhwm = 0   # keep everything: a full queue would drop alerts silently
            sub.subscribe(b"state.")
            sub.subscribe(b"event.")
            sub.connect(self.endpoint)
            while not self._done.is_set():
                if not sub.poll(100):
                    continue
                kind, stream, message = decode_output(sub.recv_multipart())
                self.messages += 1
                if kind == "event" and message.get("type") == "alert":
                    self.alerts.setdefault(stream, []).append(message)
                elif kind == "state":
                    self.reached[stream] = max(self.reached.get(stream, 0.0), message["t"])

    def wait_for(self, ends, stall_s):
        """Wait until every stream's states reached its end time (``ends``: stream -> s), or
        until nothing arrived for ``stall_s`` (a loaded machine can hold the daemon for a while,
        so only a long silence ends the wait)."""
        count, since = self.messages, time.monotonic()
        while time.monotonic() - since < stall_s:
            if all(self.reached.get(stream, 0.0) >= end for stream, end in ends.items()):
                return
            time.sleep(0.2)
            if self.messages != count:
                count, since = self.messages, time.monotonic()

    def stop(self):
        self._done.set()
        self.join(timeout=5)


def _through_daemon(recordings, speed, progress=False):
    """Replay recordings into a fresh daemon; return each one's alerts and the stream time its
    published states reached (the scenarios after it were not processed). ``progress``: a bar
    over the replayed stream time on standard error."""
    ids = [names[0] for names in stream_ids(recordings)]
    ends = {name: float(r.t[-1]) - _END_MARGIN_S for name, r in zip(ids, recordings)}
    longest = max(float(r.t[-1] - r.t[0]) for r in recordings)
    with running_daemon() as daemon:
        collector = _AlertCollector(daemon.output)
        collector.start()
        time.sleep(0.3)
        with tqdm(total=round(longest), desc="replay", unit="s", file=sys.stderr, leave=False,
                  disable=not progress) as bar:
            def advance(_stream, t_last, _sent):
                bar.update(max(round(t_last) - bar.n, 0))

            replay(recordings, daemon.input, speed=speed, on_send=advance)
        collector.wait_for(ends, stall_s=60.0)
        collector.stop()
    if daemon.status != 0:
        raise ConfigError(f"conformance: the daemon exited with status {daemon.status}")
    return [(collector.alerts.get(name, []), collector.reached.get(name, 0.0)) for name in ids]


@dataclass
class _DrivePlan:
    """One simulated drive of a run before it is simulated: its driver, settings, scenarios and
    their starts, its length (s) and the random stream its body scripts go on drawing from."""

    driver_seed: int
    drive: int
    key: tuple
    scenarios: list
    starts: np.ndarray
    length_s: float
    rng: np.random.Generator


def _plan_drives(seed, n_drivers, sides, families, only):
    """Every simulated drive of the run, laid out but not simulated (cheap: the run's size and
    an estimate of its duration are known before the work starts)."""
    library = [s for s in scenario_library(families) if only is None or s.name in only]
    if not library:
        raise ConfigError(f"conformance: no scenario of families {list(families)} is named "
                          f"in {sorted(only or ())}")
    groups = {}
    for scenario in library:
        for side in sides:
            groups.setdefault((side, *scenario.setting), []).append(scenario)
    plans = []
    for index, driver_seed in enumerate(cohort_seeds(n_drivers, seed)):
        for drive, (key, scenarios) in enumerate(sorted(groups.items()), 1):
            rng = np.random.default_rng([seed, index, drive])
            warmup = WARMUP_S / (1 - LOST_FRACTION) if key[2] else WARMUP_S
            starts, length = layout_drive(scenarios, rng, warmup_s=warmup)
            plans.append(_DrivePlan(driver_seed, drive, key, scenarios, starts, length, rng))
    return plans


def _simulate(plan, rate_hz):
    """(recording, [(scenario, start_s)], natural) of one planned drive; ``natural`` holds the
    (start, end) times (s) of the driver's own long glances and time-sharing looks
    (:data:`~._behaviour.NATURAL_LONG_PER_H`), which are not calm driving either."""
    side, rate, eye_loss, occluded, aperture, offset, alone = plan.key
    rate = rate or rate_hz
    rng = plan.rng
    script = [g for s, t in zip(plan.scenarios, plan.starts) for g in s.at(t)]
    recording, truth = simulate_drive_truth(plan.driver_seed, plan.length_s, rate,
                                            drive=plan.drive, protocol="none", script=script)
    placed = list(zip(plan.scenarios, plan.starts))
    samples = _script_body(recording.samples, truth, placed, rng)
    if aperture != REFERENCE_APERTURE_MM:
        samples = scale_aperture(samples, aperture)
    if any(offset):
        samples = shift_head(samples, offset)
    if side == "left":
        samples = mirror_left_hand(samples)
    if eye_loss:
        samples = lose_eyes(samples, rng, LOST_FRACTION)
    if occluded:
        samples = occlude_face(samples, rng)
    tag = "-".join([f"sim-{plan.driver_seed}-{side}-{rate:g}hz"]
                   + ["eyeloss"] * eye_loss + ["occluded"] * occluded
                   + [f"{aperture:g}mm"] * (aperture != REFERENCE_APERTURE_MM)
                   + [f"seat{offset[1]:+.2f}m"] * any(offset) + [alone] * bool(alone))
    meta = {**recording.meta, "driver_id": tag, "drive_side": side}
    gaze = truth.gaze
    scripted = np.zeros(len(gaze), bool) if gaze.head_share is None else \
        ~np.isnan(gaze.head_share)
    own = (gaze.target == 5) & ~scripted
    natural = np.column_stack([gaze.saccade_start[own], gaze.start[own] + gaze.duration[own]])
    return Recording(samples, recording.labels, meta), placed, natural


def _drives(seed, n_drivers, sides, rate_hz, families, only):
    """Yield (recording, [(scenario, start_s)]) for every simulated drive of the run."""
    for plan in _plan_drives(seed, n_drivers, sides, families, only):
        yield _simulate(plan, rate_hz)[:2]


def _script_body(samples, truth, placed, rng):
    """The drive's scripted eye closures, drowsiness build-ups (lids and nods) and slumps."""
    closures = [c for s, t in placed for c in s.closures_at(t)]
    build_ups = [(t, s.drowsy_s) for s, t in placed if s.drowsy_s]
    if closures or build_ups:
        lids = closure_plan(closures)
        nods = np.empty((0, 2))
        for start, length in build_ups:
            plan, more = drowsy_plan(rng, truth.blinks, start, length)
            lids = _merge(lids, plan)
            nods = np.r_[nods, more]
        samples = script_eyelids(samples, truth.closure[truth.rows], lids)
        samples = nod_heads(samples, nods)
    for scenario, start in placed:
        if scenario.slump_s:
            samples = slump(samples, rng, start, scenario.slump_s)
    return samples


def _merge(a, b):
    """Two blink plans as one, in onset order."""
    columns = [np.r_[x, y] for x, y in zip((a.start, a.close_s, a.closed_s, a.open_s, a.depth),
                                           (b.start, b.close_s, b.closed_s, b.open_s, b.depth))]
    order = np.argsort(columns[0], kind="stable")
    return type(a)(*(column[order] for column in columns))


def _background(alerts, placed, natural, t_end, clear_s=4.0):
    """Alerts outside every scenario's window and every natural glance's (the driver's own long
    glances and time-sharing looks: an alert there may be a true one) after the warm-up (until
    the first scenario), and the calm driving time they fell in (s). Nothing after an
    unresponsive driver is calm driving (the car makes its minimum-risk stop)."""
    warmup_s = placed[0][1] - clear_s
    windows = [(t - clear_s, t_end if s.expected == "unresponsive" else
                t + s.span_s + max(s.limit_s or 0.0, 0.0) + SILENCE_AFTER_S + clear_s)
               for s, t in placed]
    windows += [(a - clear_s, b + SILENCE_AFTER_S + clear_s) for a, b in natural]
    busy = np.zeros(max(int(np.ceil(t_end * 10)), 1), bool)   # 0.1 s grid: windows may overlap
    for lo, hi in windows:
        busy[max(int(lo * 10), 0):max(int(np.ceil(hi * 10)), 0)] = True
    busy[:max(int(warmup_s * 10), 0)] = True
    outside = [a for a in alerts if a["t"] > warmup_s
               and not any(lo <= a["t"] <= hi for lo, hi in windows)]
    return outside, float((~busy).sum()) / 10


def run_conformance(out_dir, *, seed=0, n_drivers=8, sides=("right", "left"), rate_hz=60.0,
                    families=FAMILIES, only=None, speed=20.0, on_row=None, on_plan=None,
                    progress=False):
    """Run every scenario through the daemon; write ``scorecard.json``; return the scorecard.

    ``only`` (optional) keeps the scenarios of these names (a short subset); ``on_row``
    (optional) is called with each scored scenario as it is known; ``on_plan`` (optional) with
    the run's size before any work: ``scenarios``, ``drives``, ``simulated_s`` (driving time to
    simulate) and ``replay_s`` (the least wall time its replay takes at ``speed``).
    ``progress``: bars over the simulated and the replayed driving time on standard error.
    """
    plans = _plan_drives(seed, n_drivers, sides, families, only)
    simulated_s = sum(plan.length_s for plan in plans)
    if on_plan:
        on_plan({"scenarios": sum(len(p.scenarios) for p in plans), "drives": len(plans),
                 "simulated_s": round(simulated_s, 1),
                 "replay_s": round(max(plan.length_s for plan in plans) / speed, 1)})
    drives = []
    with tqdm(total=round(simulated_s), desc="simulate", unit="s", file=sys.stderr, leave=False,
              disable=not progress) as bar:
        for plan in plans:
            drives.append(_simulate(plan, rate_hz))
            bar.update(round(plan.length_s))
    alerts = _through_daemon([recording for recording, _, _ in drives], speed, progress)
    rows, background, calm_s = [], [], 0.0
    for (recording, placed, natural), (stream_alerts, reached) in zip(drives, alerts):
        driver = recording.meta["driver_id"]
        for scenario, start in placed:
            row = judge(stream_alerts, f"{driver}/{scenario.name}", scenario.family, start,
                        start + scenario.span_s, scenario.expected, scenario.limit_s, reached,
                        scenario.earliest_s)
            row["driver"] = driver
            rows.append(row)
            if on_row:
                on_row(row)
        outside, calm = _background(stream_alerts, placed, natural,
                                    min(float(recording.t[-1]), reached))
        background += [{"driver": driver, "kind": a["kind"], "t": a["t"]} for a in outside]
        calm_s += calm
    card = _scorecard(rows, {"seed": seed, "drivers": n_drivers, "drive_sides": list(sides),
                             "rate_hz": rate_hz, "families": list(families)})
    hours = max(calm_s / 3600, 1e-9)
    kinds = sorted({a["kind"] for a in background})
    card["background"] = {"calm_hours": round(calm_s / 3600, 3), "alerts": len(background),
                          "per_hour": round(len(background) / hours, 2),
                          "per_hour_by_kind": {k: round(sum(a["kind"] == k for a in background)
                                                        / hours, 2) for k in kinds},
                          "list": background}
    _write(out_dir, card)
    return card


def read_annotations(path):
    """The scenarios of a recording from a sidecar CSV (columns ``name, family, start_s, end_s,
    expected, limit_s``; ``limit_s`` empty for ``expected = none``). Errors name the row, the
    column and the value.

    A UTF-8 byte-order mark (Excel's "CSV UTF-8") is allowed; numbers are ASCII decimals
    (``float`` also reads other scripts' digits); times lie within ``T_MAX_S`` of zero and
    ``limit_s`` is positive and no larger.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            fieldnames, lines = reader.fieldnames, list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise unreadable(path, exc, ConfigError) from None
    missing = set(_ANNOTATION_COLUMNS) - set(fieldnames or ())
    if missing:
        raise ConfigError(f"{path}: missing column(s) {sorted(missing)}")
    rows = []
    for line, row in enumerate(lines, 2):
        where = f"{path}, line {line}"
        if row["expected"] not in EXPECTED:
            raise ConfigError(f"{where}: expected must be one of {EXPECTED}, got "
                              f"{row['expected']!r}")
        values = {}
        for column in ("start_s", "end_s", "limit_s"):
            text = (row[column] or "").strip()
            if column == "limit_s" and not text and row["expected"] == "none":
                values[column] = None
                continue
            value = values[column] = _ascii_number(text)
            if value is None:
                raise ConfigError(f"{where}: {column} must be a number, got {text[:40]!r}"
                                  + ("" if text.isascii() else " (ASCII digits only)"))
            if column == "limit_s" and not 0 < value <= T_MAX_S:
                raise ConfigError(f"{where}: limit_s must be > 0 and <= {T_MAX_S:g} s, got "
                                  f"{text!r}")
            if column != "limit_s" and not abs(value) <= T_MAX_S:
                raise ConfigError(f"{where}: {column} must be within +-{T_MAX_S:g} s, got "
                                  f"{text!r}")
        if values["end_s"] < values["start_s"]:
            raise ConfigError(f"{where}: end_s {values['end_s']} is before start_s "
                              f"{values['start_s']}")
        rows.append({"name": row["name"], "family": row["family"],
                     "expected": row["expected"], **values})
    return rows


def _ascii_number(text):
    """``text`` as a float when it is a number in ASCII, else None."""
    try:
        return float(text) if text.isascii() else None
    except ValueError:
        return None


def score_recording(recording, annotations, out_dir, *, speed=20.0, on_row=None):
    """Score a recording's annotated scenarios through the daemon; write ``scorecard.json``."""
    ((alerts, reached),) = _through_daemon([recording], speed)
    rows = []
    for a in annotations:
        row = judge(alerts, a["name"], a["family"], a["start_s"], a["end_s"], a["expected"],
                    a["limit_s"], reached)
        rows.append(row)
        if on_row:
            on_row(row)
    card = _scorecard(rows, {"recording": recording.meta.get("recording_id", "")})
    _write(out_dir, card)
    return card


def _tally(rows):
    passed = sum(row["pass"] for row in rows)
    return {"passed": passed, "total": len(rows),
            "share": round(passed / len(rows), 4) if rows else None}


def _floors(rows):
    """What two products with nothing to detect score on the same rows: one that never warns
    passes every silent row; one that raises every kind of alert all the time passes every
    positive row whose warning may come at once (a drowsiness row wants none in its first
    quarter) and no silent row."""
    never = sum(row["expected"] == "none" for row in rows)
    always = sum(row["expected"] != "none" and row["earliest_s"] <= 0.0 for row in rows)
    total = max(len(rows), 1)
    return {"never_warns": {"passed": never, "share": round(never / total, 4)},
            "always_warns": {"passed": always, "share": round(always / total, 4)}}


def _scorecard(rows, run):
    """The scorecard of scored rows: passed and failed, positives and negatives apart, the
    floors of the same rows and the tally per family."""
    passed = sum(row["pass"] for row in rows)
    by_family = {}
    for row in rows:
        tally = by_family.setdefault(row["family"], {"passed": 0, "failed": 0})
        tally["passed" if row["pass"] else "failed"] += 1
    return {"passed": passed, "failed": len(rows) - passed, "run": run,
            "positives": _tally([row for row in rows if row["expected"] != "none"]),
            "negatives": _tally([row for row in rows if row["expected"] == "none"]),
            "floors": _floors(rows), "families": by_family, "scenarios": rows}


def headline(card):
    """The scorecard's headline in one line: pass share beside both floors, positives and
    negatives apart, and (simulated runs) warnings per hour of calm background driving."""
    total = card["passed"] + card["failed"]
    floors = card["floors"]
    text = (f"{card['passed']} of {total} scenarios pass ({100 * card['passed'] / max(total, 1):.1f} %; "
            f"never warns {100 * floors['never_warns']['share']:.1f} %, always warns "
            f"{100 * floors['always_warns']['share']:.1f} %); positives "
            f"{card['positives']['passed']}/{card['positives']['total']}, negatives "
            f"{card['negatives']['passed']}/{card['negatives']['total']}")
    if "background" in card:
        text += (f"; background {card['background']['per_hour']:g} warnings per calm hour "
                 f"({card['background']['alerts']} in {card['background']['calm_hours']:g} h)")
    return text


def _write(out_dir, card):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scorecard.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
