"""Dynamic time alignment kernel (DTAK), its generalisation GDTAK, and the segment kernel matrix.

DTAK between sequences X (n_x frames) and Y (n_y frames) with frame weights w is the best monotone
alignment of their frame kernel values (S2 eq 3.1–3.2, ``dtakFordSlow.m``)::

    u[i, j] = max(u[i, j-1] + w_j κ_ij, u[i-1, j] + w_i κ_ij, u[i-1, j-1] + (w_i + w_j) κ_ij)
    u[0, 0] = (w_0 + w_0') κ_00,        τ(X, Y) = u[n_x-1, n_y-1] / (Σ w^x + Σ w^y)

With unit weights this is plain DTAK. GDTAK (S2 §3.3), used by HACA above the first level, is the
same recursion where the "frames" are sub-segments, κ is the DTAK between them and the weights are
their lengths in frames. Only two rows of ``u`` are kept, so memory is O(n_y).
"""

import numpy as np
from numba import njit

from ._kernels import KERNELS, _kernel_row

__all__ = ["dtak", "gdtak", "segment_kernel_matrix"]


def dtak(K, w_x=None, w_y=None):
    """DTAK value of two sequences from their frame kernel block.

    Parameters
    ----------
    K : ndarray of shape (n_x, n_y)
        Frame kernel values κ_ij between the frames of X and of Y.
    w_x, w_y : ndarray of shape (n_x,) and (n_y,), default=None
        Frame weights (unit weights when None).

    Returns
    -------
    tau : float
        τ(X, Y), in kernel units.
    """
    K = np.ascontiguousarray(K, dtype=np.float64)
    n_x, n_y = K.shape
    w_x = np.ones(n_x) if w_x is None else np.asarray(w_x, dtype=np.float64)
    w_y = np.ones(n_y) if w_y is None else np.asarray(w_y, dtype=np.float64)
    return _dtak_block(K, 0, 0, 0, n_x, 0, n_y, w_x, w_y, np.empty(n_y), np.empty(n_y))


def gdtak(T, n_x, n_y):
    """GDTAK of two segments made of sub-segments (HACA levels ≥ 2).

    Parameters
    ----------
    T : ndarray of shape (m_x, m_y)
        DTAK values between the sub-segments of X and those of Y.
    n_x, n_y : ndarray of shape (m_x,) and (m_y,)
        Lengths of the sub-segments, in frames.

    Returns
    -------
    v : float
        The generalised value u[m_x-1, m_y-1] / (Σ n_x + Σ n_y).
    """
    return dtak(T, n_x, n_y)


def segment_kernel_matrix(X, starts, weights=None, kernel="gaussian", sigma=1.0):
    """Matrix T of DTAK values between all segments of one sequence (``dtaksFord.m``).

    Parameters
    ----------
    X : ndarray of shape (n_frames, n_features), or (n_frames, n_frames) when precomputed
        The frame sequence, or its frame kernel matrix.
    starts : ndarray of shape (n_segments + 1,)
        0-based segment starts with ``n_frames`` appended.
    weights : ndarray of shape (n_frames,), default=None
        Frame weights (unit when None).
    kernel : {"gaussian", "binary", "linear", "precomputed"}, default="gaussian"
        Frame kernel (see :func:`distractd.models.segmentation.frame_kernel`).
    sigma : float, default=1.0
        Gaussian width, in feature units.

    Returns
    -------
    T : ndarray of shape (n_segments, n_segments)
        Symmetric segment kernel matrix.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    weights = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    return _segment_matrix(KERNELS[kernel], float(sigma), X, starts, weights, 0.0)


@njit(cache=True)
def _dtak_block(K, r0, c0, a0, a1, b0, b1, w_a, w_b, prev, cur):
    """DTAK between frames [a0, a1) of A and [b0, b1) of B from their kernel rows.

    ``K[i - r0, j - c0]`` is κ(A_i, B_j); the frames are weighted by w_a[i] and w_b[j]; ``prev`` and
    ``cur`` are work rows of length ≥ b1 - b0.
    """
    for i in range(a0, a1):
        wi = w_a[i]
        krow = K[i - r0]
        for j in range(b0, b1):
            k = krow[j - c0]
            wj = w_b[j]
            c = j - b0
            if i == a0 and j == b0:
                cur[c] = (wi + wj) * k
            elif i == a0:
                cur[c] = cur[c - 1] + wj * k
            elif j == b0:
                cur[c] = prev[c] + wi * k
            else:
                cur[c] = max(cur[c - 1] + wj * k, prev[c] + wi * k, prev[c - 1] + (wi + wj) * k)
        prev, cur = cur, prev
    total = 0.0
    for i in range(a0, a1):
        total += w_a[i]
    for j in range(b0, b1):
        total += w_b[j]
    return prev[b1 - b0 - 1] / total


@njit(cache=True)
def _segment_matrix(code, sigma, X, starts, w, shift):
    """T[a, b] = DTAK of segments a and b of X; ``shift`` is added to κ(x_i, x_i) (K + σI).

    The kernel rows of one segment's frames against the whole sequence are computed once per
    segment (only the columns of this and later segments), so memory is (longest segment) ×
    n_frames.
    """
    m = starts.shape[0] - 1
    n = starts[m]
    longest = 0
    for s in range(m):
        longest = max(longest, starts[s + 1] - starts[s])
    XT = X if code == 0 else np.ascontiguousarray(X.T)
    K = np.empty((longest, n))
    prev = np.empty(longest)
    cur = np.empty(longest)
    T = np.empty((m, m))
    for a in range(m):
        a0 = starts[a]
        for i in range(a0, starts[a + 1]):
            _kernel_row(code, sigma, X, i, XT, a0, K[i - a0, :n - a0])
            K[i - a0, i - a0] += shift
        for b in range(a, m):
            T[a, b] = _dtak_block(K, a0, a0, a0, starts[a + 1], starts[b], starts[b + 1], w, w,
                                  prev, cur)
            T[b, a] = T[a, b]
    return T
