"""Semi-supervised ELM (ALGORITHMS §1.3 and appendix A 1.1; Huang et al. 2014; S0 §5.2.2)."""

import numpy as np

from ..._estimator import fit_context
from ._elm import _ELMBase, _encode_targets, _solve_output_weights, hidden_output
from ._graph import _GraphMixin
from ._scorers import CONSTRAINTS

__all__ = ["SSELMClassifier"]


def _class_weights(y, labelled, classes, C):
    """Class-balanced penalties ``C·l/(K·N_class)`` on labelled rows, 0 on unlabelled rows."""
    c = np.zeros(len(y))
    n_labelled = np.count_nonzero(labelled)
    for label in classes:
        rows = labelled & (y == label)
        c[rows] = C * n_labelled / (len(classes) * np.count_nonzero(rows))
    return c


def _sselm_beta(H, L, y, labelled, classes, C, lam):
    """SS-ELM output weights for hidden output ``H`` of every row and Laplacian ``L`` over them."""
    T = np.zeros((len(y), 1 if len(classes) == 2 else len(classes)))
    T[labelled] = _encode_targets(y[labelled], classes)
    return _solve_output_weights(H, T, _class_weights(y, labelled, classes, C), L, lam)


class SSELMClassifier(_GraphMixin, _ELMBase):
    """Semi-supervised extreme learning machine with a graph-Laplacian manifold penalty.

    Minimises, over the labelled and unlabelled rows together (S0 eq 5.5),
    ``½‖C^½(T − Hβ)‖² + ½‖β‖² + (λ/2) tr(βᵀHᵀLHβ)``
    with C diagonal: ``C·l/(K·N_c)`` for a labelled row of class c (l labelled rows, K classes, so
    the mean labelled weight is ``C``), 0 for unlabelled rows (y = -1) whose target rows are 0.
    Targets are ±1, one output for two classes, one per class otherwise. Closed form (eq 5.6):
    ``(I + HᵀCH + λHᵀLH)⁻¹HᵀCT`` when ``n_hidden <= n_samples``, else
    ``Hᵀ(I + (C + λL)HHᵀ)⁻¹CT``. Neither loss nor λ is normalised by the sample count, as in the
    reference code.

    Parameters
    ----------
    n_hidden : int, default=1000
        Hidden neurons, n_H (S0 §5.4.3).
    C : float, default=1.0
        Mean labelled-row penalty, C0 of the reference.
    lam : float, default=1.0
        Manifold regularisation weight λ (≥ 0).
    n_neighbors : int, default=10
        k of the symmetric kNN graph; at most ``n_samples - 1`` is used.
    graph_weights : {"heat", "binary"}, default="heat"
        Edge weights, see :func:`distractd.models.detectors.knn_graph`.
    graph_width : float or None, default=None
        Heat width in feature units; None = mean kNN edge length. The thesis' ``exp(-d²/t)``
        with t = 1 is ``graph_width = 1/sqrt(2)``.
    laplacian_normalized : bool, default=False
        Normalised instead of unnormalised Laplacian.
    laplacian_power : int, default=1
        Integer power of the Laplacian.
    bias : bool, default=True
        Random hidden biases; the reference has none (``bias=False``).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the hidden layer.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    hidden_weights_ : ndarray of shape (n_features, n_hidden)
    hidden_bias_ : ndarray of shape (n_hidden,)
    beta_ : ndarray of shape (n_hidden, n_outputs)
    n_features_in_ : int

    References
    ----------
    S0 §5.2.2 eq 5.4–5.6; G. Huang, S. Song, J. Gupta, C. Wu, "Semi-supervised and unsupervised
    extreme learning machines", IEEE Trans. Cybernetics 44(12), 2014.
    """

    _constraints = CONSTRAINTS["SSELMClassifier"]

    def __init__(self, n_hidden=1000, C=1.0, lam=1.0, n_neighbors=10, graph_weights="heat",
                 graph_width=None, laplacian_normalized=False, laplacian_power=1, bias=True,
                 random_state=None):
        self.n_hidden = n_hidden
        self.C = C
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.graph_weights = graph_weights
        self.graph_width = graph_width
        self.laplacian_normalized = laplacian_normalized
        self.laplacian_power = laplacian_power
        self.bias = bias
        self.random_state = random_state

    @fit_context
    def fit(self, X, y):
        """Fit on labelled and unlabelled rows (y = -1 marks unlabelled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels, -1 for unlabelled rows.

        Returns
        -------
        self : SSELMClassifier
        """
        X, y, labelled = self._check_fit_data(X, y)
        self._draw_hidden(X.shape[1])
        H = hidden_output(X, self.hidden_weights_, self.hidden_bias_)
        L = self._graph_laplacian(X) if self.lam > 0 else None
        self.beta_ = _sselm_beta(H, L, y, labelled, self.classes_, self.C, self.lam)
        return self
