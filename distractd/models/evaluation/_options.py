"""The settings of one evaluation run, gathered once (by the command line) and passed down."""

from dataclasses import dataclass

from ..detectors import MODELS

__all__ = ["EvaluationOptions"]


@dataclass(frozen=True)
class EvaluationOptions:
    """What :func:`~._report.run_evaluation` evaluates, and how.

    Parameters
    ----------
    schemes : sequence of str or None, default=None
        Among :data:`~._schemes.SCHEMES`, side by side; None: those the drives support
        (:func:`~._schemes.supported_schemes`).
    protocols : sequence of str or None, default=None
        Evaluate only the drives whose ``meta["protocol"]`` is one of these (None: all).
    models : sequence of str, default=MODELS
        Model ids (:data:`~distractd.models.detectors.MODEL_KINDS`).
    naive : bool, default=True
        Also evaluate the naive floor's variants (:data:`~distractd.models.detectors.NAIVE_MODELS`)
        on the same windows, and test every model against ``naive-offline``.
    grid : {"full", "small"}, default="small"
        Hyper-parameter grids; ``"full"`` is the source's.
    recipe : {"cohort", "per-driver"}, default="cohort"
        How the cross-drive schemes train (:func:`~._schemes.evaluate_scheme`).
    normalisation : {"running", "drive", "driver", "none"}, default="running"
        The feature representation (:func:`~._schemes.scheme_drives`) of every model but the
        naive floor, which brings its own.
    features : sequence of str or None, default=None
        Feature names; None keeps those with data in at least half of the windows.
    n_labelled, n_train, n_unlabelled, n_draws : int, default=60, 2000, 600, 1
        See :func:`~._schemes.evaluate_scheme`.
    seed : int, default=0
    config : PipelineConfig or None, default=None
        Window settings (None: the defaults).
    decision : dict or None, default=None
        Keyword arguments of :class:`~distractd.models.detectors.DecisionRule` for the deployment
        figures (None: its defaults; the CLI passes the daemon's); ``loss_evidence`` always
        follows the evaluated features, as in the daemon.
    unlabelled_sizes, labelled_sizes : sequence of int, default=()
        The source's sweeps (S0: u in {0, 120, 240, 360, 480} at l = ``sweep_n_labelled``; l from
        16 to 80 at u = ``sweep_n_unlabelled``), per drive with random folds; empty skips.
    sweep_n_labelled, sweep_n_unlabelled : int, default=60, 45
    plots : bool, default=False
        Draw the timeline of every test drive of the first scheme under the first model.
    """

    schemes: tuple = None
    protocols: tuple = None
    models: tuple = MODELS
    naive: bool = True
    grid: str = "small"
    recipe: str = "cohort"
    normalisation: str = "running"
    features: tuple = None
    n_labelled: int = 60
    n_train: int = 2000
    n_unlabelled: int = 600
    n_draws: int = 1
    seed: int = 0
    config: object = None
    decision: dict = None
    unlabelled_sizes: tuple = ()
    labelled_sizes: tuple = ()
    sweep_n_labelled: int = 60
    sweep_n_unlabelled: int = 45
    plots: bool = False
