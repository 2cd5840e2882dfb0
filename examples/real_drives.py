"""The shipped model on real drives: a table per drive and the timeline of one, from the CLI.

Taamneh et al. 2017 (doi:10.1038/sdata.2017.110, CC BY 4.0) recorded 36 drivers in a simulator,
each in up to eight drives (practice, relaxing, normal, cognitive questions, emotional
questions, texting, failure), with a 1 Hz gaze tracker and the car's signals. One subject file
holds all of a driver's drives; ``distractd predict`` scores each with the shipped model
(``default``) through the daemon's decision rule and, since the file carries the experimenters'
task intervals, judges the states against them.

    python examples/real_drives.py ../shared/data/taamneh/T011.csv --plot T011-texting.png

prints one row per drive, then draws the texting drive's timeline (score and threshold, state
against the task intervals, glances). The shipped model's real-drive figures over all drivers,
with their scheme and floor, are in the README and docs/results/real-data.md; a single
driver's drives, as here, are one driver's view. Needs distractd with its plots extra
(``pip install 'distractd[plots]'``) for the figure.
"""

import argparse
import json
import subprocess
import sys
import tempfile


def distractd(*args):
    """Run one ``distractd`` command; its ``--json`` summary."""
    done = subprocess.run([sys.executable, "-m", "distractd.cli", *args, "--json"],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr.strip())
    return json.loads(done.stdout)


def row(name, drive):
    """One table row: a drive's decided share and its states against the task intervals."""
    truth = drive["truth"] or {}
    decided = truth.get("decided", 0)
    figures = [f"{100 * decided / max(truth.get('windows', 0), 1):5.0f} %"]
    for key in ("sensitivity", "specificity"):
        value = truth.get(key, float("nan"))
        figures.append("    -" if value != value else f"{value:5.2f}")
    delays = [d for d in truth.get("delays_s", []) if d == d]
    episodes = len(truth.get("delays_s", []))
    figures.append(f"{len(delays)}/{episodes}" if episodes else "  -")
    alarms = truth.get("false_alarms_per_hour", float("nan"))
    figures.append("    -" if alarms != alarms else f"{alarms:5.1f}")
    return f"{name:<24} " + "  ".join(figures)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("subject", help="a Taamneh et al. subject file, e.g. T011.csv")
    parser.add_argument("--model", default="default", help="model (default: the shipped one)")
    parser.add_argument("--plot", metavar="FIGURE", help="draw the texting drive to this file")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        summary = distractd("predict", args.model, args.subject, "--out", folder)
        print(f"{'drive':<24} decided  sens.  spec.  found  false alarms/h")
        for drive in summary.get("outputs", [summary]):
            print(row(f"{drive['recording']} ({drive['protocol']})", drive))
        print("decided: windows with a state (the first minute learns the driver's baseline; a "
              "drive without gaze gets none); sens./spec.: window sensitivity and specificity "
              "against the task intervals; found: task episodes that turned the state "
              "distracted; false alarms per attentive hour")
        if args.plot:
            distractd("predict", args.model, args.subject, "--recording", "texting",
                      "--out", f"{folder}/texting.csv", "--plot", args.plot)
            print(f"the texting drive's timeline: {args.plot}")

if __name__ == "__main__":
    main()
