"""The timeline figure of ``predict --plot`` and ``evaluate --plots`` (issue 24, "Plots"): the
decision rule's own threshold, legends for every colour and mark, the model named, the score axis
defined, unknown drawn as its own kind, type and size fit for a paper, vector output, and one line
when matplotlib is missing. On a simulated drive scored by a model trained by ``distractd train``.
"""

import subprocess
import sys

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.text import Text

from distractd._errors import ConfigError
from distractd.cli import main
from distractd.models import load_model
from distractd.models.detectors import DecisionRule, predict_recording
from distractd.models.evaluation import plot_timeline
from distractd.models.evaluation._figures import FONT_PT, TEXT_WIDTH_IN
from distractd.models.evaluation._timeline import ALERT_STYLE, SCORE_LABEL, STATE_STYLE
from distractd.pipeline import (
    ALERT_KINDS, PipelineConfig, detect_glances, read_recording, write_recording,
)
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A 300 s drive, an ELM trained on it, and its prediction under the default rule."""
    folder = tmp_path_factory.mktemp("timeline")
    drive, model = folder / "drive.npz", folder / "elm.npz"
    write_recording(simulate_drive(21, duration_s=300.0), drive)
    assert main(["train", str(drive), "--model", "elm", "--labelled", "40", "--grid", "small",
                 "--segment-windows", "0", "--seed", "2", "--out", str(model), "--quiet"]) == 0
    detector, recording = load_model(model), read_recording(drive)
    prediction = predict_recording(detector, recording, DecisionRule())
    glances = detect_glances(recording, PipelineConfig.from_dict(detector.pipeline_config))
    return drive, model, prediction, glances


def _draw(path, prediction, rule, glances=None):
    windows = prediction.windows
    return plot_timeline(path, windows.t_end, prediction.scores, prediction.states, windows.label,
                         rule, title="drive: model elm 0123", alerts=windows.alert_list(),
                         glances=glances)


def _legend_texts(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def test_the_threshold_drawn_is_the_rules(scored, tmp_path):
    _, _, prediction, _ = scored
    figure = _draw(tmp_path / "dwell.png", prediction, DecisionRule())
    lines = {line.get_label(): line.get_ydata() for line in figure.axes[0].get_lines()}
    (dwell,) = [label for label in lines if label.startswith("threshold")]
    assert dwell == "threshold 1\n(held 3 s)" and list(lines[dwell]) == [1.0, 1.0]
    figure = _draw(tmp_path / "hysteresis.png", prediction,
                   DecisionRule(mode="hysteresis", on=0.4, off=-0.3))
    lines = {line.get_label(): list(line.get_ydata()) for line in figure.axes[0].get_lines()}
    assert lines["on 0.4"] == [0.4, 0.4] and lines["off -0.3"] == [-0.3, -0.3]
    assert not any(label.startswith("threshold") for label in lines)


def test_legends_explain_every_colour_and_the_score_axis(scored, tmp_path):
    _, _, prediction, glances = scored
    figure = _draw(tmp_path / "t.png", prediction, DecisionRule(), glances)
    score_ax, state_ax, glance_ax = figure.axes
    assert score_ax.get_ylabel() == SCORE_LABEL and "training spreads" in SCORE_LABEL
    assert _legend_texts(score_ax)[:2] == ["truth: distracted", "score"]
    states = _legend_texts(state_ax)
    assert states[:2] == ["distracted", "attentive"] and states[2].startswith("unknown")
    assert states[3:] == [ALERT_STYLE[kind][0] for kind in ALERT_KINDS]
    assert [t.get_text() for t in glance_ax.get_yticklabels()] == [
        "track lost", "instrument", "mirror", "off road"]
    assert figure.texts[0].get_text() == "drive: model elm 0123"   # the suptitle


def test_unknown_is_a_hatched_kind_of_its_own_not_a_level(scored, tmp_path):
    _, _, prediction, _ = scored
    assert (prediction.states == -1).any()   # the running baseline warms up
    figure = _draw(tmp_path / "t.png", prediction, DecisionRule())
    state_ax = figure.axes[1]
    assert [t.get_text() for t in state_ax.get_yticklabels()] == ["state", "truth"]
    bars = [c for c in state_ax.collections if isinstance(c, PolyCollection) and c.get_paths()]
    hatched = [bar for bar in bars if bar.get_hatch() == STATE_STYLE[-1][2]]
    # every state bar of one row spans the same height: unknown is not drawn between the two
    assert {tuple(np.round(bar.get_paths()[0].get_extents().get_points()[:, 1], 3))
            for bar in bars if bar.get_paths()[0].get_extents().y0 < 1} == {(0.1, 0.9)}
    first_unknown = prediction.windows.t_end[np.argmax(prediction.states == -1)]
    starts = [path.get_extents().x0 for bar in hatched for path in bar.get_paths()]
    assert first_unknown in starts


def test_type_and_size_fit_a_paper(scored, tmp_path):
    _, _, prediction, glances = scored
    figure = _draw(tmp_path / "t.png", prediction, DecisionRule(), glances)
    assert figure.get_figwidth() == TEXT_WIDTH_IN
    texts = [t for t in figure.findobj(Text) if t.get_text() and t.get_visible()]
    assert len(texts) > 20 and min(t.get_fontsize() for t in texts) >= FONT_PT >= 9


def test_the_suffix_names_the_format(scored, tmp_path):
    _, _, prediction, _ = scored
    _draw(tmp_path / "t.svg", prediction, DecisionRule(on=0.7, off=0.7))
    svg = (tmp_path / "t.svg").read_text()
    assert svg.startswith("<?xml") and ">threshold 0.7<" in svg  # text stays text
    _draw(tmp_path / "t.pdf", prediction, DecisionRule())
    assert (tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ConfigError, match=r"figure file .*t\.jpeg: .* one of \.png, \.pdf, "
                                          r"\.svg; got '\.jpeg'"):
        _draw(tmp_path / "t.jpeg", prediction, DecisionRule())


def test_predict_plot_draws_the_threshold_of_its_options(scored, tmp_path):
    drive, model, _, _ = scored
    figure = tmp_path / "cli.svg"
    assert main(["predict", str(model), str(drive), "--out", str(tmp_path / "p.csv"), "--plot",
                 str(figure), "--smoothing", "hysteresis", "--on", "0.25", "--off", "-0.5",
                 "--quiet"]) == 0
    svg = figure.read_text()
    assert ">on 0.25<" in svg and ">off -0.5<" in svg and ">track lost<" in svg
    # titled with the drive (its recording id, which names its protocol) and the model's kind
    assert f">{read_recording(drive).meta['recording_id']}: ELMClassifier model<" in svg


def test_without_matplotlib_plotting_is_one_line_naming_the_extra(scored, tmp_path):
    drive, model, _, _ = scored
    code = ("import sys; sys.modules['matplotlib'] = None; from distractd.cli import main; "
            "sys.exit(main(sys.argv[1:]))")   # None in sys.modules: the import fails as absent
    result = subprocess.run([sys.executable, "-c", code, "predict", str(model), str(drive),
                             "--out", str(tmp_path / "p.csv"), "--plot", str(tmp_path / "t.png"),
                             "--quiet"], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == ("distractd predict: error: plots need matplotlib: pip install "
                             "'distractd[plots]'\n")
    assert not (tmp_path / "t.png").exists()
