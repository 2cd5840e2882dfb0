"""The shipped model as deployed on the real drives of Taamneh et al. 2017.

Data: ``../shared/data/taamneh`` (doi:10.1038/sdata.2017.110, data descriptor CC BY 4.0).

Two figures, each beside the naive floor of the same windows (distracted when the window's
valid-gaze fraction is below 0.5), through the ``predict`` path with the daemon's decision rule:

- ``deployment``: the real-drive recipe of ``make real-model`` trained on the development half
  (drivers at odd positions of the sorted list: T003, T007, ...) and scored on the held-out half —
  what a new driver gets;
- ``shipped``: the shipped ``distractd/data/default_model.npz`` as it is, on every driver. Its
  ``sparse_gaze`` sub-model was trained on all 36 drivers, so this figure is in-sample.

Prints one JSON line per driver and per summary, appending each to ``--out`` as it is measured::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/studies/shipped_model.py --out shipped.jsonl
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from distractd.daemon import DEFAULTS, decision_options, default_model_path
from distractd.models.evaluation import score_shipped

ROOT = Path(__file__).resolve().parents[2]


def summarise(rows):
    """Pooled decided fraction of gaze windows, driver mean and median G-mean, false alarms per
    attentive hour pooled over drivers, for the model and the naive floor."""
    seen = [r for r in rows if r["gaze_windows"]]
    gaze = sum(r["gaze_windows"] for r in seen)
    hours = sum(r["attentive_hours"] for r in seen)
    g = np.array([r["g_mean"] for r in seen], dtype=float)
    naive = np.array([r["naive_g_mean"] for r in seen], dtype=float)
    both = np.isfinite(g) & np.isfinite(naive)
    return {
        "drivers_with_gaze": len(seen), "drivers_with_both_classes": int(both.sum()),
        "decided_fraction": sum(r["decided_fraction"] * r["gaze_windows"] for r in seen) / gaze,
        "decided_fraction_min": min(r["decided_fraction"] for r in seen),
        "g_mean_mean": float(g[both].mean()), "g_mean_median": float(np.median(g[both])),
        "naive_g_mean_mean": float(naive[both].mean()),
        "naive_g_mean_median": float(np.median(naive[both])),
        "false_alarms_per_hour": sum(r["false_alarms_per_hour"] * r["attentive_hours"]
                                     for r in seen) / hours,
        "naive_false_alarms_per_hour": sum(r["naive_false_alarms_per_hour"]
                                           * r["attentive_hours"] for r in seen) / hours,
    }


def emit(out, record):
    line = json.dumps(record)
    print(line, flush=True)
    with open(out, "a") as file:
        file.write(line + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "taamneh"))
    parser.add_argument("--model", default=str(default_model_path()))
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    files = sorted(Path(args.data).glob("T*.csv"))
    development, held_out = files[1::2], files[0::2]
    decision = decision_options(DEFAULTS)
    with tempfile.TemporaryDirectory() as folder:
        dev_model = Path(folder) / "real_dev.npz"
        subprocess.run([sys.executable, "-m", "distractd.cli", "train", "--cohort",
                        *map(str, development), "--only", "normal", "texting", "--model", "sselm",
                        "--seed", "0", "--config", str(ROOT / "config" / "shipped-pipeline.json"),
                        "--operating-point", "1.0", "--out", str(dev_model), "-q"], check=True)
        for name, model, paths in (("deployment", dev_model, held_out),
                                   ("shipped", args.model, files)):
            rows = score_shipped(paths, model, decision)
            for row in rows:
                emit(args.out, {"figure": name, **row})
            emit(args.out, {"figure": name, "summary": summarise(rows)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
