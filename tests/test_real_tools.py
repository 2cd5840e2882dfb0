"""Under CI a missing real tool fails its tests instead of skipping them (issue 37, item 9: the 4
promtool and 4 Chromium tests skipped when the best-effort install failed, and CI passed).

A real pytest run of a promtool test, as a subprocess, without promtool: skipped, saying why,
where ``CI`` is unset (a developer's machine); failed, saying why, where it is set."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/daemon/test_metrics.py::test_promtool_accepts_the_scrape"


@pytest.mark.parametrize("ci, status, words", [
    (None, 0, "promtool is absent"),
    ("true", 1, "promtool is absent (.ci/run unpacks it from Debian's prometheus package); CI "
                "must run this test"),
])
def test_a_missing_tool_skips_here_and_fails_under_ci(tmp_path, ci, status, words):
    env = {name: value for name, value in os.environ.items() if name not in ("CI", "PROMTOOL")}
    env["PATH"] = str(tmp_path)                     # no promtool to be found
    if ci is not None:
        env["CI"] = ci
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                             TEST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == status, result.stdout[-3000:]
    assert words in result.stdout
    assert ("1 skipped" if ci is None else "1 error") in result.stdout     # in its fixture
