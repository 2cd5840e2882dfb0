"""The ``distractd`` command: parses arguments, then calls one function of a wing.

Each subcommand is an entry of :data:`_COMMANDS`: its help, ``_declare_<name>(parser)`` declaring
its arguments, and ``_<name>(args) -> int`` running it. Only the chosen command's arguments are
declared, so ``distractd --help`` and ``--version`` import no wing (start-up stays a few tens of
milliseconds); a declaration may import its wing's constants (``choices``: the wings re-export
lazily, so a constant loads its own light module, not the wing's estimators or kernels), a command
the wing.

Output: a command with something to say hands a JSON-ready summary and its text form to
:func:`_report`; ``--json`` prints the summary as JSON, ``--quiet`` prints nothing (warnings and
errors still reach standard error). Errors are one line on standard error: a bad argument value
(checked while parsing by the argparse types below, :func:`_number` over the library's
:class:`~distractd._validation.Interval`, so the line names the option and its rule) or an
output path that cannot be written (checked before any long work) gives status 2;
a :class:`~distractd.DistractdError` (the wing names the file, field and value) or an operating
system error gives status 1. The module is long only because there are fifteen subcommands and
their help texts (about two thirds of the lines are argument declarations); the work of each is
one call into a wing.
"""

import argparse
import json
import os
import sys
from pathlib import Path

from . import __version__
from ._errors import ConfigError, DistractdError
from ._validation import Interval


def main(argv=None):
    """Run the command line; return the exit status."""
    argv = sys.argv[1:] if argv is None else [str(arg) for arg in argv]
    parser = _Parser(prog="distractd", description="Real-time driver-distraction detection.")
    parser.add_argument("--version", action="version", version=f"distractd {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True,
                                       parser_class=_Parser)
    chosen = next((arg for arg in argv if not arg.startswith("-")), None)
    for name, (help, declare, run) in _COMMANDS.items():
        command = subparsers.add_parser(name, help=help, description=help)
        command.set_defaults(run=run, command=name)
        if name == chosen:
            declare(command)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except DistractdError as exc:
        _say(args, "error", exc)
    except OSError as exc:  # the environment's refusal (disk full, permission), not a bug
        _say(args, "error", f"{exc.filename}: {exc.strerror}" if exc.filename else exc)
    except KeyboardInterrupt:
        return 130
    return 1


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line naming the command."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _say(args, level, message):
    print(f"distractd {args.command}: {level}: {message}", file=sys.stderr)


def _report(args, summary, text):
    """Print a command's outcome: ``text``, or ``summary`` as JSON with --json, or nothing with
    --quiet."""
    if args.quiet:
        return
    print(json.dumps(summary, indent=2) if args.json else text, flush=True)


def _add_output_options(parser, json=True):
    if json:
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print nothing but warnings and errors")


def _add_batch(parser):
    """--jobs and --scheduler: where batch work runs (distractd._parallel; needs the dask extra
    beyond one job)."""
    parser.add_argument("--jobs", type=_COUNT, default=1, metavar="N",
                        help="run on a local Dask cluster of N worker processes; the results "
                             "do not depend on it (default: %(default)s, no cluster)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on the Dask cluster of this scheduler (tcp://host:8786), "
                             "whose workers read the recordings at the paths given")


def _number(rule):
    """An argparse type: a number (an integer for an integer :class:`Interval`) that ``rule``
    accepts; anything else exits 2 with ``argument --option: must be <rule>, got <text>``."""
    def check(text):
        try:
            value = int(text) if rule.integer else float(text)
        except ValueError:
            value = text
        if not rule.accepts(value):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return value
    return check


_SEED = _number(Interval(0, None, integer=True))
_COUNT = _number(Interval(1, None, integer=True))
_COUNT_OR_ZERO = _number(Interval(0, None, integer=True))
_POSITIVE = _number(Interval(0, None, closed="neither"))
_NON_NEGATIVE = _number(Interval(0, None))
_FRACTION = _number(Interval(0, 1))
_PORT = _number(Interval(0, 65535, integer=True))
_REAL = _number(Interval(None, None))
_RATE_HZ = _number(Interval(1, 2000))  # simulate_drive's tracker rates
_LABELLED = _number(Interval(8, None, integer=True))  # training's and the schemes' n_labelled
_TRAIN = _number(Interval(10, None, integer=True))  # the cohort recipe's n_train


def _drive_duration(text):
    """A simulated drive's length: at least one window of the default pipeline, since a shorter
    drive gives no window to featurise, label, train on, predict or evaluate."""
    from .pipeline import PipelineConfig

    window_s = PipelineConfig().window_s
    return _number(Interval(window_s, None))(text)


def _stream_id(text):
    """A stream id (DESIGN §3): what the wire carries in the topic, checked by the wire's rule."""
    from .pipeline.formats import valid_stream_id

    if not valid_stream_id(text):
        raise argparse.ArgumentTypeError(f"must be a stream id of 1-128 characters of "
                                         f"[A-Za-z0-9_.:-], got {text!r}")
    return text


def _output_file_or_folder(text):
    """An existing writable folder, or an output file whose folder exists."""
    if Path(text).is_dir():
        _check_folder(Path(text).absolute())
        return text
    return _output_file(text)


def _output_file(text):
    """An output file whose folder exists and is writable (an argparse type: checked before the
    work starts)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, expected a file to write")
    _check_folder(path.absolute().parent)
    return text


def _output_in_form(suffixes, folder=False):
    """An argparse type: an output file whose suffix picks its form among ``suffixes`` (an
    unknown one is refused with the known list, before any work); with ``folder``, a path
    without a suffix, or an existing folder, is a folder (made when missing)."""
    def check(text):
        path = Path(text)
        if folder and (path.is_dir() or not path.suffix):
            return _output_folder(text)
        if path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text}: unknown suffix {path.suffix or 'none'!r}; known: {', '.join(suffixes)}"
                + (" (or a folder)" if folder else ""))
        return _output_file(text)
    return check


def _output_folder(text):
    """An output folder, made when missing: its nearest existing ancestor is a writable folder."""
    path = Path(text).absolute()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a folder")
    _check_folder(next(p for p in (path, *path.parents) if p.exists()))
    return text


def _output_file_made_folder(text):
    """An output file whose folder is made when missing."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, expected a file to write")
    _output_folder(str(Path(text).absolute().parent))
    return text


def _check_folder(folder):
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"folder {folder} is not writable")


def _declare_info(parser):
    parser.add_argument("path", help="recording file")
    _add_output_options(parser)


def _info(args):
    from .pipeline import describe, read_recording
    from .pipeline.formats import is_taamneh, read_taamneh

    path = Path(args.path)
    if path.suffix.lower() == ".csv" and path.is_file() and is_taamneh(path):
        recordings = read_taamneh(path)  # a subject file: one recording per drive, as predict
    else:
        recordings = [read_recording(path, backwards_ok=True)]  # counted, not refused
    summaries = [describe(recording) for recording in recordings]
    several = len(summaries) > 1
    text = "\n".join(_info_lines(f"{args.path} [{summary['meta']['recording_id']}]" if several
                                 else f"{args.path}", summary) for summary in summaries)
    _report(args, summaries[0] if len(summaries) == 1 else summaries, text)
    return 0


def _info_lines(title, summary):
    """The text of ``info`` for one recording's :func:`~distractd.pipeline.describe`."""
    imperfections = summary["imperfections"]
    rate = summary["rate_hz"]
    labels = summary["labels"]
    jitter = imperfections["jitter_ms"]
    lines = [
        title,
        f"  samples      {summary['samples']}",
        f"  duration     {summary['duration_s']:.3f} s" if summary["duration_s"] is not None
        else "  duration     beyond a float (timestamps near +-1e308)",
        f"  rate         {rate:.3f} Hz (measured)" if rate else "  rate         unknown",
        f"  fields       {', '.join(summary['fields_present'])}",
        *([f"  missing      {', '.join(summary['fields_missing'])}"]
          if summary["fields_missing"] else []),
        f"  labels       {labels['distracted']} distracted, {labels['attentive']} attentive, "
        f"{labels['unknown']} unknown samples in {summary['label_intervals']} intervals",
        f"  timing       {imperfections['duplicates']} duplicates, {imperfections['backwards']} "
        f"backwards, {imperfections['gaps']} gaps (~{imperfections['dropped_estimate']} dropped), "
        + (f"jitter {jitter:.3f} ms" if jitter is not None else "jitter unknown"),
        f"  track loss   {100 * imperfections['track_loss_fraction']:.2f} % of samples",
        *_meta_lines(summary["meta"]),
    ]
    return "\n".join(lines)


def _meta_lines(meta):
    """A recording's ``meta`` as aligned lines, a nested dict or list one entry a line."""
    width = max((len(key) for key in meta), default=0) + 6
    lines = []
    for key, value in meta.items():
        label = f"  meta.{key}".ljust(width + 2)
        if isinstance(value, dict) and value:
            lines.append(label.rstrip())
            lines += [f"    {name:<{max(map(len, value))}} {item}" for name, item in value.items()]
        elif isinstance(value, list) and value and isinstance(value[0], (list, dict)):
            lines.append(label.rstrip())
            lines += [f"    {' '.join(map(str, item)) if isinstance(item, list) else item}"
                      for item in value]
        else:
            lines.append(f"{label} {value}")
    return lines


def _declare_convert(parser):
    parser.add_argument("input", help="recording to read (.csv or binary)")
    from .pipeline.formats import RECORDING_SUFFIXES

    parser.add_argument("output", type=_output_in_form(RECORDING_SUFFIXES),
                        help="recording to write, its form by suffix: binary (.npz, .bin, .rec), CSV "
                             "(.csv) or Parquet (.parquet)")
    _add_output_options(parser)


def _convert(args):
    from .pipeline import read_recording, write_recording

    recording = read_recording(args.input)
    write_recording(recording, args.output)
    summary = {"input": args.input, "output": args.output, "samples": recording.n_samples,
               "duration_s": recording.duration_s}
    _report(args, summary, f"{args.output}: {recording.n_samples} samples, "
                           f"{recording.duration_s:.1f} s")
    return 0


def _declare_run(parser):
    parser.add_argument("--config", metavar="PATH", help="TOML configuration (default: built-in "
                        "defaults, as in config/distractd.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help="override one option (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="check the configuration and model, compile every kernel into "
                             "numba's cache (NUMBA_CACHE_DIR) as a start would, then exit; run at "
                             "install so that the first start is not a cold one")
    _add_output_options(parser)


def _run(args):
    from .daemon import Model, load_config, run

    if not args.check:
        return run(args.config, args.overrides)
    config = load_config(args.config, args.overrides)
    model = Model(config["model"]["path"], config["model"]["max_bytes"])
    _report(args, {"model": model.path, "model_id": model.detector.model_id},
            f"configuration and model {model.detector.model_id} ({model.path}) checked, kernels "
            f"compiled")
    return 0


def _declare_replay(parser):
    parser.add_argument("inputs", nargs="+", metavar="IN", help="recordings (binary or CSV)")
    parser.add_argument("--endpoint", default="tcp://127.0.0.1:5555",
                        help="daemon input endpoint to connect to (default: %(default)s)")
    parser.add_argument("--speed", type=_POSITIVE, default=1.0, help="time scale (default: 1)")
    parser.add_argument("--streams", type=_COUNT, default=1, metavar="K",
                        help="copies of each recording under distinct stream ids (default: 1)")
    parser.add_argument("--form", choices=("block", "map"), default="block",
                        help="wire form (default: %(default)s)")
    parser.add_argument("--block-samples", type=_COUNT, default=6,
                        help="samples per block message (default: %(default)s)")
    parser.add_argument("--stream-id", type=_stream_id,
                        help="stream id, 1-128 characters of [A-Za-z0-9_.:-] (default: the "
                             "recording's driver id)")
    parser.add_argument("--wait", type=_NON_NEGATIVE, default=5.0, metavar="SECONDS",
                        help="how long to wait for the daemon (default: %(default)s)")
    parser.add_argument("--driver", type=_stream_id,
                        help="name the streams' driver in every message (the daemon's driver "
                             "profiles, [profiles])")
    _add_output_options(parser)


def _replay(args):
    from tqdm import tqdm

    from .pipeline import read_recording
    from .simulators import replay

    recordings = [read_recording(path) for path in args.inputs]
    per_message = 1 if args.form == "map" else args.block_samples
    messages = args.streams * sum(-(-r.n_samples // per_message) for r in recordings)
    with tqdm(total=messages, desc="replay", unit="msg", file=sys.stderr, leave=False,
              disable=True if args.quiet else None) as bar:
        summary = replay(recordings, args.endpoint, speed=args.speed, copies=args.streams,
                         form=args.form, block_samples=args.block_samples, wait_s=args.wait,
                         prefix=args.stream_id, on_send=lambda *_: bar.update(),
                         driver=args.driver)
    _report(args, summary, f"replayed {summary['samples']} samples in {summary['messages']} "
                           f"messages on {summary['streams']} streams in "
                           f"{summary['elapsed_s']:.1f} s ({summary['behind_s']:.3f} s behind)")
    return 0


def _declare_profiles(parser):
    parser.add_argument("action", choices=("list", "erase"),
                        help="list the stored driver profiles, or erase some")
    parser.add_argument("drivers", nargs="*", type=_stream_id, metavar="DRIVER",
                        help="the drivers whose profiles erase deletes")
    parser.add_argument("--all", action="store_true", help="erase every profile")
    parser.add_argument("--config", metavar="PATH",
                        help="the daemon's TOML configuration, for profiles.dir")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help="override one option (repeatable)")
    _add_output_options(parser)


def _profiles(args):
    from .daemon import ProfileStore, load_config, profile_dir

    config = load_config(args.config, args.overrides)
    options = config["profiles"]
    store = ProfileStore(profile_dir(config), options["max_bytes"], options["max_age_days"])
    if args.action == "list":
        found = store.drivers()
        summary = {"dir": str(store.directory),
                   "profiles": [{"driver": driver, "path": str(path), "age_days":
                                 round(age_s / 86400, 3), "bytes": size}
                                for driver, path, age_s, size in found]}
        _report(args, summary, "\n".join([f"{store.directory}: {len(found)} profile(s)"] + [
            f"{driver}\t{age_s / 86400:.1f} days unused\t{size} bytes"
            for driver, _, age_s, size in found]))
        return 0
    if args.all == bool(args.drivers):
        raise ConfigError("profiles erase: name the drivers, or --all")
    drivers = [driver for driver, *_ in store.drivers()] if args.all else args.drivers
    erased = [driver for driver in drivers if store.erase(driver)]
    missing = sorted(set(drivers) - set(erased))
    _report(args, {"dir": str(store.directory), "erased": erased, "missing": missing},
            f"{store.directory}: erased {len(erased)} profile(s)"
            + (f"; none for {', '.join(missing)}" if missing else ""))
    return 1 if missing else 0


def _declare_pupil_emulator(parser):
    parser.add_argument("input", metavar="IN", help="recording (binary or CSV)")
    parser.add_argument("--port", type=_PORT, default=50020,
                        help="Pupil Remote port (default: %(default)s)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default: %(default)s)")
    parser.add_argument("--speed", type=_POSITIVE, default=1.0, help="time scale (default: 1)")
    parser.add_argument("--loop", action="store_true",
                        help="start the recording again at its end (default: the data stop, "
                             "Pupil Remote keeps answering)")
    parser.add_argument("--wait-subscriptions", type=_COUNT_OR_ZERO, default=0, metavar="N",
                        help="hold the first sample until N topic subscriptions reached the "
                             "backbone (default: 0, stream at once as Capture does)")
    _add_output_options(parser)


def _pupil_emulator(args):
    import signal
    import threading

    from .pipeline import read_recording
    from .simulators import PupilEmulator

    emulator = PupilEmulator(read_recording(args.input), port=args.port, host=args.host,
                             speed=args.speed, loop=args.loop,
                             wait_subscriptions=args.wait_subscriptions)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    sent = emulator.run(stop=stopped.is_set, on_ready=lambda e: args.quiet or args.json or print(
        f"Pupil Remote on tcp://{e.host}:{e.port}, backbone SUB_PORT {e.sub_port}, "
        f"PUB_PORT {e.pub_port}; serving until SIGINT/SIGTERM (Ctrl-C)", flush=True))
    _report(args, {"datums": sent, "passes": emulator.n_passes},
            f"sent {sent} datums in {emulator.n_passes} passes")
    return 0


def _declare_demo(parser):
    from .simulators import PROTOCOLS

    parser.add_argument("--duration", type=_drive_duration, default=600.0, metavar="SECONDS",
                        help="simulated drive length (default: %(default)s)")
    parser.add_argument("--speed", type=_POSITIVE, default=20.0,
                        help="replay time scale (default: %(default)s)")
    parser.add_argument("--seed", type=_SEED, default=7, help="simulator seed (default: %(default)s)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="visual-manual",
                        help="simulated protocol (default: %(default)s)")


def _demo(args):
    from .simulators import demo

    return demo(duration_s=args.duration, speed=args.speed, seed=args.seed,
                protocol=args.protocol)


def _declare_conformance(parser):
    from .simulators._families import FAMILIES

    parser.add_argument("--seed", type=_SEED, default=0, help="cohort seed (default: %(default)s)")
    parser.add_argument("--drivers", type=_COUNT, default=8, metavar="N",
                        help="simulated drivers (default: %(default)s)")
    parser.add_argument("--drive-side", choices=("left", "right"), default=None,
                        help="left- or right-hand drive only (default: both)")
    parser.add_argument("--rate", type=_number(Interval(10.0, 240.0)), default=60.0, metavar="HZ",
                        help="tracker rate of the main drives; robustness runs 30 and 60 Hz "
                             "(default: %(default)s)")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES),
                        help="scenario families (default: all)")
    parser.add_argument("--speed", type=_POSITIVE, default=20.0,
                        help="replay time scale (default: %(default)s)")
    parser.add_argument("--recording", metavar="PATH",
                        help="score this recording instead of simulated drivers (needs "
                             "--annotations)")
    parser.add_argument("--annotations", metavar="CSV",
                        help="the recording's scenarios: name,family,start_s,end_s,expected,"
                             "limit_s (docs/conformance.md)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where scorecard.json goes")
    _add_output_options(parser)


def _conformance(args):
    from .pipeline import read_recordings
    from .simulators._conformance import (
        headline, read_annotations, run_conformance, score_recording,
    )

    def row(r):
        if not (args.json or args.quiet):
            limit = "" if r["limit_s"] is None else f" within {r['limit_s']:.1f} s"
            latency = "" if r["latency_s"] is None else f" after {r['latency_s']:.2f} s"
            print(f"{'PASS' if r['pass'] else 'FAIL'}  {r['name']:<58} expected "
                  f"{r['expected']}{limit}; got {','.join(r['got'])}{latency}", flush=True)

    def plan(size):
        if not args.quiet:
            print(f"distractd conformance: {size['scenarios']} scenarios in {size['drives']} "
                  f"drives, {size['simulated_s'] / 3600:.1f} h of driving to simulate, then at "
                  f"least {size['replay_s'] / 60:.1f} min of replay at speed {args.speed:g}",
                  file=sys.stderr, flush=True)

    if (args.recording is None) != (args.annotations is None):
        _say(args, "error", "--recording and --annotations go together")
        return 2
    if args.recording:
        try:   # a bad sidecar is a bad argument (exit 2), not a failed scenario (exit 1)
            annotations = read_annotations(args.annotations)
        except ConfigError as exc:
            _say(args, "error", exc)
            return 2
        recordings = read_recordings(args.recording)
        if len(recordings) != 1:
            raise ConfigError(f"conformance: --recording must hold one recording, "
                              f"{args.recording} holds {len(recordings)}")
        card = score_recording(recordings[0], annotations, args.out, speed=args.speed,
                               on_row=row)
    else:
        sides = (args.drive_side,) if args.drive_side else ("right", "left")
        card = run_conformance(args.out, seed=args.seed, n_drivers=args.drivers, sides=sides,
                               rate_hz=args.rate, families=tuple(args.families),
                               speed=args.speed, on_row=row, on_plan=plan,
                               progress=sys.stderr.isatty() and not args.quiet)
    families = "; ".join(f"{name} {t['passed']}/{t['passed'] + t['failed']}"
                         for name, t in card["families"].items())
    _report(args, card, f"{headline(card)}; by family: {families}; scorecard in "
                        f"{Path(args.out) / 'scorecard.json'}")
    return 0 if card["failed"] == 0 else 1


def _add_pipeline_config(parser):
    parser.add_argument("--config", metavar="JSON",
                        help="pipeline settings as a JSON file (PipelineConfig.to_dict() keys)")
    parser.add_argument("--drive-side", choices=("left", "right"), default=None,
                        help="the driver's side of the car, for the mirrors' glance regions "
                             "(default: left; right for the simulator's drives)")


def _pipeline_config(args, **defaults):
    """The pipeline settings of ``--config`` and ``--drive-side`` over ``defaults``; None when
    nothing is given."""
    from .pipeline import PipelineConfig

    settings = dict(defaults)
    if args.config is not None:
        try:
            with open(args.config, encoding="utf-8") as file:
                loaded = json.load(file)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else exc
            raise ConfigError(f"{args.config}: unreadable pipeline settings ({reason})") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{args.config}: pipeline settings must be a JSON object")
        settings.update(loaded)
    if args.drive_side is not None:
        settings["drive_side"] = args.drive_side
    return PipelineConfig.from_dict(settings) if settings else None


def _declare_events(parser):
    parser.add_argument("input", help="recording to read (.csv or binary)")
    parser.add_argument("--out", required=True, type=_output_file,
                        help="CSV to write: t,saccade,blink,fixation,track_loss,"
                             "gaze_velocity_deg_s,rejected")
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _events(args):
    from .pipeline import EVENT_KINDS, detect_events, read_recording

    events = detect_events(read_recording(args.input), _pipeline_config(args))
    events.write_csv(args.out)
    counts = {f"{kind}s": int((events.events[:, 0] == i).sum())
              for i, kind in enumerate(EVENT_KINDS)}
    summary = {"output": args.out, "samples": len(events.t), **counts,
               "rejected": int((events.rejected != "").sum())}
    _report(args, summary, f"{args.out}: {len(events.t)} samples, " + ", ".join(
        f"{n} {name}" for name, n in counts.items()) + f", {summary['rejected']} rejected")
    return 0


def _declare_features(parser):
    from .pipeline import FEATURE_NAMES

    parser.description = (f"Compute the {len(FEATURE_NAMES)} window features; write one row per "
                          f"window: {', '.join(FEATURE_NAMES)}.")
    parser.add_argument("inputs", nargs="+", metavar="IN",
                        help="recordings (.csv, .parquet or binary), Taamneh et al. subject "
                             "files or folders of them")
    parser.add_argument("--out", required=True, type=_output_in_form(_WINDOW_SUFFIXES, True),
                        help="file to write, CSV (.csv) or Parquet (.parquet): t_start,t_end,"
                             "quality,label and the features; a folder (a path without suffix, "
                             "made when missing) receives <recording_id>.csv per recording")
    _add_batch(parser)
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _features(args):
    from ._parallel import batch_runner, recording_windows
    from .pipeline import PipelineConfig, require_windows

    config = _pipeline_config(args) or PipelineConfig()
    with batch_runner(args.jobs, args.scheduler) as runner:
        featured = recording_windows(args.inputs, config, runner,
                                     progress=sys.stderr.isatty() and not args.quiet)
    for item in featured:
        require_windows(item.source, item, item.windows, config.window_s)
    paths = _recording_outputs(args.out, [item.meta["recording_id"] for item in featured])
    for path, item in zip(paths, featured):
        _write_windows(item.windows, path)
    outputs = [{"input": item.source, "output": str(path), "windows": len(item.windows)}
               for path, item in zip(paths, featured)]
    summary = outputs[0] if len(outputs) == 1 else {"outputs": outputs}
    _report(args, summary, "\n".join(f"{o['output']}: {o['windows']} windows" for o in outputs))
    return 0


_WINDOW_SUFFIXES = (".csv", ".parquet")


def _write_windows(windows, path):
    """Windows as CSV or, for a ``.parquet`` path, Parquet (the same columns)."""
    from .pipeline import FEATURE_NAMES
    from .pipeline.formats import write_table

    if Path(path).suffix.lower() != ".parquet":
        windows.write_csv(path)
        return
    write_table(path, {"t_start": windows.t_start, "t_end": windows.t_end,
                       "quality": windows.quality, "label": windows.label.astype("int8"),
                       **dict(zip(FEATURE_NAMES, windows.X.T))})


def _recording_outputs(out, recording_ids):
    """The file of each recording: ``out`` itself for one (unless a folder: a path without
    suffix), else ``out/<recording_id>.csv`` (the folder made when missing)."""
    out = Path(out)
    if len(recording_ids) == 1 and not out.is_dir() and out.suffix:
        return [out]
    if out.exists() and not out.is_dir():
        raise ConfigError(f"the inputs hold {len(recording_ids)} recordings; --out {out} is a "
                          f"file, give a folder for one CSV each")
    out.mkdir(exist_ok=True)
    names = ["".join(c if c.isalnum() or c in "-_." else "_" for c in str(rid)) + ".csv"
             for rid in recording_ids]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"recordings share the file names {repeated} (their recording_id); "
                          f"give them to separate runs")
    return [out / name for name in names]


def _declare_label(parser):
    parser.add_argument("input", help="recording to read (.csv or binary)")
    parser.add_argument("--method", choices=("kmeans", "uselm", "elm-jec", "elm-clr"),
                        default="elm-jec",
                        help="clustering method (default: %(default)s)")
    parser.add_argument("--out", required=True, type=_output_file, metavar="CSV",
                        help="per-window CSV: t_start,t_end,cluster,label,confidence,prior "
                             "(confidence: probability that the label is right)")
    parser.add_argument("--intervals", type=_output_file, metavar="CSV",
                        help="interval CSV start,end,label for editing (default: OUT with "
                             "suffix .intervals.csv)")
    parser.add_argument("--prior", default="default", metavar="MODEL",
                        help="cohort model whose scores inform and check the labels: a model "
                             "file, 'default' (the shipped model) or 'none' (default: "
                             "%(default)s)")
    parser.add_argument("--mapping", choices=("prior", "rule", "labels"),
                        help="map clusters by the prior, the gaze-dispersion rule or the "
                             "recording's own labels (default: prior, or rule with --prior none)")
    parser.add_argument("--min-quality", type=_FRACTION, default=0.5, metavar="FRACTION",
                        help="leave out windows with fewer valid samples (default: %(default)s)")
    parser.add_argument("--inputs", choices=("baseline", "drive"), default="baseline",
                        help="cluster windows judged against the driver's running baseline, or "
                             "the whole drive z-scored (default: %(default)s)")
    parser.add_argument("--features", choices=("auto", "all", "no-head-position", "no-location"),
                        default="auto",
                        help="features clustered on: chosen without labels (drift left out), "
                             "all, without the head-position means, or without every head/gaze "
                             "location mean (default: %(default)s)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="estimator parameter, e.g. --param lam=0.5 (repeatable)")
    parser.add_argument("--seed", type=_SEED, default=0, help="random seed (default: %(default)s)")
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _label(args):
    from .models import load_model
    from .models.clustering import label_recording
    from .pipeline import read_recording, write_intervals
    from .pipeline.formats import check_overwrite, recording_identity, write_label_identity

    params = {}
    for item in args.param:
        name, _, text = item.partition("=")
        try:
            params[name] = json.loads(text)
        except ValueError:
            raise ConfigError(f"--param must be NAME=VALUE with a JSON value, "
                              f"got {item!r}") from None
    detector = None
    if args.prior != "none":
        detector = load_model(args.prior)
    recording = read_recording(args.input)
    out = Path(args.out)
    intervals_path = args.intervals or str(out.with_name(out.stem + ".intervals.csv"))
    identity = recording_identity(recording, args.input)
    for existing in (out, intervals_path):   # never over another recording's labels
        check_overwrite(existing, identity)
    result = label_recording(recording, args.method, prior_model=detector,
                             config=_pipeline_config(args), representation=args.inputs,
                             mapping=args.mapping, min_quality=args.min_quality,
                             features=args.features, params=params, random_state=args.seed,
                             name=args.input)
    result.write_csv(out)
    intervals = result.intervals()
    write_intervals(intervals, intervals_path)
    for written in (out, intervals_path):
        write_label_identity(written, identity)
    summary = {"output": args.out, "intervals_output": intervals_path, "windows": len(result),
               "clustered": int((result.label >= 0).sum()),
               "distracted": int((result.label == 1).sum()),
               "attentive": int((result.label == 0).sum()), "method": args.method,
               "mapping": result.mapping, "intervals": len(intervals),
               "prior": None if detector is None else detector.model_id,
               "trust": result.trust, "warning": result.warning}
    kappa = result.trust["kappa_prior"]
    _report(args, summary, f"{len(result)} windows, {summary['clustered']} clustered with "
                           f"{args.method}: {summary['distracted']} distracted, "
                           f"{summary['attentive']} attentive (mapping: {result.mapping}); "
                           f"{len(intervals)} intervals in {intervals_path}\n"
                           f"expected right: {result.trust['expected_accuracy']:.0%} of windows"
                           + ("" if kappa is None else f"; agreement with model "
                                                        f"{summary['prior']}: kappa {kappa:.2f}"))
    if result.warning is not None:  # printed even with --quiet
        print(f"warning: {result.warning}", file=sys.stderr, flush=True)
    return 0


def _declare_segment(parser):
    parser.add_argument("input", help="recording to read (.csv or binary)")
    parser.add_argument("--method", choices=("aca", "haca"), default="aca")
    parser.add_argument("--k", type=_COUNT, default=4, help="number of clusters (top level)")
    parser.add_argument("--max-seconds", type=_POSITIVE, default=20.0,
                        help="longest segment, in seconds")
    parser.add_argument("--model", metavar="MODEL",
                        help="segment against the prototypes stored in this model artifact, with "
                             "its z-score and cluster labels (--method, --k, --max-seconds and "
                             "--seed then do not apply)")
    parser.add_argument("--inputs", choices=("baseline", "drive"), default="baseline",
                        help="segment windows judged against the driver's running baseline "
                             "(features chosen without labels), or raw features z-scored over "
                             "the drive (default: %(default)s)")
    parser.add_argument("--prior", default="default", metavar="MODEL",
                        help="cohort model whose view joins the features: a model file, "
                             "'default' (the shipped model) or 'none' (default: %(default)s)")
    parser.add_argument("--seed", type=_SEED, default=0, help="seed of the initialisations")
    parser.add_argument("--out", required=True, type=_output_file,
                        help="CSV to write: start,end (s, window end times),cluster,label")
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _segment(args):
    from .models import load_model
    from .models.segmentation import segment_recording
    from .pipeline import read_recording

    model = load_model(args.model) if args.model else None
    prior_model = None
    if model is None and args.prior != "none":
        prior_model = load_model(args.prior)
    segments = segment_recording(read_recording(args.input), model=model,
                                 prior_model=prior_model, config=_pipeline_config(args),
                                 method=args.method, n_clusters=args.k,
                                 max_seconds=args.max_seconds, inputs=args.inputs,
                                 random_state=args.seed, name=args.input)
    segments.write_csv(args.out)
    summary = {"output": args.out, "segments": len(segments),
               "frame_accuracy": segments.frame_accuracy,
               "model_label_accuracy": segments.model_label_accuracy}
    message = f"{len(segments)} segments"
    if segments.frame_accuracy is not None:
        message += (f"; frame accuracy (each cluster to its majority label) "
                    f"{segments.frame_accuracy:.3f}")
    if segments.model_label_accuracy is not None:
        message += f", with the model's cluster labels {segments.model_label_accuracy:.3f}"
    _report(args, summary, message)
    return 0


def _declare_simulate(parser):
    from .simulators import PROTOCOLS, TRACKERS

    parser.add_argument("--seed", type=_SEED, required=True, help="driver (or cohort) seed, >= 0")
    parser.add_argument("--drive", type=_COUNT_OR_ZERO, default=0, metavar="K",
                        help="which drive of the driver (same traits, new drive; default 0)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="cognitive",
                        help="secondary task (default: %(default)s)")
    parser.add_argument("--duration", type=_drive_duration, default=None, metavar="SECONDS",
                        help="drive length in seconds, at least one window of the default "
                             "pipeline (10 s) (default: the protocol, about 20-35 min)")
    parser.add_argument("--rate", type=_RATE_HZ, default=60.0, metavar="HZ",
                        help="tracker frame rate in Hz (default 60; sparse-gaze: the export "
                             "rate, at most 60, Taamneh's is 1)")
    parser.add_argument("--tracker", choices=list(TRACKERS), default="full",
                        help="full: every field at --rate; sparse-gaze: gaze and a 0/1 "
                             "confidence only, point-sampled from a 60 Hz faceLAB "
                             "(default: %(default)s)")
    parser.add_argument("--cohort", type=_COUNT, default=None, metavar="N",
                        help="simulate N drivers, written as <stem>_<NN><suffix> next to --out "
                             "(<stem>_<NN>_d<K><suffix> with --drives > 1)")
    parser.add_argument("--drives", type=_COUNT, default=1, metavar="M",
                        help="with --cohort: drives 0..M-1 of every driver (default 1)")
    parser.add_argument("--out", required=True, type=_output_file_made_folder, metavar="PATH",
                        help="recording to write (its folder is made when missing)")
    for switch in ("noise", "track-loss", "drops", "duplicates", "jitter"):
        parser.add_argument(f"--no-{switch}", dest=switch.replace("-", "_"),
                            action="store_false", help=f"switch {switch} off")
    _add_output_options(parser)


def _simulate(args):
    from tqdm import tqdm

    from .pipeline import write_recording
    from .simulators import cohort_seeds, simulate_drive

    options = {name: getattr(args, name) for name in (
        "noise", "track_loss", "drops", "duplicates", "jitter")}
    out = Path(args.out)
    if args.cohort is None:
        if args.drives != 1:
            raise ConfigError("--drives needs --cohort; for one drive of one driver use --drive")
        jobs = [(args.seed, args.drive, out, None)]
    else:
        if args.drive != 0:
            raise ConfigError("--drive is for a single driver; with --cohort use --drives")
        width = max(2, len(str(args.cohort - 1)))
        jobs = [(seed, drive, out.with_name(
                    f"{out.stem}_{i:0{width}d}" + (f"_d{drive}" if args.drives > 1 else "")
                    + out.suffix), i)
                for i, seed in enumerate(cohort_seeds(args.cohort, args.seed))
                for drive in range(args.drives)]
    summary = []
    for seed, drive, path, index in tqdm(jobs, desc="simulate", unit="drive", file=sys.stderr,
                                         disable=True if args.quiet else None):
        recording = simulate_drive(seed, args.duration, args.rate, drive=drive,
                                   protocol=args.protocol, tracker=args.tracker, **options)
        if index is not None:
            recording.meta["cohort"] = {"seed": args.seed, "index": index, "size": args.cohort}
        path.parent.mkdir(parents=True, exist_ok=True)
        write_recording(recording, path)
        summary.append({"path": str(path), "seed": seed, "drive": drive,
                        "protocol": args.protocol,
                        "recording_id": recording.meta["recording_id"],
                        "samples": recording.n_samples, "duration_s": recording.duration_s,
                        "distracted_fraction": float((recording.labels == 1).mean())})
    _report(args, summary if args.cohort is not None else summary[0], "\n".join(
        f"{drive['path']}: {drive['samples']} samples, {drive['duration_s']:.1f} s, "
        f"{100 * drive['distracted_fraction']:.1f} % distracted" for drive in summary))
    return 0


def _declare_train(parser):
    from .models.detectors import MODELS

    parser.add_argument("inputs", nargs="+", metavar="IN",
                        help="labelled recordings (one driver's, or with --cohort many drivers' "
                             "recordings, Taamneh et al. files or folders)")
    parser.add_argument("--cohort", action="store_true",
                        help="train one model over every driver: per-stream baselines on, all "
                             "labelled windows (thinned), selection grouped by driver")
    parser.add_argument("--model", choices=MODELS, default="sselm",
                        help="detector (default: %(default)s, semi-supervised: a cohort model "
                             "of it adapts to a new driver, 'distractd adapt')")
    parser.add_argument("--features", nargs="+", metavar="NAME",
                        help="feature names (default: those with data in half the windows)")
    parser.add_argument("--labelled", type=_LABELLED, default=60, metavar="N",
                        help="per-driver: labelled windows drawn from the labels, the rest "
                             "unlabelled (default: %(default)s)")
    parser.add_argument("--train", type=_TRAIN, default=2000, metavar="N",
                        help="--cohort: most labelled training windows (default: %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="PROTOCOL",
                        help="--cohort: keep only the drives of these protocols (meta protocol, "
                             "e.g. normal texting for Taamneh et al.)")
    parser.add_argument("--operating-point", type=_REAL, metavar="SCORE", default=None,
                        help="--cohort: publish scores so that SCORE (the decision threshold, "
                             "smoothing.on) falls where the training drivers, each scored by a "
                             "model fitted without them, have the best G-mean, averaged over "
                             "the task protocols (default: the rule's default threshold, 1.0)")
    parser.add_argument("--sparse-model", metavar="MODEL",
                        help="--cohort: a model needing only gaze at any rate (e.g. trained on "
                             "real 1 Hz drives) to hold as the sparse_gaze sub-model, instead of "
                             "one fitted on IN (and its sparse_gaze_vehicle and vehicle "
                             "sub-models, if it has them)")
    parser.add_argument("--vehicle", action="store_true",
                        help="--cohort: also fit the sub-models that read the car's signals "
                             "(eyes_vehicle, sparse_gaze_vehicle, vehicle) on the vehicle "
                             "features with data in half of the windows")
    parser.add_argument("--labels", nargs="+", metavar="CSV",
                        help="corrected labels, each of its recording (named in its "
                             "<file>.recording.json): per-driver, one file per IN, interval CSV "
                             "start,end,label or per-window CSV t_start,t_end,...,label; with "
                             "--cohort, interval CSVs or folders of them, matched to the "
                             "recordings by id (recordings without keep their own labels)")
    parser.add_argument("--grid", choices=("full", "small"), default=None,
                        help="hyper-parameter grid (default: full per driver, small --cohort)")
    parser.add_argument("--segment-windows", type=_COUNT_OR_ZERO, default=400, metavar="N",
                        help="per-driver: windows segmented for the online segmenter's "
                             "prototypes, 0 for none (default: %(default)s)")
    parser.add_argument("--seed", type=_SEED, default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--out", required=True, type=_output_file, metavar="MODEL",
                        help="model file to write")
    _add_batch(parser)  # --cohort's features
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _train(args):
    from ._parallel import batch_runner
    from .models import load_model, save_model
    from .models.detectors import read_labels, train_cohort, train_model, training_windows
    from .pipeline import PipelineConfig, read_recording
    from .pipeline.formats import check_label_file, label_extent, recording_identity

    config = _pipeline_config(args) or PipelineConfig()
    if args.cohort:
        model = args.model
        sparse = None if args.sparse_model is None else load_model(args.sparse_model)
        sources, relabelled = _cohort_labelled(args.inputs, args.labels)
        with batch_runner(args.jobs, args.scheduler) as runner:
            estimator, parts = train_cohort(sources, model, features=args.features,
                                            grid=args.grid or "small", n_train=args.train,
                                            config=config, seed=args.seed, runner=runner,
                                            sparse_model=sparse, protocols=args.only,
                                            operating_point=_operating_point(args),
                                            vehicle=args.vehicle,
                                            progress=sys.stderr.isatty() and not args.quiet)
        model_id = save_model(args.out, estimator, **parts)
        drives, drivers = parts["summary"]["n_recordings"], len(parts["summary"]["drivers"])
        summary = {"output": args.out, "model": model, "model_id": model_id, "cohort": True,
                   "drives": drives, "drivers": drivers,
                   "features": list(parts["feature_names"]), "label_files": relabelled}
        point = parts["summary"].get("operating_point")
        summary["operating_point"] = point
        _report(args, summary, f"{args.out}: cohort {model} model {model_id} from "
                               f"{drives} drives of {drivers} drivers, features "
                               f"{', '.join(parts['feature_names'])}"
                               + (f"; labels of {len(relabelled)} drives from --labels"
                                  if args.labels else "")
                               + ("" if point is None else "\n" + _operating_line(
                                   point, load_model("default").summary.get("operating_point"))))
        return 0
    if args.jobs != 1 or args.scheduler or args.only or args.sparse_model or args.vehicle \
            or args.operating_point is not None:
        raise ConfigError("train: --jobs, --scheduler, --only, --operating-point, "
                          "--sparse-model and --vehicle apply to train --cohort")
    model = args.model
    recordings = [read_recording(path) for path in args.inputs]
    for path, recording, labels in zip(args.inputs, recordings, args.labels or ()):
        check_label_file(labels, recording_identity(recording, path),
                         label_extent(*read_labels(labels)))
    windows = training_windows(recordings, config, args.labels)
    model_id = train_model(args.out, windows, model, n_labelled=args.labelled,
                           grid=args.grid or "full", seed=args.seed, config=config,
                           segment_frames=args.segment_windows, features=args.features)
    _report(args, {"output": args.out, "model": model, "model_id": model_id, "cohort": False},
            f"{args.out}: {model} model {model_id}")
    return 0


def _operating_line(point, shipped):
    """Where a cohort model's threshold sits and how its training drivers, scored out of fold,
    compare with the shipped model's, chosen the same way on its own cohort."""
    from .models.detectors import decision_options

    on = decision_options()["on"]

    def per_kind(figures):
        return ", ".join(f"{kind} {g:.3f}" for kind, g in figures.items())

    line = (f"operating point: score {point['score']:g} is where this model's training drivers, "
            f"each scored by a model fitted without them, have the best G-mean "
            f"({per_kind(point['g_mean'])}); the daemon's threshold (smoothing.on) is {on:g}")
    if shipped is not None:
        line += (f"; the shipped model, chosen the same way on its own drivers: "
                 f"{per_kind(shipped['g_mean'])}. Compare the two on a driver neither saw: "
                 f"distractd predict MODEL DRIVE and distractd predict default DRIVE")
    return line


def _operating_point(args):
    """``train --cohort``'s operating point: ``--operating-point``, else the decision rule's
    default threshold (the daemon's ``smoothing.on`` default)."""
    from .models.detectors import decision_options

    return decision_options()["on"] if args.operating_point is None else args.operating_point


def _cohort_labelled(inputs, labels):
    """``train --cohort``'s sources, with the labels of ``--labels`` applied to the recordings
    they name (read here for that), and ``{recording_id: label file}`` of those."""
    from .pipeline import labels_from_intervals, read_recordings
    from .pipeline.formats import labels_by_recording, recording_identity

    if not labels:
        return inputs, {}
    recordings = [recording for path in inputs for recording in read_recordings(path)]
    found = labels_by_recording(labels, [recording_identity(r) for r in recordings])
    for recording in recordings:
        if recording.meta["recording_id"] in found:
            _, intervals = found[recording.meta["recording_id"]]
            recording.labels = labels_from_intervals(recording.t, intervals)
    return recordings, {rid: str(path) for rid, (path, _) in found.items()}


def _declare_adapt(parser):
    parser.add_argument("model", metavar="MODEL", help="cohort model (train --cohort, sselm or "
                                                       "lapsvm), or 'default' (the shipped one)")
    parser.add_argument("inputs", nargs="+", metavar="IN", help="the new driver's recordings")
    parser.add_argument("--unlabelled", type=_COUNT, default=1000, metavar="N",
                        help="most of the driver's windows used (default: %(default)s)")
    parser.add_argument("--seed", type=_SEED, default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--out", required=True, type=_output_file, metavar="MODEL",
                        help="adapted model to write")
    _add_output_options(parser)


def _adapt(args):
    from .models import load_model, save_model
    from .models.detectors import adapt_detector
    from .pipeline import read_recordings

    detector = load_model(args.model)
    recordings = [r for path in args.inputs for r in read_recordings(path)]
    estimator, parts = adapt_detector(detector, recordings, n_unlabelled=args.unlabelled,
                                      seed=args.seed)
    check = parts["summary"]["adapted"]["check"]
    judged = (f"G-mean on {check['windows']} held-back windows of "
              f"{'the driver' if check['on'] == 'driver' else 'the cohort'}: "
              f"{check['before']:.3f} before, {check['after']:.3f} after")
    if check["worse"]:
        raise ConfigError(f"adapt: not saved, the adapted model is worse ({judged}); keep "
                          f"{args.model}")
    model_id = save_model(args.out, estimator, **parts)
    n_unlabelled = parts["summary"]["adapted"]["n_unlabelled"]
    summary = {"output": args.out, "model_id": model_id, "from": detector.model_id,
               "n_unlabelled": n_unlabelled, "drives": len(recordings), "check": check}
    _report(args, summary, f"{args.out}: model {model_id}, {detector.model_id} adapted with "
                           f"{n_unlabelled} unlabelled windows of {len(recordings)} drives; "
                           f"{judged}")
    return 0


def _declare_predict(parser):
    parser.add_argument("model", metavar="MODEL", help="model file written by train, or 'default' "
                                                       "(the shipped model)")
    parser.add_argument("input", metavar="IN",
                        help="recording to score (.csv, .parquet or binary), or a Taamneh et al. "
                             "subject file (one recording per drive)")
    parser.add_argument("--out", required=True, type=_output_file_or_folder, metavar="CSV",
                        help="CSV to write; a folder (made when the input holds several "
                             "recordings) receives <recording_id>.csv per recording")
    parser.add_argument("--plot", type=_output_file, metavar="FIGURE",
                        help="also draw the drive's timeline (score and the rule's threshold, "
                             "state, truth, glance alerts, glances) to a .png, .pdf or .svg; "
                             "needs pip install 'distractd[plots]'")
    parser.add_argument("--recording", metavar="ID",
                        help="score only the input's recording with this id or protocol, e.g. "
                             "T001-d7 or texting for one drive of a Taamneh et al. subject file")
    _add_decision(parser)
    _add_output_options(parser)


def _predict(args):
    import csv

    from .models import load_model
    from .models.detectors import DecisionRule, agreement_summary, predict_recording
    from .pipeline import PipelineConfig, read_recordings, require_windows

    if args.plot:   # before any work: the extra and the figure's format
        from .models.evaluation import check_figure_path, require_plots

        require_plots()
        check_figure_path(args.plot)
    detector = load_model(args.model)
    recordings = _chosen_recordings(args.input, read_recordings(args.input), args.recording)
    if args.plot and len(recordings) > 1:
        raise ConfigError(f"--plot draws one recording; {args.input} holds {len(recordings)} "
                          f"({', '.join(_recording_name(r) for r in recordings)}): choose one "
                          f"with --recording")
    window_s = PipelineConfig.from_dict(detector.pipeline_config).window_s
    predictions = []
    for recording in recordings:
        prediction = predict_recording(detector, recording,
                                       DecisionRule(**_decision(args, detector.feature_names)))
        require_windows(args.input, recording, prediction.windows, window_s)
        predictions.append(prediction)
    ids = [recording.meta.get("recording_id", Path(args.input).stem) for recording in recordings]
    outputs = _recording_outputs(args.out, ids)
    summaries, lines = [], []
    for rid, path, prediction, recording in zip(ids, outputs, predictions, recordings):
        windows, scores, states = prediction.windows, prediction.scores, prediction.states
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["t_end", "score", "state"])
            for t_end, score, state in zip(windows.t_end.tolist(), scores.tolist(),
                                           states.tolist()):
                writer.writerow([repr(t_end), "" if score != score else repr(score),
                                 "" if state < 0 else state])  # empty: the daemon's "unknown"
        why = prediction.summary_line()
        if why is not None and not args.quiet:  # once per recording, not per window
            print(f"distractd predict: {rid}: {why}", file=sys.stderr)
        summaries.append({
            "output": str(path), "recording": rid, "protocol": recording.meta.get("protocol"),
            "model_id": detector.model_id, "submodel": prediction.model_id,
            "rate_hz": prediction.rate_hz, "windows": len(windows),
            "distracted": int((states == 1).sum()), "attentive": int((states == 0).sum()),
            "unknown": int((states < 0).sum()), "undecided": prediction.undecided(),
            "undecided_reason": why, "truth": None})
        lines.append(f"{path}: {_recording_name(recording)}: {len(windows)} windows, "
                     f"{summaries[-1]['distracted']} distracted, "
                     f"{summaries[-1]['attentive']} attentive, {summaries[-1]['unknown']} unknown "
                     f"(model {prediction.model_id or detector.model_id})")
        if (windows.label >= 0).any():  # the recording carries truth: judge the states by it
            truth = agreement_summary(windows.t_end, windows.label, states, grace_s=window_s / 2)
            summaries[-1]["truth"] = truth
            lines.append(_truth_line(truth))
    if args.plot:
        from .models.evaluation import plot_timeline
        from .pipeline import detect_glances

        (prediction,), (recording,) = predictions, recordings
        plot_timeline(args.plot, prediction.windows.t_end, prediction.scores, prediction.states,
                      prediction.windows.label,
                      DecisionRule(**_decision(args, detector.feature_names)),
                      alerts=prediction.windows.alert_list(),
                      glances=detect_glances(recording,
                                             PipelineConfig.from_dict(detector.pipeline_config)),
                      title=f"{_recording_name(recording)}: {detector.kind} model")
    _report(args, summaries[0] if len(summaries) == 1 else {"outputs": summaries},
            "\n".join(lines))
    return 0


def _chosen_recordings(path, recordings, wanted):
    """``recordings`` of ``path``, or only those whose id or protocol is ``wanted``."""
    if wanted is None:
        return recordings
    chosen = [r for r in recordings
              if wanted in (r.meta.get("recording_id"), r.meta.get("protocol"))]
    if not chosen:
        raise ConfigError(f"--recording {wanted!r}: {path} holds "
                          f"{', '.join(_recording_name(r) for r in recordings)}")
    return chosen


def _recording_name(recording):
    """A recording's id with its driver's protocol, e.g. ``T001-d7 (texting)``."""
    name = recording.meta.get("recording_id", "recording")
    protocol = recording.meta.get("protocol")
    return name if protocol is None or protocol in name else f"{name} ({protocol})"


def _truth_line(truth):
    """:func:`~distractd.models.detectors.agreement_summary` as one line of text, each figure
    with what it counts."""
    if not truth["decided"]:
        return f"  against the truth: none of the {truth['windows']} labelled windows decided"
    delays = ", ".join("missed" if d != d else f"{d:.1f} s" for d in truth["delays_s"])
    sensitivity, alarms = truth["sensitivity"], truth["false_alarms_per_hour"]
    return (f"  against the truth: {truth['accuracy']:.1%} agreement on {truth['decided']} of "
            f"{truth['windows']} labelled windows decided ("
            + ("no distracted window among them, so no sensitivity" if sensitivity != sensitivity
               else f"sensitivity {sensitivity:.2f}") + f", specificity {truth['specificity']:.2f}); "
            + (f"detection delay from each distraction episode's onset to the first distracted "
               f"state: {delays}; " if delays else "no distraction episode; ")
            + ("no attentive time for false alarms" if alarms != alarms else
               f"{alarms:.1f} false alarms per attentive hour (turns to distracted while the "
               f"labels say attentive)"))


def _add_decision(parser):
    parser.add_argument("--min-quality", type=_FRACTION, default=None, metavar="FRACTION",
                        help="windows with fewer valid samples get no decision (default: the "
                             "daemon's sessions.min_quality)")
    parser.add_argument("--smoothing", choices=("hysteresis", "dwell"), default=None,
                        help="decision smoothing of the state (default: the daemon's)")
    parser.add_argument("--on", type=_REAL, default=None, metavar="SCORE",
                        help="upper (hysteresis) or decision (dwell) threshold (default: the "
                             "daemon's)")
    parser.add_argument("--off", type=_REAL, default=None, metavar="SCORE",
                        help="lower hysteresis threshold (default: the daemon's, or --on when "
                             "--on is given)")
    parser.add_argument("--min-dwell", type=_NON_NEGATIVE, default=None, metavar="SECONDS",
                        help="persistence a new decision needs with dwell smoothing (default: "
                             "the daemon's)")


def _decision(args, feature_names=()):
    """The daemon's decision rule (its defaults) for a model with ``feature_names``, with the
    options given."""
    from .models.detectors import decision_options

    options = decision_options(None, feature_names)
    given = {"min_quality": args.min_quality, "mode": args.smoothing, "on": args.on,
             "off": args.on if args.off is None and args.on is not None else args.off,
             "min_dwell_s": args.min_dwell}
    options.update({key: value for key, value in given.items() if value is not None})
    return options


def _declare_evaluate(parser):
    from .models.detectors import MODEL_KINDS
    from .models.evaluation import NORMALISATIONS, RECIPES, SCHEMES
    from .simulators import PROTOCOLS

    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--cohort", type=_COUNT, metavar="N", help="simulate N drivers")
    source.add_argument("inputs", nargs="*", default=[], metavar="IN",
                        help="labelled recordings, Taamneh et al. subject files, or folders of "
                             "them; meta driver_id groups drives by driver")
    parser.add_argument("--drives", type=_COUNT, default=3, metavar="M",
                        help="simulated drives per driver (default: %(default)s)")
    parser.add_argument("--protocol", nargs="+", choices=PROTOCOLS, default=["cognitive"],
                        help="simulated protocol(s); with several, each driver drives each "
                             "(default: %(default)s)")
    parser.add_argument("--duration", type=_drive_duration, default=None, metavar="SECONDS",
                        help="simulated drive length (default: the protocol, about 20-35 min)")
    parser.add_argument("--only", nargs="+", metavar="PROTOCOL",
                        help="keep only the drives of these protocols (meta protocol, e.g. "
                             "normal texting for Taamneh et al.)")
    parser.add_argument("--scheme", nargs="+", choices=SCHEMES, default=None,
                        help="evaluation schemes, side by side (default: new-driver when there "
                             "are 2 or more drivers, new-drive when a driver has 2 or more "
                             "drives, and source)")
    parser.add_argument("--models", nargs="+", choices=MODEL_KINDS,
                        default=["sselm", "lapsvm", "elm", "svm"],
                        help="models to compare (default: %(default)s); the naive floor "
                             "(naive, naive-offline) is added unless --no-naive")
    parser.add_argument("--no-naive", dest="naive", action="store_false",
                        help="leave out the naive floor and the tests against it")
    parser.add_argument("--grid", choices=("full", "small"), default="small",
                        help="hyper-parameter grids (default: %(default)s; full is the "
                             "source's, slow)")
    parser.add_argument("--recipe", choices=RECIPES, default="cohort",
                        help="how new-driver and new-drive train: cohort (every labelled "
                             "window of the training drives) or per-driver (the source's 60 "
                             "labels) (default: %(default)s)")
    parser.add_argument("--normalisation", choices=NORMALISATIONS, default="running",
                        help="features against the stream's running baseline (causal), each "
                             "drive's or each driver's own z-score (offline bounds) or raw "
                             "(default: %(default)s)")
    parser.add_argument("--features", nargs="+", metavar="NAME",
                        help="feature names (default: those with data in half the windows)")
    parser.add_argument("--labelled", type=_LABELLED, default=60, metavar="N",
                        help="labelled windows of the per-driver recipe and the source and "
                             "blocked schemes (default: %(default)s)")
    parser.add_argument("--train", type=_TRAIN, default=2000, metavar="N",
                        help="most labelled training windows of the cohort recipe "
                             "(default: %(default)s)")
    parser.add_argument("--unlabelled", type=_COUNT_OR_ZERO, default=600, metavar="N",
                        help="most unlabelled windows for semi-supervised models "
                             "(default: %(default)s)")
    parser.add_argument("--draws", type=_COUNT, default=1, metavar="N",
                        help="hidden layers per fit for ELM and SS-ELM (default: %(default)s; "
                             "the source used 5)")
    parser.add_argument("--unlabelled-sizes", type=_COUNT_OR_ZERO, nargs="*", metavar="U", default=[],
                        help="the source's unlabelled-size sweep (S0: 0 120 240 360 480)")
    parser.add_argument("--labelled-sizes", type=_LABELLED, nargs="*", metavar="L", default=[],
                        help="the source's labelled-size sweep (S0: 16 32 48 64 80)")
    parser.add_argument("--sweep-labelled", type=_LABELLED, default=60, metavar="L",
                        help="labelled windows of the unlabelled sweep (default: %(default)s)")
    parser.add_argument("--sweep-unlabelled", type=_COUNT_OR_ZERO, default=45, metavar="U",
                        help="unlabelled windows of the labelled sweep (default: %(default)s)")
    parser.add_argument("--plots", action="store_true",
                        help="a timeline PNG per test drive of the first scheme and the first "
                             "model; needs pip install 'distractd[plots]'")
    parser.add_argument("--seed", type=_SEED, default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--out", required=True, type=_output_folder, metavar="DIR",
                        help="directory for the results")
    _add_batch(parser)  # features, folds x models, drives and sweeps
    _add_decision(parser)
    _add_pipeline_config(parser)
    _add_output_options(parser)


def _evaluate(args):
    from ._parallel import batch_runner
    from .models.evaluation import EvaluationOptions, run_evaluation

    if args.cohort is not None:
        from .simulators import simulate_cohort

        sources = simulate_cohort(args.cohort, args.seed, drives=args.drives,
                                  protocol=args.protocol, duration_s=args.duration)
        config = _pipeline_config(args, drive_side="right")  # the simulator's car
    else:
        sources = args.inputs  # read where they live: by the workers on a cluster
        config = _pipeline_config(args)
    options = EvaluationOptions(
        schemes=args.scheme, protocols=args.only, models=args.models, naive=args.naive,
        grid=args.grid, recipe=args.recipe, normalisation=args.normalisation,
        features=args.features, n_labelled=args.labelled, n_train=args.train,
        n_unlabelled=args.unlabelled, n_draws=args.draws, seed=args.seed, config=config,
        decision=_decision(args), unlabelled_sizes=args.unlabelled_sizes,
        labelled_sizes=args.labelled_sizes, sweep_n_labelled=args.sweep_labelled,
        sweep_n_unlabelled=args.sweep_unlabelled, plots=args.plots)
    with batch_runner(args.jobs, args.scheduler) as runner:
        document, text = run_evaluation(sources, args.out, options, runner=runner,
                                        progress=sys.stderr.isatty() and not args.quiet)
    if not args.quiet:
        protocol = document["protocol"]
        print(f"{protocol['n_drives']} drives of {protocol['n_drivers']} drivers; schemes "
              f"{', '.join(protocol['schemes'])}", file=sys.stderr)
    _report(args, document, text)
    return 0


def _declare_review(parser):
    parser.add_argument("input", metavar="IN", help="recording to review (.csv or binary)")
    parser.add_argument("--labels", metavar="CSV",
                        help="labels to correct: an interval CSV start,end,label (saved back to "
                             "it) or the per-window CSV of 'distractd label' (saved to "
                             "<stem>.intervals.csv); default: the recording's own labels, saved "
                             "to <IN stem>.labels.intervals.csv")
    parser.add_argument("--model", metavar="MODEL",
                        help="a model, or 'default' (the shipped one): adds the detector's score "
                             "and state and its segments")
    parser.add_argument("--port", type=_PORT, default=8050,
                        help="port on 127.0.0.1, 0 for a free one (default: %(default)s)")
    _add_decision(parser)
    _add_pipeline_config(parser)


def _review(args):
    from .review import serve_review

    serve_review(args.input, args.labels, args.model, port=args.port,
                 config=_pipeline_config(args), decision=_decision(args),
                 on_ready=lambda server: print(f"review of {args.input} at {server.url} "
                                               f"(Ctrl-C stops)", flush=True))
    return 0


#: name: (help, declare arguments, run)
_COMMANDS = {
    "info": ("Summarise a recording (binary, CSV or Parquet; a Taamneh et al. subject file "
             "drive by drive).", _declare_info, _info),
    "convert": ("Convert a recording between the binary format, CSV and Parquet (by extension).",
                _declare_convert, _convert),
    "run": ("Run the daemon: subscribe to sample streams, publish distraction states.",
            _declare_run, _run),
    "replay": ("Publish recordings to a daemon at real time or N times faster.",
               _declare_replay, _replay),
    "profiles": ("List or erase the daemon's driver profiles (what it keeps of each named "
                 "driver across drives, [profiles]).", _declare_profiles, _profiles),
    "pupil-emulator": ("Impersonate Pupil Capture (Pupil Remote + backbone) serving a recording.",
                       _declare_pupil_emulator, _pupil_emulator),
    "demo": ("Start the daemon on the shipped model, replay a simulated driver it never saw, "
             "show states beside the truth, delays, false alarms and alerts.",
             _declare_demo, _demo),
    "conformance": ("Run the Euro NCAP-style distraction, fatigue and unresponsive-driver "
                    "scenarios (or a recording's annotated scenarios) through the daemon; one "
                    "row per scenario, scorecard.json; exit 1 if any fails.", _declare_conformance, _conformance),
    "events": ("Detect saccades, blinks and fixations online; write one row per sample.",
               _declare_events, _events),
    "features": ("Compute the window features; write one row per window.",
                 _declare_features, _features),
    "label": ("Cluster a drive's windows into preliminary distracted/attentive labels for an "
              "expert to correct.", _declare_label, _label),
    "segment": ("Segment a drive's window features with ACA or HACA; one CSV row per segment.",
                _declare_segment, _segment),
    "simulate": ("Simulate drives of synthetic drivers (binary; CSV or Parquet for a .csv or "
                 ".parquet path).",
                 _declare_simulate, _simulate),
    "train": ("Train a detector on labelled recordings and save the model: one driver's "
              "per-driver model (the source's), or with --cohort one driver-independent model "
              "from many drivers (the deployable kind).", _declare_train, _train),
    "adapt": ("Adapt a semi-supervised cohort model to a new driver without labels: the cohort's "
              "labelled windows plus the driver's unlabelled windows.", _declare_adapt, _adapt),
    "predict": ("Score a recording with a saved model; write t_end,score,state per window "
                "(state 1 distracted, 0 attentive, empty unknown).", _declare_predict, _predict),
    "evaluate": ("Evaluate detectors under the schemes deployment meets (new driver, new drive) "
                 "beside the source's; print one table per scheme, write results.json, "
                 "table.txt and, with --plots, a timeline per test drive.",
                 _declare_evaluate, _evaluate),
    "review": ("Look at a drive in the browser and correct its labels: a page on 127.0.0.1 with "
               "the drive's timeline; saves the interval CSV 'train --labels' reads.",
               _declare_review, _review),
}

if __name__ == "__main__":
    raise SystemExit(main())
