"""segment_drive on the drift-free representation, with the label-free selection and a prior."""

import numpy as np
import pytest

from distractd._errors import ConfigError
from distractd.models.evaluation import clustering_accuracy
from distractd.models.segmentation import (
    drift_features, drift_free_windows, driving_segmenter, segment_drive, standardize_windows,
)
from distractd.pipeline import extract_features
from distractd.simulators import simulate_drive


@pytest.fixture(scope="module")
def windows():
    return extract_features(simulate_drive(5, duration_s=600.0, protocol="visual-manual"))[::2]


def test_drift_free_auto_segmentation_is_the_composition_of_its_parts(windows):
    est = segment_drive(windows.X, n_clusters=2, hop_s=1.0, t_end=windows.t_end,
                        features="auto")
    Z = drift_free_windows(windows.t_end, windows.X)
    keep = drift_features(Z, hop_s=1.0)
    np.testing.assert_array_equal(est.features_, keep)
    again = driving_segmenter("aca", 2, hop_s=1.0).fit(standardize_windows(Z)[0][:, keep])
    np.testing.assert_array_equal(est.labels_, again.labels_)


def test_a_prior_pulls_the_two_segment_clusters_onto_the_task(windows):
    known = windows.label >= 0
    y = windows.label[known]
    plain = segment_drive(windows.X, n_clusters=2, hop_s=1.0, t_end=windows.t_end,
                          features="auto")
    truthful = np.where(windows.label == 1, 0.8, 0.2)
    informed = segment_drive(windows.X, n_clusters=2, hop_s=1.0, t_end=windows.t_end,
                             features="auto", prior=truthful)
    assert clustering_accuracy(y, informed.labels_[known]) >= 0.9
    assert (clustering_accuracy(y, informed.labels_[known])
            >= clustering_accuracy(y, plain.labels_[known]))
    with pytest.raises(ConfigError, match="one value per window"):
        segment_drive(windows.X, n_clusters=2, t_end=windows.t_end, prior=truthful[:-1])
    with pytest.raises(ConfigError, match="segment features must be 'all' or 'auto'"):
        segment_drive(windows.X, features="gaze")
