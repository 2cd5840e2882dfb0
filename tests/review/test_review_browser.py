"""The review page in a real headless browser: Debian's Chromium driven by Playwright.

The test loads a simulated drive served by a real ``distractd review`` subprocess, selects
stretches with the mouse, relabels one, makes part of it unknown and undoes that, saves, and reads
the saved file back with :func:`~distractd.models.detectors.read_labels`. With
``DISTRACTD_REVIEW_SCREENSHOT=<path>`` it also writes the screenshot of docs/review.md.
"""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from distractd.models.detectors import read_labels
from distractd.pipeline import labels_from_intervals, read_recording, write_intervals

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "distractd" / "data" / "default_model.npz"


@pytest.fixture(scope="module")
def browser(missing_tool):
    """Chromium from Debian's package through Playwright (never a downloaded browser)."""
    try:
        from playwright import sync_api
    except ImportError:
        missing_tool("Playwright is not installed (pip install playwright)")
    if not os.access(CHROMIUM, os.X_OK):
        missing_tool(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _drag(page, box, start, end):
    """Drag across the chart ``box`` from fraction ``start`` to fraction ``end`` of its width."""
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + start * box["width"], y)
    page.mouse.down()
    page.mouse.move(box["x"] + end * box["width"], y, steps=8)
    page.mouse.up()


def _selection(page):
    element = page.locator("#selection")
    return float(element.get_attribute("data-t0")), float(element.get_attribute("data-t1"))


def test_a_stretch_edited_in_the_browser_is_saved_for_training(browser, review_server,
                                                               review_drive):
    server = review_server(review_drive, "--model", DEFAULT_MODEL)
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    assert "drive.npz" in page.locator("#title").inner_text()
    assert page.locator("#errors").is_hidden()
    recording = read_recording(review_drive)
    t0, t1 = float(recording.t.min()), float(recording.t.max())

    page.locator("#timeline .u-over").scroll_into_view_if_needed()
    plot = page.locator("#timeline .u-over").bounding_box()
    _drag(page, plot, 0.30, 0.45)
    a, b = _selection(page)
    # where the mouse went, to a pixel
    assert a == pytest.approx(t0 + 0.30 * (t1 - t0), abs=(t1 - t0) / plot["width"] * 1.5)
    assert b == pytest.approx(t0 + 0.45 * (t1 - t0), abs=(t1 - t0) / plot["width"] * 1.5)
    page.click("#set-distracted")
    # a second stretch inside it made unknown, then undone with the key
    _drag(page, plot, 0.35, 0.40)
    assert _selection(page)[0] > a
    page.keyboard.press("u")
    page.keyboard.press("z")
    page.click("#save")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('saved')")
    saved = review_drive.with_name("drive.labels.intervals.csv")
    assert str(saved) in page.locator("#status").inner_text()

    kind, intervals = read_labels(saved)
    assert kind == "intervals"
    t = recording.t
    labels = labels_from_intervals(t, intervals)
    inside = (t >= a) & (t < b)
    assert np.all(labels[inside] == 1)
    original = labels_from_intervals(t, recording.label_intervals())
    np.testing.assert_array_equal(labels[~inside], original[~inside])
    assert (original[inside] == 0).any()       # the edit changed something

    # zoomed in far enough, the charts get every sample
    page.click("#zoom-all")
    for _ in range(6):
        page.keyboard.press("+")
    page.wait_for_selector("body[data-detail='samples']", timeout=30_000)
    # the next low-confidence stretch is one where the detector's margin is small
    page.keyboard.press("n")
    page.wait_for_function("document.getElementById('status').textContent.includes('margin')")
    low_a, low_b = _selection(page)
    assert (low_a, low_b) != (a, b)
    _, drive = server.get("/api/drive")
    windows = drive["windows"]
    centre = 0.5 * (np.array(windows["t_start"]) + np.array(windows["t_end"]))
    margin = np.array([np.inf if m is None else m for m in windows["confidence"]])
    assert np.all(margin[(centre > low_a) & (centre < low_b)] < 0.5)
    assert problems == []

    screenshot = os.environ.get("DISTRACTD_REVIEW_SCREENSHOT")
    if screenshot:
        page.click("#zoom-all")
        _drag(page, plot, 0.30, 0.45)
        page.select_option("#feature", "sd_gaze_r_yaw")
        page.wait_for_selector("#chart-windows .u-over")
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_timeout(500)
        page.screenshot(path=screenshot, full_page=True)
    page.close()


def _status(page, start):
    page.wait_for_function(f"document.getElementById('status').textContent.startsWith({start!r})")
    return page.locator("#status").inner_text()


def _first_low_run(drive):
    """``(start, end)`` of the first run of low-confidence windows, over the stretches the
    windows own (half-way to the neighbours' centres), as the page selects it."""
    windows = drive["windows"]
    t_start, t_end = np.array(windows["t_start"]), np.array(windows["t_end"])
    low = np.array([c is not None and c < drive["low_confidence"] for c in windows["confidence"]])
    centre = 0.5 * (t_start + t_end)
    edges = np.r_[t_start[0], 0.5 * (centre[1:] + centre[:-1]), t_end[-1]]
    first = int(np.argmax(low))
    last = first + int(np.argmin(low[first:])) - 1
    return max(drive["t0"], edges[first]), edges[last + 1]


def test_label_rows_legend_and_reviewed_stretches_survive_reopening(
        browser, review_server, review_drive, run_distractd, tmp_path):
    drive = tmp_path / "drive.npz"
    shutil.copy(review_drive, drive)
    run_distractd("label", drive, "--method", "kmeans", "--prior", "none", "--drive-side",
                  "right", "--out", tmp_path / "labels.csv")
    server = review_server(drive, "--labels", tmp_path / "labels.csv")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)

    # the label rows open the page, above the signals, and stay in view as the signals scroll
    rows, gaze = (page.locator(f"#{id}").bounding_box() for id in ("labels-chart", "chart-gaze"))
    assert rows["y"] + rows["height"] <= 1000 and rows["y"] < gaze["y"]
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("window.scrollY") > rows["y"] + rows["height"]   # else out of view
    rows = page.locator("#labels-chart").bounding_box()
    assert rows["y"] >= 0 and rows["y"] + rows["height"] <= 1000
    # every colour the two timelines draw has its entry in the on-page legend
    drawn = set()
    for chart in ("#labels-chart", "#timeline"):
        drawn |= set(page.locator(chart).get_attribute("data-keys").split())
    items = page.locator("#legend .legend-item")
    legend = {items.nth(i).get_attribute("data-key"): items.nth(i) for i in range(items.count())}
    assert set(legend) == drawn >= {"distracted", "attentive", "reviewed", "low",
                                    "long_distraction", "time_sharing", "track_loss"}
    assert all(item.inner_text().strip() for item in legend.values())
    assert legend["reviewed"].inner_text().strip() == "reviewed (next skips it)"

    # the first low-confidence stretch, from the drive's start, corrected; the next one looked
    # at and marked reviewed; saved with the labels
    _, summary = server.get("/api/drive")
    assert summary["reviewed"] == []
    page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.press("n")
    first = _selection(page)
    assert first == pytest.approx(_first_low_run(summary), abs=1e-3)
    page.keyboard.press("d")
    page.keyboard.press("n")
    second = _selection(page)
    assert second[0] >= first[1]
    page.keyboard.press("r")
    page.keyboard.press("s")
    merged = 1 if second[0] <= first[1] else 2
    assert f"and {merged} reviewed stretches" in _status(page, "saved")
    saved = tmp_path / "labels.intervals.csv"
    sidecar = json.loads(saved.with_name(saved.name + ".recording.json").read_text())
    reviewed = sidecar["reviewed"]
    assert len(reviewed) == merged
    assert reviewed[0][0] == pytest.approx(first[0]) and reviewed[-1][1] == pytest.approx(second[1])
    page.close()
    server.stop()

    # reopened: the stretches are still reviewed, and "next" starts after them
    server = review_server(drive, "--labels", tmp_path / "labels.csv")
    _, summary = server.get("/api/drive")
    assert summary["reviewed"] == reviewed
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    page.keyboard.press("n")
    third = _selection(page)
    assert third[0] >= second[1]
    assert "clustering" in page.locator("#status").inner_text()
    assert problems == []
    page.close()


def test_bad_input_is_shown_on_the_page(browser, review_server, review_drive, tmp_path):
    other = tmp_path / "other.intervals.csv"
    write_intervals([(0.0, 2000.0, 1)], other)
    server = review_server(review_drive, "--labels", other)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    message = page.locator("#errors").inner_text()
    assert f"{other}: interval 1 (0.0-2000.0 s) lies outside the recording" in message
    assert "saving is off" in message
    assert page.locator("#save").is_disabled()
    assert page.locator("#save-to").inner_text() == "saving is off"
    page.close()      # (a recording that cannot be read ends the command: test_review_api.py)


def test_another_page_in_the_browser_cannot_save(browser, review_server, review_drive, tmp_path):
    labels = tmp_path / "drive.intervals.csv"
    write_intervals([(0.0, 300.0, 0), (300.0, 600.0, 1)], labels)
    content = labels.read_bytes()
    server = review_server(review_drive, "--labels", labels)
    page = browser.new_page()
    # a page of another origin posts as a plain form would (no CORS preflight), as JSON (with a
    # preflight), and under the server's own name without the token
    page.set_content("<title>elsewhere</title>")
    outcomes = page.evaluate("""async (url) => {
        const body = JSON.stringify({intervals: [[10, 20, 1]]});
        const out = [];
        for (const options of [{mode: "no-cors", headers: {"Content-Type": "text/plain"}},
                               {headers: {"Content-Type": "application/json"}}]) {
            try { out.push((await fetch(url, {method: "POST", body, ...options})).status); }
            catch (err) { out.push("refused"); }
        }
        return out;
    }""", server.url + "api/labels")
    assert outcomes == [0, "refused"]          # an opaque answer, then a failed preflight
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    status = page.evaluate("""async () => (await fetch("/api/labels", {method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({intervals: [[10, 20, 1]]})})).status""")
    assert status == 403
    assert labels.read_bytes() == content
    page.close()
    stderr = server.stop()
    assert "Origin 'null' refused" in stderr and "X-Distractd-Token header must" in stderr
