"""The detectors the protocol and training know by id, with their hyper-parameter grids.

ALGORITHMS §1.11 (S0 §5.4.3): :data:`MODELS` names the semi-supervised detectors and their
supervised counterparts; :func:`model_specs` gives each its estimator, grid and fast selection
(:mod:`._selection`), and also the naive floor's two variants (:data:`NAIVE_MODELS`,
:mod:`._naive`), which bring their own features and standardisation.
"""

from dataclasses import dataclass
from typing import Callable

from sklearn.base import clone

from ..._errors import ConfigError
from ._elm import ELMClassifier
from ._lapsvm import LapSVMClassifier
from ._kinds import MODEL_KINDS, MODELS, NAIVE_MODELS
from ._naive import NaiveRepresentation, scale_width
from ._selection import lapsvm_grid_search, sselm_grid_search, svm_grid_search
from ._sselm import SSELMClassifier
from ._svm import SVMClassifier
from ._tsvm import TSVMClassifier

__all__ = ["ModelSpec", "model_specs"]


@dataclass(frozen=True)
class ModelSpec:
    """How the protocol tunes and trains one kind of model.

    Parameters
    ----------
    name : str
        Model id (``"sselm"``, ``"svm"``, ...).
    estimator : estimator
        Unfitted scikit-learn classifier; cloned for every fit. ``decision_function`` must be
        positive for class 1 (distracted).
    grid : dict of str to sequence
        Hyper-parameter grid searched by the inner cross-validation.
    semi_supervised : bool, default=False
        Fit on labelled and unlabelled rows (unlabelled ``y = -1``); else on labelled rows only.
    randomised : bool, default=False
        The estimator takes ``random_state`` and its result depends on it (ELM hidden layers):
        refitted ``n_draws`` times.
    select : callable or None, default=None
        Fast selection ``select(estimator, grid, X, y, cv, random_state) -> params`` with ``X, y``
        the labelled then unlabelled rows and ``cv`` a list of (train, test) index pairs; None uses
        :func:`~._selection.grid_search`.
    representation : NaiveRepresentation or None, default=None
        The model's own features, standardisation and imputation (the naive floor); None: it
        is evaluated on the evaluation's features.
    """

    name: str
    estimator: object
    grid: dict
    semi_supervised: bool = False
    randomised: bool = False
    select: Callable | None = None
    representation: NaiveRepresentation | None = None

    def make_estimator(self, random_state):
        """A fresh clone of ``estimator``, seeded with ``random_state`` when ``randomised``."""
        estimator = clone(self.estimator)
        if self.randomised:
            estimator.set_params(random_state=random_state)
        return estimator


def model_specs(names=MODELS, grid="full"):
    """The protocol's models with their hyper-parameter grids.

    Parameters
    ----------
    names : sequence of str, default=MODELS
        Model ids among ``"sselm"``, ``"lapsvm"``, ``"tsvm"``, ``"elm"``, ``"svm"`` and the
        naive floor's ``"naive"`` and ``"naive-offline"`` (the same at either grid: no search).
    grid : {"full", "small"}, default="full"
        ``"full"``: the source grids (S0 §5.4.3) — regularisation and SVM/TSVM kernel width
        σ in {1e-6, ..., 1e6}, LapSVM σ in {1, 10, 100, 1000}; ELM/SS-ELM n_H = 1000.
        ``"small"``: a few points around the usual optimum, for tests and quick looks.

    Returns
    -------
    list of ModelSpec
    """
    if grid not in ("full", "small"):
        raise ConfigError(f"protocol.grid must be 'full' or 'small', got {grid!r}")
    unknown = [name for name in names if name not in MODEL_KINDS]
    if unknown:
        raise ConfigError(f"protocol.models must be among {list(MODEL_KINDS)}, got {unknown}")
    full = grid == "full"
    decades = [10.0 ** k for k in range(-6, 7)]
    reg = decades if full else [1e-2, 1.0, 1e2]
    width = decades if full else [1.0, 3.0, 10.0]
    specs = {
        "svm": lambda: ModelSpec(
            "svm", SVMClassifier(),
            {"C": decades if full else [0.1, 1.0, 10.0, 100.0], "kernel_width": width},
            select=svm_grid_search),
        "elm": lambda: ModelSpec("elm", ELMClassifier(n_hidden=1000), {"C": reg},
                                 randomised=True),
        "sselm": lambda: ModelSpec("sselm", SSELMClassifier(n_hidden=1000),
                                   {"C": reg, "lam": reg}, semi_supervised=True,
                                   randomised=True, select=sselm_grid_search),
        "lapsvm": lambda: ModelSpec(
            "lapsvm", LapSVMClassifier(),
            {"gamma_A": reg, "gamma_I": reg,
             "kernel_width": [1.0, 10.0, 100.0, 1000.0] if full else [3.0, 10.0]},
            semi_supervised=True, select=lapsvm_grid_search),
        "tsvm": lambda: ModelSpec("tsvm", TSVMClassifier(), {"C": reg, "kernel_width": width},
                                  semi_supervised=True),
    }
    return [_naive_spec(name) if name in NAIVE_MODELS else specs[name]() for name in names]


def _naive_spec(name):
    """The naive floor (:mod:`._naive`): a balanced RBF SVM, C = 1, ``gamma="scale"``."""
    return ModelSpec(name, SVMClassifier(C=1.0, class_weight="balanced"), {}, select=scale_width,
                     representation=NaiveRepresentation(NAIVE_MODELS[name]))
