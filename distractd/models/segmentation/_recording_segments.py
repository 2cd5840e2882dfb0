"""Segments of one recording, from reading its windows to the segment table (``distractd
segment``): against a model's stored prototypes, or found afresh by ACA/HACA."""

import csv
from dataclasses import dataclass

import numpy as np

from ..._errors import ModelError
from ...pipeline import FEATURE_NAMES, PipelineConfig, extract_features, require_windows
from ..clustering import model_prior
from ..evaluation import clustering_accuracy_many_to_one
from ._haca import DRIVING_MAX_SECONDS, DRIVING_N_CLUSTERS, segment_drive
from ._prototypes import SegmentPrototypes

__all__ = ["RecordingSegments", "segment_recording"]


@dataclass(frozen=True)
class RecordingSegments:
    """A recording cut into segments, each with its cluster and its label (-1: none).

    Attributes
    ----------
    start_s, end_s : ndarray of shape (n_segments,)
        Segment bounds, in window end times (s).
    cluster, label : ndarray of shape (n_segments,)
    frame_accuracy : float or None
        Windows whose recorded label is their cluster's majority label; None without labels.
    model_label_accuracy : float or None
        Windows whose recorded label is the model's label of their cluster; None without a model
        or without labels.
    """

    start_s: np.ndarray
    end_s: np.ndarray
    cluster: np.ndarray
    label: np.ndarray
    frame_accuracy: float = None
    model_label_accuracy: float = None

    def __len__(self):
        return len(self.cluster)

    def write_csv(self, path):
        """Write ``start,end,cluster,label``, one row per segment."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file, lineterminator="\n")
            writer.writerow(("start", "end", "cluster", "label"))
            for row in zip(self.start_s, self.end_s, self.cluster, self.label):
                writer.writerow((f"{row[0]:.3f}", f"{row[1]:.3f}", int(row[2]), int(row[3])))


def segment_recording(recording, *, model=None, prior_model=None, config=None, method="aca",
                      n_clusters=DRIVING_N_CLUSTERS, max_seconds=DRIVING_MAX_SECONDS,
                      inputs="baseline", random_state=0, name="recording"):
    """Segment a recording's windows, and score the segments against its labels if it has any.

    With ``model``, the windows (made with the model's pipeline settings unless ``config`` is
    given) are z-scored by the model and cut against its stored prototypes, which carry their
    cluster labels. Without, :func:`segment_drive` finds segments and clusters in the raw windows
    (``inputs="baseline"``: judged against the driver's running baseline, features chosen without
    labels), joined by ``prior_model``'s view if given; each cluster takes the majority recorded
    label of its windows.

    Parameters
    ----------
    recording : Recording
    model : Detector or None, default=None
        A model artifact holding segment prototypes (``extras["segmenter"]``).
    prior_model : Detector or None, default=None
        Without ``model``: a cohort model whose probability of distraction joins the features.
    config : PipelineConfig or None, default=None
        Pipeline settings (without ``model``, ``baseline`` is switched off).
    method : {"aca", "haca"}, default="aca"
    n_clusters : int, default=DRIVING_N_CLUSTERS
    max_seconds : float, default=DRIVING_MAX_SECONDS
        Longest segment.
    inputs : {"baseline", "drive"}, default="baseline"
    random_state : int, default=0
    name : str, default="recording"
        The recording's file, named by the error of a recording with no complete window.

    Returns
    -------
    RecordingSegments

    Raises
    ------
    ModelError
        ``model`` holds no segment prototypes.
    RecordingError
        The recording is shorter than one window.
    """
    if model is not None and "segmenter" not in model.extras:
        raise ModelError(f"model {model.model_id} holds no segmenter prototypes "
                         f"(extras['segmenter'])")
    if config is None:
        config = (PipelineConfig() if model is None
                  else PipelineConfig.from_dict(model.pipeline_config))
    if model is None:   # raw windows: the drift-free representation is made from them
        config = PipelineConfig.from_dict({**config.to_dict(), "baseline": False})
    windows = extract_features(recording, config)
    require_windows(name, recording, windows, config.window_s)
    if model is not None:
        Z = model.normalize(windows.X[:, model.feature_columns(FEATURE_NAMES)])
        rows = SegmentPrototypes.from_artifact(*model.extras["segmenter"]).segment(
            np.where(np.isnan(Z), 0.0, Z))
        starts = np.append(rows["start"], rows["end"][-1])
        clusters, labels = rows["cluster"], rows["label"]
    else:
        drift_free = inputs == "baseline"
        prior = None if prior_model is None else model_prior(prior_model, windows, FEATURE_NAMES)
        est = segment_drive(windows.X, method=method, n_clusters=n_clusters,
                            max_seconds=max_seconds, hop_s=config.hop_s,
                            random_state=random_state,
                            t_end=windows.t_end if drift_free else None,
                            features="auto" if drift_free else "all", prior=prior)
        starts, clusters = est.segments_.starts, est.segments_.labels
        labels = _majority_labels(windows.label, est.labels_, clusters.max() + 1)[clusters]
    t = np.append(windows.t_end, windows.t_end[-1] + config.hop_s)
    labelled = windows.label >= 0
    frame_accuracy = model_label_accuracy = None
    if labelled.any():
        frame_clusters = np.repeat(clusters, np.diff(starts))
        frame_accuracy = float(clustering_accuracy_many_to_one(windows.label[labelled],
                                                               frame_clusters[labelled]))
        if model is not None:
            frame_labels = np.repeat(labels, np.diff(starts))
            model_label_accuracy = float(np.mean(frame_labels[labelled]
                                                 == windows.label[labelled]))
    return RecordingSegments(t[starts[:-1]], t[starts[1:]], np.asarray(clusters),
                             np.asarray(labels), frame_accuracy, model_label_accuracy)


def _majority_labels(window_labels, window_clusters, n_clusters):
    """Each cluster's majority recorded label over its labelled windows (-1 when none)."""
    mapping = np.full(n_clusters, -1)
    labelled = window_labels >= 0
    for cluster in np.unique(window_clusters):
        votes = window_labels[labelled & (window_clusters == cluster)]
        mapping[cluster] = int(votes.mean() > 0.5) if votes.size else -1
    return mapping
