"""Segmentation: frame kernels, DTAK, ACA, HACA, segment prototypes, the online segmenter and the
drift-free representation they run on.

Names are imported from their module when first used (:mod:`distractd._lazy`), so that a light
name does not load the heavy modules beside it."""

from ..._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._aca": ("ACA", "Segmentation"),
    "._dtak": ("dtak", "gdtak", "segment_kernel_matrix"),
    "._haca": (
        "DRIVING_MAX_SECONDS", "DRIVING_N_CLUSTERS", "DRIVING_NEI", "HACA", "PRIOR_WEIGHT",
        "driving_segmenter", "segment_drive", "standardize_windows",
    ),
    "._kernels": ("KERNELS", "frame_kernel", "gaussian_bandwidth"),
    "._online_segmenter": ("OnlineSegmenter",),
    "._prototype_fitting": ("fit_segment_prototypes",),
    "._prototypes": (
        "PROTOTYPE_MAX_SECONDS", "PROTOTYPE_SEGMENTS", "SEGMENT_DTYPE", "SegmentPrototypes",
    ),
    "._recording_segments": ("RecordingSegments", "segment_recording"),
    "._representation": (
        "DRIFT_LAG_S", "DRIFT_MAX_AUTOCORRELATION", "drift_features", "drift_free_windows",
    ),
})
