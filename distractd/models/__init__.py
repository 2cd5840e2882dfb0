"""Learning: ELM family, SS-ELM, LapSVM, graphs, ACA/HACA, clustering, artifacts, evaluation."""

from ._metrics import (
    accuracy, binary_scores, clustering_accuracy, clustering_g_mean, detection_delays,
    false_alarms_per_hour, g_mean, sensitivity, specificity,
)

__all__ = [
    "accuracy", "sensitivity", "specificity", "g_mean", "binary_scores", "clustering_accuracy",
    "clustering_g_mean", "detection_delays", "false_alarms_per_hour",
]
