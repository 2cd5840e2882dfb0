"""The ACA search: compiled forward DP and backtrack, coordinate descent, initialisation.

ACA (S2 §3.2; Zhou, De la Torre & Hodgins) splits a frame sequence into contiguous segments of at
most ``max_length`` frames and clusters them with the DTAK segment kernel. Coordinate descent
alternates a forward dynamic programme (the best segmentation and labels given the previous
segmentation's clusters, S2 eq 3.9) and its backtrack, until the segmentation stops changing.

The forward step is the compiled :func:`_dp_advance`. It keeps, per candidate length, one DTAK row
against every reference frame for the current and the previous end frame (the incremental DTAK
table ``Q`` of the reference, cut to 2 × max_length × n floats instead of max_length² × n), and the
frame kernel is evaluated one row at a time, so memory is O(n · max_length), never O(n²).
The online segmenter (:mod:`._online_segmenter`) runs the same programme against fixed prototypes
with its own float32, in-place kernel, tested equal to this one.

The estimator (:class:`~._aca.ACA`) and HACA (:mod:`._haca`) own the checks; everything here takes
a validated :class:`_Problem`.
"""

import warnings
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.linalg import eigh
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ..._errors import ConfigError, ModelError
from ._dtak import _segment_matrix
from ._kernels import KERNELS, _kernel_diag, _kernel_row, frame_kernel, gaussian_bandwidth
from ._segment_chain import _INF, _backtrack, _cluster_terms, _nearest_cluster

__all__ = ["Segmentation"]

_MAX_RANDOM_TRIES = 100


class Segmentation(NamedTuple):
    """Contiguous segments of a sequence and their clusters.

    Attributes
    ----------
    starts : ndarray of shape (n_segments + 1,)
        0-based first frame of each segment, with the number of frames appended.
    labels : ndarray of shape (n_segments,)
        Cluster of each segment.
    """

    starts: np.ndarray
    labels: np.ndarray

    def frame_labels(self):
        """Cluster of every frame, shape (n_frames,)."""
        return np.repeat(self.labels, np.diff(self.starts))

    def equals(self, other):
        return np.array_equal(self.starts, other.starts) and np.array_equal(self.labels, other.labels)


class _Problem(NamedTuple):
    """A sequence to segment, as the compiled code sees it."""

    code: int
    sigma: float
    X: np.ndarray
    weights: np.ndarray
    shift: float

    @property
    def n(self):
        return self.X.shape[0]

    def XT(self):
        """Frames transposed, C order, for :func:`_kernel_row` (the kernel matrix when precomputed)."""
        return self.X if self.code == KERNELS["precomputed"] else np.ascontiguousarray(self.X.T)

    def diag(self):
        return _kernel_diag(self.code, self.sigma, self.X) + self.shift

    def segment_matrix(self, starts):
        return _segment_matrix(self.code, self.sigma, self.X, starts, self.weights, self.shift)


@njit(cache=True)
def _dp_advance(code, sigma, Xq, wq, dq, XrT, wr, r_starts, r_labels, r_wsum, inv_count, t3,
                shift, offset, min_len, max_len, Q, krow, obj, head, lab, v0, v1):
    """Forward DP (``acaFordSlow.m``) over local frames [v0, v1) against reference segments.

    Local frame u is absolute frame ``offset + u``. ``Xq``, ``wq``, ``dq`` hold the candidate frames,
    their weights and kernel diagonal (at least ``max_len - 1`` frames before v0 unless the buffer
    starts the stream); ``XrT`` is the reference frames transposed (see :func:`_kernel_row`).
    ``obj[u + 1]`` is the best cost of frames up to u (``obj[0]`` the cost before the buffer, inf
    where unreachable); ``head`` (absolute first frame) and ``lab`` (cluster) of the best last
    segment ending at u are written for u in [v0, v1). ``Q[(offset + u) % 2, s, l - 1]`` is the
    DTAK cell of the candidate [u - l + 1, u] against reference frame s. The candidate length is
    the innermost axis: the rows of different lengths are independent, so that loop vectorises.
    """
    k = t3.shape[0]
    m = r_labels.shape[0]
    t2 = np.empty((max_len, k))
    wsum = np.empty(max_len)
    t1 = np.empty(max_len)
    for v in range(v0, v1):
        cur = (offset + v) % 2
        row = Q[cur]
        above = Q[1 - cur]
        _kernel_row(code, sigma, Xq, v, XrT, 0, krow)
        if shift != 0.0 and 0 <= offset + v < krow.shape[0]:
            krow[offset + v] += shift
        wv = wq[v]
        n_len = min(max_len, v + 1)
        w_acc = 0.0
        t1_acc = 0.0
        for q in range(n_len):
            i = v - q
            w_acc += wq[i]
            t1_acc += wq[i] * dq[i]
            wsum[q] = w_acc
            t1[q] = t1_acc / w_acc
            for c in range(k):
                t2[q, c] = 0.0
        for j in range(m):
            s0 = r_starts[j]
            s1 = r_starts[j + 1]
            kk = krow[s0]
            row[s0, 0] = (wv + wr[s0]) * kk
            for q in range(1, n_len):
                row[s0, q] = above[s0, q - 1] + wv * kk
            for s in range(s0 + 1, s1):
                kk = krow[s]
                g_diag = (wv + wr[s]) * kk
                g_ref = wr[s] * kk
                g_cand = wv * kk
                row[s, 0] = row[s - 1, 0] + g_ref
                for q in range(1, n_len):
                    row[s, q] = max(above[s - 1, q - 1] + g_diag, row[s - 1, q] + g_ref,
                                    above[s, q - 1] + g_cand)
            c = r_labels[j]
            for q in range(n_len):
                t2[q, c] += row[s1 - 1, q] / (wsum[q] + r_wsum[j])
        best = _INF
        best_head = -1
        best_lab = -1
        for q in range(min_len - 1, n_len):
            i = v - q
            if obj[i] == _INF:
                continue
            dist_min, c_min = _nearest_cluster(t1[q], t2[q], t3, inv_count, k)
            total = obj[i] + dist_min
            if total < best:
                best = total
                best_head = offset + i
                best_lab = c_min
        obj[v + 1] = best
        head[v] = best_head
        lab[v] = best_lab


def _dp_search(problem, seg, k, min_len, max_len, diag):
    """One forward DP and backtrack given the segmentation ``seg`` (``dpSearch.m``)."""
    n = problem.n
    T = problem.segment_matrix(seg.starts)
    inv, t3 = _cluster_terms(T, seg.labels, k)
    wsum = np.add.reduceat(problem.weights, seg.starts[:-1])
    obj = np.empty(n + 1)
    obj[0] = 0.0
    head = np.empty(n, dtype=np.int64)
    lab = np.empty(n, dtype=np.int64)
    Q = np.empty((2, n, max_len))
    _dp_advance(problem.code, problem.sigma, problem.X, problem.weights, diag, problem.XT(),
                problem.weights, seg.starts, seg.labels, wsum, inv, t3, problem.shift, 0,
                min_len, max_len, Q, np.empty(n), obj, head, lab, 0, n)
    if obj[n] == _INF:
        raise ModelError(f"ACA: no segmentation of {n} frames has every length in "
                         f"[min_length={min_len}, max_length={max_len}]")
    starts, labels = _backtrack(head, lab, 0, -1, n - 1)
    return Segmentation(starts, labels), float(obj[n])


def _coordinate_descent(problem, seg, k, min_len, max_len, max_iter):
    """``segAca.m``: DP steps until (s, G) repeats, a cluster empties (objective inf) or max_iter."""
    diag = problem.diag()
    obj = _INF
    for n_iter in range(1, max_iter + 1):
        new, obj = _dp_search(problem, seg, k, min_len, max_len, diag)
        if np.unique(new.labels).shape[0] < k:
            return new, _INF, n_iter
        if new.equals(seg):
            return new, obj, n_iter
        seg = new
    return seg, obj, max_iter


def _psd_shift(problem, seg):
    """σ = |λ_min(T)| when the segment kernel matrix of ``seg`` is not PSD (S2 §3.2), else 0."""
    lam = np.linalg.eigvalsh(problem.segment_matrix(seg.starts))[0]
    return float(-lam) if lam < 0 else 0.0


def _spectral_labels(S, k, rng):
    """``cluSc.m``: normalised spectral clustering of a similarity matrix into k groups."""
    d = np.sqrt(np.maximum(S.sum(axis=1), np.finfo(float).tiny))
    L = S / d[:, None] / d[None, :]
    _, V = eigh((L + L.T) / 2, subset_by_index=[S.shape[0] - k, S.shape[0] - 1])
    norms = np.linalg.norm(V, axis=1)
    norms[norms < np.finfo(float).eps] = 1.0
    km = KMeans(n_clusters=k, n_init=10, random_state=rng.integers(2**31 - 1))
    return km.fit_predict(V / norms[:, None]).astype(np.int64)


@njit(cache=True)
def _propagated_similarity(K, max_len):
    """``conPropSim.m``: κ'(i, j) = max over shifts w ≤ max_len of min(κ(i, j), κ(i+w, j+w))."""
    n = K.shape[0]
    P = np.zeros((n, n))
    for i1 in range(n):
        for j1 in range(i1 + 1, n):
            for w in range(1, max_len + 1):
                i2 = i1 + w
                j2 = j1 + w
                if j2 >= n:
                    break
                v = min(K[i1, j1], K[i2, j2])
                P[i1, j1] = max(P[i1, j1], v)
                P[i2, j2] = max(P[i2, j2], v)
                P[i1, j2] = max(P[i1, j2], v)
                P[i2, j1] = max(P[i2, j1], v)
    out = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = P[i, j]
            out[j, i] = P[i, j]
    return out


@njit(cache=True)
def _merge_frames(frame_labels, k, min_len, max_len):
    """``mergeDP.m`` (with its comparison bug fixed): merge frame labels into segments whose
    lengths lie in [min_len, max_len], minimising the number of frames relabelled."""
    n = frame_labels.shape[0]
    cum = np.zeros((n + 1, k), dtype=np.int64)
    for u in range(n):
        cum[u + 1] = cum[u]
        cum[u + 1, frame_labels[u]] += 1
    obj = np.full(n + 1, _INF)
    obj[0] = 0.0
    head = np.full(n, -1, dtype=np.int64)
    lab = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        for nv in range(min_len, min(max_len, v + 1) + 1):
            i = v - nv + 1
            if obj[i] == _INF:
                continue
            c_best = 0
            for c in range(1, k):
                if cum[v + 1, c] - cum[i, c] > cum[v + 1, c_best] - cum[i, c_best]:
                    c_best = c
            total = obj[i] + nv - (cum[v + 1, c_best] - cum[i, c_best])
            if total < obj[v + 1]:
                obj[v + 1] = total
                head[v] = i
                lab[v] = c_best
    return head, lab, obj[n]


def _random_segmentation(problem, k, min_len, max_len, rng):
    """``segIniR.m``: random lengths in [min_len, max_len], spectral clustering of their DTAK matrix."""
    n = problem.n
    for _ in range(_MAX_RANDOM_TRIES):
        lengths = rng.integers(min_len, max_len + 1, size=n // min_len + 1)
        ends = np.cumsum(lengths)
        m = int(np.searchsorted(ends, n)) + 1
        starts = np.concatenate([[0], ends[:m - 1], [n]]).astype(np.int64)
        if not min_len <= starts[-1] - starts[-2] <= max_len:
            continue
        labels = _spectral_labels(problem.segment_matrix(starts), k, rng)
        if np.unique(labels).shape[0] == k:
            return Segmentation(starts, labels)
    raise ModelError(f"ACA: no random initial segmentation with {k} non-empty clusters in "
                     f"{_MAX_RANDOM_TRIES} tries; lower n_clusters={k}")


def _frame_merge_segmentation(problem, frame_labels, k, min_len, max_len, rng):
    head, lab, obj = _merge_frames(frame_labels, k, min_len, max_len)
    if obj == _INF:
        raise ModelError(f"ACA: {problem.n} frames cannot be cut into segments of "
                         f"[min_length={min_len}, max_length={max_len}] frames")
    seg = Segmentation(*_backtrack(head, lab, 0, -1, problem.n - 1))
    if np.unique(seg.labels).shape[0] < k:
        return _random_segmentation(problem, k, min_len, max_len, rng)
    return seg


def _initial_segmentation(problem, init, k, min_len, max_len, rng):
    """One initial segmentation: "random", "propagative" (``segIniP.m``) or "kmeans"."""
    if init == "random":
        return _random_segmentation(problem, k, min_len, max_len, rng)
    if init == "kmeans":
        km = KMeans(n_clusters=k, n_init=10, random_state=rng.integers(2**31 - 1))
        frame_labels = km.fit_predict(problem.X).astype(np.int64)
    else:
        K = problem.X if problem.code == KERNELS["precomputed"] else frame_kernel(
            problem.X, kernel=_kernel_name(problem.code), sigma=problem.sigma)
        frame_labels = _spectral_labels(_propagated_similarity(K, max_len), k, rng)
    return _frame_merge_segmentation(problem, frame_labels, k, min_len, max_len, rng)


def _kernel_name(code):
    return next(name for name, value in KERNELS.items() if value == code)


def _segment_problem(problem, init, init_segmentation, k, min_len, min_dp, max_len, n_init,
                     max_iter, psd_shift, rng):
    """Restarts of coordinate descent; the result with the lowest objective (``segAlg.m``).

    ``min_len`` bounds the initial segments, ``min_dp`` the DP's segments.
    """
    if init_segmentation is not None:
        seeds = [init_segmentation]
    else:
        seeds = [_initial_segmentation(problem, init, k, min_len, max_len, rng)
                 for _ in range(n_init)]
    best = None
    for seg0 in seeds:
        run = problem._replace(shift=_psd_shift(problem, seg0)) if psd_shift else problem
        seg, obj, n_iter = _coordinate_descent(run, seg0, k, min_dp, max_len, max_iter)
        if best is None or obj < best[1]:
            best = (seg, obj, n_iter, run.shift)
    if best[1] == _INF:
        warnings.warn(f"ACA: every restart emptied a cluster (n_clusters={k}); the result has "
                      "fewer clusters and an infinite objective", ConvergenceWarning, stacklevel=3)
    return best


def _check_lengths(min_length, max_length, owner):
    if min_length > max_length:
        raise ConfigError(f"{owner}.min_length={min_length} must not exceed "
                         f"max_length={max_length}")


def _as_segmentation(seg):
    if seg is None:
        return None
    return Segmentation(np.asarray(seg.starts, dtype=np.int64), np.asarray(seg.labels, dtype=np.int64))


def _make_problem(X, kernel, sigma, nei, sample_weight, owner):
    """Resolve the kernel width and weights of a sequence (validated at the estimator boundary)."""
    n = X.shape[0]
    if kernel == "precomputed" and X.shape[1] != n:
        raise ModelError(f"{owner}: a precomputed kernel must be square, got shape {X.shape}")
    if sigma is None:
        sigma = gaussian_bandwidth(X, nei) if kernel == "gaussian" else 0.0
    weights = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if weights.shape != (n,) or not np.all(weights > 0):
        raise ModelError(f"{owner}: sample_weight must be {n} positive weights, got shape "
                         f"{weights.shape}")
    return _Problem(KERNELS[kernel], float(sigma), X, np.ascontiguousarray(weights), 0.0)
