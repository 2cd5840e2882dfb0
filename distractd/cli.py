"""The ``distractd`` command: parses arguments, then calls one function of a wing.

Each subcommand is a pair: ``_add_<name>(subparsers)`` declares its arguments and sets
``func`` to ``_<name>(args) -> int``. A :class:`~distractd.DistractdError` is printed as one line on
standard error and gives exit status 1.
"""

import argparse
import json
import sys

from . import __version__
from ._errors import DistractdError


def main(argv=None):
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="distractd", description="Real-time driver-distraction detection.")
    parser.add_argument("--version", action="version", version=f"distractd {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for add in _COMMANDS:
        add(subparsers)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except DistractdError as exc:
        print(f"distractd {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _command(subparsers, name, func, help):
    parser = subparsers.add_parser(name, help=help, description=help)
    parser.set_defaults(func=func, command=name)
    return parser


def _print_json(summary):
    print(json.dumps(summary, indent=2, sort_keys=False))


def _add_info(subparsers):
    parser = _command(subparsers, "info", _info, "Summarise a recording (binary or CSV).")
    parser.add_argument("path", help="recording file")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _info(args):
    from .pipeline import describe, read_recording

    summary = describe(read_recording(args.path))
    if args.json:
        _print_json(summary)
        return 0
    imperfections = summary["imperfections"]
    rate = summary["rate_hz"]
    print(f"{args.path}")
    print(f"  samples      {summary['samples']}")
    print(f"  duration     {summary['duration_s']:.3f} s")
    print(f"  rate         {rate:.3f} Hz (measured)" if rate else "  rate         unknown")
    print(f"  fields       {', '.join(summary['fields_present'])}")
    if summary["fields_missing"]:
        print(f"  missing      {', '.join(summary['fields_missing'])}")
    labels = summary["labels"]
    print(f"  labels       {labels['distracted']} distracted, {labels['attentive']} attentive, "
          f"{labels['unknown']} unknown samples in {summary['label_intervals']} intervals")
    jitter = imperfections["jitter_ms"]
    print(f"  timing       {imperfections['duplicates']} duplicates, {imperfections['backwards']} "
          f"backwards, {imperfections['gaps']} gaps (~{imperfections['dropped_estimate']} dropped), "
          f"jitter {jitter:.3f} ms" if jitter is not None else "  timing       too few samples")
    print(f"  track loss   {100 * imperfections['track_loss_fraction']:.2f} % of samples")
    for key, value in summary["meta"].items():
        print(f"  meta.{key:<8} {value}")
    return 0


def _add_convert(subparsers):
    parser = _command(subparsers, "convert", _convert,
                      "Convert a recording between CSV and the binary format (by extension).")
    parser.add_argument("input", help="recording to read (.csv or binary)")
    parser.add_argument("output", help="recording to write (.csv or binary)")


def _convert(args):
    from .pipeline import read_recording, write_recording

    write_recording(read_recording(args.input), args.output)
    return 0


_COMMANDS = [_add_info, _add_convert]

if __name__ == "__main__":
    raise SystemExit(main())
