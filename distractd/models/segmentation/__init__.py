"""Segmentation: frame kernels, DTAK, ACA, HACA, segment prototypes, the online segmenter and the
drift-free representation they run on."""

from ._aca import ACA, Segmentation
from ._dtak import dtak, gdtak, segment_kernel_matrix
from ._haca import (
    DRIVING_MAX_SECONDS, DRIVING_N_CLUSTERS, DRIVING_NEI, HACA, PRIOR_WEIGHT, driving_segmenter,
    segment_drive, standardize_windows,
)
from ._kernels import KERNELS, frame_kernel, gaussian_bandwidth
from ._online_segmenter import OnlineSegmenter
from ._prototypes import (
    PROTOTYPE_MAX_SECONDS, PROTOTYPE_SEGMENTS, SEGMENT_DTYPE, SegmentPrototypes,
    fit_segment_prototypes,
)
from ._representation import (
    DRIFT_LAG_S, DRIFT_MAX_AUTOCORRELATION, drift_features, drift_free_windows,
)

__all__ = [
    "ACA", "HACA", "Segmentation", "dtak", "gdtak", "segment_kernel_matrix", "KERNELS",
    "frame_kernel", "gaussian_bandwidth", "segment_drive", "driving_segmenter",
    "standardize_windows", "DRIVING_NEI", "DRIVING_MAX_SECONDS", "DRIVING_N_CLUSTERS",
    "PRIOR_WEIGHT", "SEGMENT_DTYPE", "SegmentPrototypes", "fit_segment_prototypes",
    "PROTOTYPE_MAX_SECONDS", "PROTOTYPE_SEGMENTS", "OnlineSegmenter", "drift_free_windows",
    "drift_features", "DRIFT_LAG_S", "DRIFT_MAX_AUTOCORRELATION",
]
