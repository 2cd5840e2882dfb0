"""The saved form of each detector kind (``_scorers``): the tables the artifact's load checks
against are those of the estimators, and a loaded model scores without them."""

import json

import numpy as np
import pytest

from distractd._errors import ModelError
from distractd.models import (
    ELMClassifier, LapSVMClassifier, SSELMClassifier, SVMClassifier, TSVMClassifier, load_model,
)
from distractd.models.detectors import DEFAULT_MODEL_PATH, _artifact, _scorers

ESTIMATORS = [ELMClassifier, SSELMClassifier, LapSVMClassifier, TSVMClassifier, SVMClassifier]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_each_kind_names_its_estimators_hyper_parameters_and_arrays(cls):
    kind = cls.__name__
    assert sorted(_scorers.PARAMETERS[kind]) == sorted(cls().get_params())
    assert cls._constraints is _scorers.CONSTRAINTS[kind]
    assert cls._ARRAY_SHAPES is _scorers.SCORERS[kind].ARRAY_SHAPES


def test_a_loaded_model_scores_with_its_saved_form_and_rebuilds_the_estimator_on_demand():
    detector = load_model(DEFAULT_MODEL_PATH)
    assert isinstance(detector.scorer, _scorers.SCORERS[detector.kind])
    X = np.random.default_rng(0).normal(size=(50, len(detector.feature_names)))
    estimator = detector.estimator
    assert type(estimator).__name__ == detector.kind
    np.testing.assert_array_equal(detector.scorer._decision(X), estimator.decision_function(X))


def test_a_model_naming_a_hyper_parameter_its_kind_lacks_is_refused(tmp_path):
    with np.load(DEFAULT_MODEL_PATH, allow_pickle=False) as archive:
        contents = {name: archive[name] for name in archive.files}
    header = json.loads(contents.pop("header").tobytes())
    header["params"]["kernel_width"] = 2.0
    _artifact._seal(header, contents)
    path = tmp_path / "model.npz"
    with open(path, "wb") as file:
        np.savez(file, header=np.frombuffer(json.dumps(header).encode(), np.uint8), **contents)
    with pytest.raises(ModelError, match=f"{header['kind']} has no hyper-parameter "
                                         "'kernel_width'"):
        load_model(path)
