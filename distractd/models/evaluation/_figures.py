"""Figures fit for a paper: matplotlib on demand, one type size, vector or raster by the suffix.

matplotlib is the optional extra ``plots`` (``pip install 'distractd[plots]'``): about 100 MB that
the daemon and most commands never use, so it is imported only when a figure is drawn, and a
missing one is one line naming the extra (:func:`require_plots`). Figures are built on
:class:`matplotlib.figure.Figure` directly (no pyplot, no global backend or state) at their print
size, with text of at least :data:`FONT_PT` points, and saved in the format the file's suffix names
(:data:`FORMATS`): PDF or SVG (text kept as text) for a paper, PNG at 300 dpi for a page.
"""

from contextlib import contextmanager
from pathlib import Path

from ..._errors import ConfigError

__all__ = ["FORMATS", "FONT_PT", "TEXT_WIDTH_IN", "COLUMN_WIDTH_IN", "require_plots", "check_figure_path",
           "paper_figure", "save_figure"]

FORMATS = (".png", ".pdf", ".svg")
"""Figure file suffixes, each naming its format."""
FONT_PT = 9.0
"""Type size of every label, tick and legend, points at print size (titles one point larger)."""
TEXT_WIDTH_IN = 7.0
"""Wide figure width, inches: a two-column paper's full text width (178 mm)."""
COLUMN_WIDTH_IN = 3.5
"""Narrow figure width, inches: one column of a two-column paper (89 mm)."""
PNG_DPI = 300

_STYLE = {
    "font.size": FONT_PT, "axes.titlesize": FONT_PT + 1, "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT, "ytick.labelsize": FONT_PT, "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT, "figure.titlesize": FONT_PT + 1,
    "svg.fonttype": "none", "pdf.fonttype": 42,   # text stays text, editable in the paper
}


def require_plots():
    """Import matplotlib, or raise :class:`ConfigError` in one line naming the extra."""
    try:
        import matplotlib  # optional and heavy: imported only when a figure is drawn
    except ImportError:
        raise ConfigError("plots need matplotlib: pip install 'distractd[plots]'") from None
    return matplotlib


def check_figure_path(path):
    """``path`` as a Path whose suffix is one of :data:`FORMATS`, else :class:`ConfigError`."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ConfigError(f"figure file {path}: the suffix names the format, one of "
                          f"{', '.join(FORMATS)}; got {path.suffix or 'none'!r}")
    return path


@contextmanager
def paper_figure(height_in, n_rows=1, height_ratios=None, width_in=TEXT_WIDTH_IN):
    """A figure of its print size and its ``n_rows`` axes (sharing the x axis), in the paper
    style for everything drawn and saved inside the ``with`` block."""
    matplotlib = require_plots()
    from matplotlib.figure import Figure  # optional and heavy, as above

    with matplotlib.rc_context(_STYLE):
        figure = Figure(figsize=(width_in, height_in), layout="constrained")
        axes = figure.subplots(n_rows, 1, sharex=True, squeeze=False,
                               gridspec_kw={"height_ratios": height_ratios})[:, 0]
        yield figure, list(axes)


def save_figure(figure, path):
    """Write ``figure`` to ``path`` in the format of its suffix (PNG at 300 dpi)."""
    figure.savefig(check_figure_path(path), dpi=PNG_DPI)
