"""The pieces of the segment search that ACA's fitting (:mod:`._aca_search`) and the matching of
a stream against fixed prototypes (:mod:`._prototypes`, :mod:`._online_segmenter`) share: the
nearest cluster of a candidate segment, the backtrack of the best chain and the clusters' terms.
numpy and numba only, so that the daemon's online segmenter loads no scikit-learn or scipy
(DESIGN §1).
"""

import numpy as np
from numba import njit

__all__ = []

_INF = np.inf


@njit(cache=True, inline="always")
def _nearest_cluster(t1, t2, t3, inv_count, k):
    """Squared kernel distance of a candidate segment to its nearest non-empty cluster, and the
    cluster: ``t1 - 2 t2[c] / |c| + t3[c]`` minimised over c (S2 eq 3.9)."""
    dist_min = _INF
    c_min = -1
    for c in range(k):
        if inv_count[c] == 0.0:
            continue
        dist = t1 - 2.0 * inv_count[c] * t2[c] + t3[c]
        if dist < dist_min:
            dist_min = dist
            c_min = c
    return dist_min, c_min


@njit(cache=True)
def _backtrack(head, lab, offset, stop, end):
    """Segments of the best chain ending at absolute frame ``end``, back to (not into) frame ``stop``.

    Returns absolute starts (with ``end + 1`` appended) and labels, in time order.
    """
    count = 0
    u = end
    while u > stop:
        count += 1
        u = head[u - offset] - 1
    starts = np.empty(count + 1, dtype=np.int64)
    labels = np.empty(count, dtype=np.int64)
    starts[count] = end + 1
    u = end
    for c in range(count - 1, -1, -1):
        starts[c] = head[u - offset]
        labels[c] = lab[u - offset]
        u = starts[c] - 1
    return starts, labels


def _cluster_terms(T, labels, k):
    """1/m_c and t3_c = (1/m_c²) Σ_{j1, j2 ∈ c} T[j1, j2] (zero where a cluster is empty)."""
    G = np.zeros((k, labels.shape[0]))
    G[labels, np.arange(labels.shape[0])] = 1.0
    counts = G.sum(axis=1)
    inv = np.divide(1.0, counts, out=np.zeros(k), where=counts > 0)
    t3 = np.einsum("cj,jl,cl->c", G, T, G) * inv**2
    return inv, t3
