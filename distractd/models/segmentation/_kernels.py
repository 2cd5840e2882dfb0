"""Frame kernels for temporal segmentation: Gaussian (reference bandwidth rule), binary, linear.

A frame kernel compares two frames (rows of a feature sequence). ACA and HACA evaluate it on the fly,
one row at a time, through the compiled :func:`_kernel_row`, so no n × n matrix is ever stored; the
dense :func:`frame_kernel` is for small sequences, tests and inspection.

The kernel is encoded for the compiled code as an integer ``code`` and a width ``sigma`` (see
:data:`KERNELS`). ``"precomputed"`` means the "features" of frame i are row i of a given kernel
matrix (used for HACA levels above the first, whose frames are the previous level's segments).

References
----------
S2 §3.2 (frame kernels, DTAK); F. Zhou's ACA code, ``conKnl.m`` and ``bandG.m``.
"""

import numpy as np
from numba import njit

__all__ = ["KERNELS", "gaussian_bandwidth", "frame_kernel"]

KERNELS = {"precomputed": 0, "gaussian": 1, "binary": 2, "linear": 3}
_EPS = np.finfo(np.float64).eps
_BLOCK_ROWS = 512


def gaussian_bandwidth(X, nei=0.1):
    """Gaussian width σ by the reference rule (``bandG.m``), computed in column blocks.

    σ is the mean, over all frames, of the distances to their ``floor(n·nei)`` nearest frames
    (itself included, at distance 0).

    Parameters
    ----------
    X : ndarray of shape (n_frames, n_features)
        Frames, in feature units.
    nei : float, default=0.1
        Fraction of frames in each neighbourhood. 0 gives σ = 0 (the binary kernel), NaN gives σ = 1.

    Returns
    -------
    sigma : float
        Kernel width, in feature units.
    """
    if np.isnan(nei):
        return 1.0
    if nei == 0:
        return 0.0
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    m = min(max(1, int(np.floor(n * nei))), n)
    sq = np.einsum("ij,ij->i", X, X)
    total = 0.0
    for lo in range(0, n, _BLOCK_ROWS):
        block = X[lo:lo + _BLOCK_ROWS]
        d2 = sq[lo:lo + _BLOCK_ROWS, None] + sq[None, :] - 2.0 * block @ X.T
        d = np.sqrt(np.maximum(d2, 0.0))
        d[np.arange(len(block)), np.arange(lo, lo + len(block))] = 0.0
        total += np.partition(d, m - 1, axis=1)[:, :m].sum()
    return float(total / (n * m))


def frame_kernel(X, Y=None, kernel="gaussian", sigma=1.0):
    """Dense frame-kernel matrix between the rows of ``X`` and of ``Y``.

    Parameters
    ----------
    X : ndarray of shape (n_x, n_features)
        Frames.
    Y : ndarray of shape (n_y, n_features), default=None
        Second set of frames; ``X`` when None.
    kernel : {"gaussian", "binary", "linear"}, default="gaussian"
        Gaussian ``exp(-‖x-y‖² / (2σ² + eps))`` (as the reference, so σ = 0 is binary), binary
        (1 where the frames are equal), or linear ``xᵀy``.
    sigma : float, default=1.0
        Gaussian width, in feature units.

    Returns
    -------
    K : ndarray of shape (n_x, n_y)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = X if Y is None else np.ascontiguousarray(Y, dtype=np.float64)
    K = np.empty((X.shape[0], Y.shape[0]))
    _kernel_block(KERNELS[kernel], float(sigma), X, np.ascontiguousarray(Y.T), K)
    return K


@njit(cache=True)
def _kernel_value(code, sigma, A, i, B, j):
    """k(A[i], B[j]); for code 0 (precomputed) A is the kernel matrix and the value is A[i, j]."""
    if code == 0:
        return A[i, j]
    if code == 3:
        dot = 0.0
        for f in range(A.shape[1]):
            dot += A[i, f] * B[j, f]
        return dot
    d2 = 0.0
    for f in range(A.shape[1]):
        diff = A[i, f] - B[j, f]
        d2 += diff * diff
    if code == 2:
        return 1.0 if d2 == 0.0 else 0.0
    return np.exp(-d2 / (2.0 * sigma * sigma + _EPS))


@njit(cache=True)
def _kernel_row(code, sigma, A, i, BT, j0, out):
    """out[j] = k(A[i], B[j0 + j]) for j < len(out), given ``BT`` = Bᵀ (n_features, n_B), C order.

    Feature-major so the loop over j vectorises; for code 0 (precomputed) out = A[i, j0:] and BT is
    unused. The values equal :func:`_kernel_value` bit for bit (same summation order over features).
    """
    n = out.shape[0]
    if code == 0:
        for j in range(n):
            out[j] = A[i, j0 + j]
        return
    out[:] = 0.0
    for f in range(BT.shape[0]):
        a = A[i, f]
        col = BT[f, j0:j0 + n]
        if code == 3:
            for j in range(n):
                out[j] += a * col[j]
        else:
            for j in range(n):
                diff = a - col[j]
                out[j] += diff * diff
    if code == 2:
        for j in range(n):
            out[j] = 1.0 if out[j] == 0.0 else 0.0
    elif code == 1:
        denom = 2.0 * sigma * sigma + _EPS
        for j in range(n):
            out[j] = np.exp(-out[j] / denom)


@njit(cache=True)
def _kernel_block(code, sigma, A, BT, out):
    for i in range(out.shape[0]):
        _kernel_row(code, sigma, A, i, BT, 0, out[i])


@njit(cache=True)
def _kernel_diag(code, sigma, A):
    out = np.empty(A.shape[0])
    for i in range(A.shape[0]):
        out[i] = _kernel_value(code, sigma, A, i, A, i)
    return out
