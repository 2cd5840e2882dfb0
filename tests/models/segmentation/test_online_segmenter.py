"""Online fixed-lag segmenter: stream ≡ batch programme, bounded lag, artifact round trip."""

import numpy as np
import pytest

from distractd._errors import ConfigError, ModelError
from distractd.models import ACA, OnlineSegmenter
from distractd.models.segmentation import SegmentPrototypes

MEANS = np.array([[0, 0, 0], [3, 0, 0], [0, 3, 0]], dtype=float)


def _sequence(seed, n_blocks, noise=0.6):
    """3-class piecewise-constant 3-D sequence with segment lengths 6..14; class 2 = distracted."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, 3, size=n_blocks)
    y = np.repeat(classes, rng.integers(6, 15, size=n_blocks))
    return MEANS[y] + noise * rng.normal(size=(len(y), 3)), y


@pytest.fixture(scope="module")
def prototypes():
    X, y = _sequence(0, 15)
    aca = ACA(n_clusters=3, min_length=4, max_length=14, nei=0.3, init="kmeans", n_init=2,
              random_state=0).fit(X)
    return SegmentPrototypes.from_segmentation(
        X, aca.segments_, (y == 2).astype(np.int8), n_clusters=3, sigma=aca.sigma_,
        min_length=1, max_length=14)


def _stream(segmenter, X, rng):
    parts = []
    lo = 0
    while lo < len(X):
        size = int(rng.integers(1, 30))
        committed, provisional = segmenter.update(X[lo:lo + size])
        lo = min(lo + size, len(X))
        parts.append(committed)
        if provisional is None:  # a forced commit took every frame so far
            assert segmenter.committed_end == lo
        else:
            assert provisional["end"] == lo and provisional["committed_at"] == -1
            assert segmenter.committed_end <= provisional["start"]
    parts.append(segmenter.flush())
    return np.concatenate(parts)


def _frames(rows, field):
    return np.repeat(rows[field], rows["end"] - rows["start"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stream_equals_batch_programme(prototypes, seed):
    X, _ = _sequence(seed, 40)
    batch = prototypes.segment(X)
    segmenter = OnlineSegmenter(prototypes, max_lag=len(X))  # exact: never forced
    online = _stream(segmenter, X, np.random.default_rng(seed))
    assert segmenter.forced_commits == 0 and segmenter.forced_frames == 0
    for field in ("cluster", "label"):  # frame by frame: agreed frames commit mid-segment
        assert np.array_equal(_frames(online, field), _frames(batch, field))
    assert online["start"][0] == 0 and online["end"][-1] == len(X)
    assert np.array_equal(online["start"][1:], online["end"][:-1])


def test_one_window_at_a_time_commits_every_frame_within_max_length(prototypes):
    X, y = _sequence(4, 40)
    segmenter = OnlineSegmenter(prototypes)  # max_lag = commit_lag = max_length = 14
    assert segmenter.max_lag == 14
    parts = []
    for u, x in enumerate(X):
        parts.append(segmenter.update(x)[0])
        assert segmenter.committed_end >= u - 14 + 1  # every frame older than 14 frames is final
    rows = np.concatenate(parts + [segmenter.flush()])
    assert rows["start"][0] == 0 and rows["end"][-1] == len(X)
    assert np.array_equal(rows["start"][1:], rows["end"][:-1])
    assert (rows["committed_at"] - rows["start"]).max() <= 14
    assert segmenter.forced_commits > 0
    # segments of 6-14 frames against a lag of 14: most frames are forced, and keep the batch
    # programme's cluster on most of this data
    online = np.repeat(rows["cluster"], rows["end"] - rows["start"])
    batch = prototypes.segment(X)
    assert np.mean(online == np.repeat(batch["cluster"], batch["end"] - batch["start"])) >= 0.8
    # the segments carry the distraction label of their cluster: mostly right on this easy data
    frame_label = np.repeat(rows["label"], rows["end"] - rows["start"])
    assert np.mean(frame_label == (y == 2)) >= 0.9


def test_forced_commits_keep_a_valid_segmentation(prototypes):
    X, _ = _sequence(5, 40, noise=1.5)
    segmenter = OnlineSegmenter(prototypes, max_lag=14)
    rows = _stream(segmenter, X, np.random.default_rng(0))
    assert segmenter.forced_commits > 0
    assert rows["start"][0] == 0 and rows["end"][-1] == len(X)
    assert np.array_equal(rows["start"][1:], rows["end"][:-1])
    assert np.all(rows["end"] - rows["start"] <= 14)


def test_long_runs_commit_by_agreement_within_twice_max_length(prototypes):
    """Runs of one class much longer than max_length: every chain soon gives their frames the same
    cluster, so a lag of 2 max_length forces few frames, and those committed by agreement keep the
    batch programme's cluster."""
    rng = np.random.default_rng(11)
    y = np.repeat(rng.permutation(np.tile([0, 1, 2], 4)), rng.integers(40, 70, size=12))
    X = MEANS[y] + 0.6 * rng.normal(size=(len(y), 3))
    segmenter = OnlineSegmenter(prototypes, max_lag=28)
    parts = []
    for u, x in enumerate(X):
        parts.append(segmenter.update(x)[0])
        assert segmenter.committed_end >= u - 28 + 1
    rows = np.concatenate(parts + [segmenter.flush()])
    assert segmenter.forced_frames <= 0.1 * len(X)
    online = np.repeat(rows["cluster"], rows["end"] - rows["start"])
    batch = prototypes.segment(X)
    assert np.mean(online == np.repeat(batch["cluster"], batch["end"] - batch["start"])) >= 0.95


def _owned_bytes(segmenter):
    """Bytes of the numpy arrays a segmenter owns (the shared prototypes excluded)."""
    return sum(v.nbytes for v in vars(segmenter).values() if isinstance(v, np.ndarray))


def test_stream_state_is_one_float32_cell_per_prototype_frame_and_length(prototypes):
    P, L = prototypes.X.shape[0], prototypes.max_length
    a, b = OnlineSegmenter(prototypes), OnlineSegmenter(prototypes)
    # DTAK cells P x L float32, plus kernel diagonal, cost, head and label of
    # horizon (4 max_length) + 3 max_length + 1 pending frames (8 B each, one more cost)
    assert a.horizon == 4 * L
    expected = P * L * 4 + (4 * L + 3 * L + 1) * 8 * 4 + 8
    assert _owned_bytes(a) == expected
    X, _ = _sequence(7, 40)
    _stream(a, X, np.random.default_rng(7))
    assert _owned_bytes(a) == expected  # nothing grows with the stream
    assert a.prototypes is b.prototypes
    owned = [v for v in vars(a).values() if isinstance(v, np.ndarray)]
    shared = [v for v in vars(prototypes).values() if isinstance(v, np.ndarray)]
    assert not any(np.shares_memory(x, y) for x in owned for y in shared + list(vars(b).values())
                   if isinstance(y, np.ndarray))


def test_stream_state_of_the_shipped_model():
    from distractd.daemon import default_model_path
    from distractd.models import load_model

    protos = SegmentPrototypes.from_artifact(*load_model(default_model_path()).extras["segmenter"])
    P, L = protos.X.shape[0], protos.max_length
    assert L == 20 and 0 < P <= 400  # 10 s prototype segments at 0.5 s hops, from <= 400 windows
    segmenter = OnlineSegmenter(protos)
    assert segmenter.horizon == 4 * L
    # P x L float32 cells + 4 x (horizon + 3 L + 1) pending-frame entries + 1: the former two
    # float64 planes, a kernel row and a buffer of the frames took 1,069,616 B for a 1591-frame model
    capacity = segmenter.horizon + 3 * L + 1
    assert _owned_bytes(segmenter) == P * L * 4 + 4 * capacity * 8 + 8 < 100_000


@pytest.mark.parametrize("seed", [1, 2])
def test_float32_programme_equals_the_float64_aca_step(prototypes, seed):
    """The online programme gives the segments of ACA's (golden-tested) float64 DP step."""
    from distractd.models.segmentation._aca_search import _dp_advance
    from distractd.models.segmentation._kernels import _kernel_diag
    from distractd.models.segmentation._segment_chain import _backtrack

    X, _ = _sequence(seed, 40, noise=1.0)
    n, P, L = len(X), prototypes.X.shape[0], prototypes.max_length
    obj = np.zeros(n + 1)
    head = np.empty(n, dtype=np.int64)
    lab = np.empty(n, dtype=np.int64)
    _dp_advance(prototypes.code, prototypes.sigma, X, np.ones(n),
                _kernel_diag(prototypes.code, prototypes.sigma, X), prototypes.XT, np.ones(P),
                prototypes.starts, prototypes.clusters, prototypes.lengths, prototypes.inv_count,
                prototypes.t3, 0.0, 0, prototypes.min_length, L, np.zeros((2, P, L)), np.empty(P),
                obj, head, lab, 0, n)
    starts, clusters = _backtrack(head, lab, 0, -1, n - 1)
    rows = prototypes.segment(X)
    assert np.array_equal(rows["start"], starts[:-1])
    assert np.array_equal(rows["cluster"], clusters)


def test_stream_segmenter_times_do_not_depend_on_batch_size(prototypes):
    """The daemon's wrapper publishes the same segment times for one long batch as the segmenter."""
    from distractd.daemon import StreamSegmenter

    X, _ = _sequence(8, 40)
    t_end = 10.0 + 0.5 * np.arange(len(X))
    wrapper = StreamSegmenter(prototypes, lambda rows: rows)
    published = wrapper.update(X, t_end) + wrapper.flush()
    online = OnlineSegmenter(prototypes)
    rows = np.concatenate([online.update(X[lo:lo + 14])[0] for lo in range(0, len(X), 14)]
                          + [online.flush()])
    assert len(X) > len(wrapper._t_end) and len(published) == len(rows)
    assert [s["start"] for s in published] == t_end[rows["start"]].tolist()
    assert [s["end"] for s in published] == t_end[rows["end"] - 1].tolist()


def test_artifact_round_trip(prototypes):
    params, arrays = prototypes.to_artifact()
    again = SegmentPrototypes.from_artifact(params, {k: v.copy() for k, v in arrays.items()})
    X, _ = _sequence(6, 10)
    assert np.array_equal(again.segment(X), prototypes.segment(X))
    assert params["max_length"] == 14 and arrays["cluster_labels"].dtype == np.int8
    with pytest.raises(ModelError, match="format"):
        SegmentPrototypes.from_artifact({**params, "format": "x"}, arrays)
    with pytest.raises(ModelError, match="missing arrays"):
        SegmentPrototypes.from_artifact(params, {"X": arrays["X"]})


def test_bad_inputs_name_the_problem(prototypes):
    with pytest.raises(ModelError, match="3 features, got 2"):
        OnlineSegmenter(prototypes).update(np.zeros((2, 2)))
    with pytest.raises(ConfigError, match="OnlineSegmenter.max_lag"):
        OnlineSegmenter(prototypes, max_lag=-1)
    with pytest.raises(ModelError, match="clusters must cover"):
        SegmentPrototypes(np.zeros((4, 1)), [0, 2, 4], [0, 2], [0, 1, 1])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 4-minute simulated drive and a model artifact trained on it, with segment prototypes."""
    from distractd.models import ELMClassifier, save_model
    from distractd.models.segmentation import fit_segment_prototypes
    from distractd.models.segmentation import standardize_windows
    from distractd.pipeline import FEATURE_NAMES, PipelineConfig, extract_features, write_recording
    from distractd.simulators import simulate_drive

    tmp = tmp_path_factory.mktemp("segment_cli")
    recording = simulate_drive(3, duration_s=240.0)
    windows = extract_features(recording)
    Z, mean, scale = standardize_windows(windows.X)
    protos = fit_segment_prototypes(Z, windows.label, max_segments=20, random_state=0)
    elm = ELMClassifier(n_hidden=20, random_state=0).fit(Z, windows.label)
    model = tmp / "model.npz"
    save_model(model, elm, normalizer_mean=mean, normalizer_scale=scale,
               feature_names=FEATURE_NAMES, pipeline_config=PipelineConfig().to_dict(),
               extras={"segmenter": protos.to_artifact()})
    write_recording(recording, tmp / "drive.rec")
    return tmp, windows, Z, protos


def test_trained_prototypes_carry_majority_labels(trained):
    _, windows, Z, protos = trained
    assert protos.n_segments <= 20 and set(protos.cluster_labels.tolist()) <= {0, 1}
    rows = protos.segment(Z)
    frame_label = np.repeat(rows["label"], rows["end"] - rows["start"])
    # the stored labels beat always answering the majority class on the training drive itself
    majority = max(np.mean(windows.label == 1), np.mean(windows.label == 0))
    assert np.mean(frame_label == windows.label) >= majority


def test_segment_cli_uses_the_model_prototypes(trained, capsys):
    from distractd.cli import main
    from distractd.models import load_model

    tmp, windows, Z, protos = trained
    out = tmp / "segments.csv"
    assert main(["segment", str(tmp / "drive.rec"), "--model", str(tmp / "model.npz"),
                 "--out", str(out)]) == 0
    table = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    stored = SegmentPrototypes.from_artifact(*load_model(tmp / "model.npz").extras["segmenter"])
    expected = stored.segment(Z)
    assert np.array_equal(table[:, 2], expected["cluster"])
    assert np.array_equal(table[:, 3], expected["label"])
    t = np.append(windows.t_end, windows.t_end[-1] + 0.5)
    np.testing.assert_allclose(table[:, 0], t[expected["start"]], atol=5e-4)
    assert "with the model's cluster labels" in capsys.readouterr().out


def test_segment_cli_without_prototypes_fails_cleanly(trained, capsys):
    from distractd.cli import main
    from distractd.models import ELMClassifier, save_model
    from distractd.pipeline import FEATURE_NAMES, PipelineConfig

    tmp, windows, Z, _ = trained
    bare = tmp / "bare.npz"
    save_model(bare, ELMClassifier(n_hidden=5, random_state=0).fit(Z, windows.label),
               normalizer_mean=np.zeros(len(FEATURE_NAMES)),
               normalizer_scale=np.ones(len(FEATURE_NAMES)), feature_names=FEATURE_NAMES, pipeline_config=PipelineConfig().to_dict())
    assert main(["segment", str(tmp / "drive.rec"), "--model", str(bare),
                 "--out", str(tmp / "x.csv")]) == 1
    assert "no segmenter prototypes" in capsys.readouterr().err
