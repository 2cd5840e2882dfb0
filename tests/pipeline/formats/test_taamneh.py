"""The Taamneh et al. 2017 reader on the real files in ../shared/data/taamneh and on bad files."""

import numpy as np
import pytest

from distractd import RecordingError
from distractd.pipeline.formats import DEG_PER_PX, FIELD_INDEX, is_taamneh, read_taamneh


@pytest.fixture(scope="module")
def subject(shared_data):
    path = shared_data / "taamneh" / "T011.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


def test_one_recording_per_driving_session_with_task_labels(subject):
    assert is_taamneh(subject) and not is_taamneh(subject.parent / "README.md")
    recordings = read_taamneh(subject)
    assert [r.meta["drive"] for r in recordings] == [2, 3, 4, 5, 6, 7, 8]
    by_drive = {r.meta["drive"]: r for r in recordings}
    texting = by_drive[7]
    assert texting.meta["protocol"] == "texting"
    assert texting.meta["driver_id"] == "T011" and texting.meta["recording_id"] == "T011-d7"
    assert np.all(np.diff(texting.t) == 1.0)  # 1 Hz, one drive's clock
    assert (texting.labels == 1).sum() == 315  # Stimulus 4 seconds of subject 11
    assert (by_drive[4].labels == 0).all()     # the normal drive has no task
    assert (by_drive[5].labels == 1).sum() == 322  # analytical + math questions


def test_track_loss_and_absent_signals(subject):
    texting = {r.meta["drive"]: r for r in read_taamneh(subject)}[7]
    lost = texting.column("confidence") == 0
    assert np.isnan(texting.column("gaze_r_yaw")[lost]).all()
    assert np.isfinite(texting.column("gaze_r_yaw")[~lost]).all()
    # texting loses the gaze more often than the same drive's task-free seconds (README finding)
    assert lost[texting.labels == 1].mean() > lost[texting.labels == 0].mean()
    for field in ("head_x", "head_yaw", "eyelid_r", "blink", "saccade"):
        assert np.isnan(texting.samples[:, FIELD_INDEX[field]]).all()


def test_gaze_scale_is_the_documented_assumption(tmp_path):
    path = tmp_path / "T999.csv"
    path.write_text('"Time","Drive","Stimulus","Gaze.X.Pos","Gaze.Y.Pos","Rt.Pupil.Diameter"\n'
                    "1,7,0,790,750,0.005\n2,7,4,890,700,0\n3,7,4,0,0,NA\n")
    (recording,) = read_taamneh(path)
    yaw = np.degrees(recording.column("gaze_r_yaw"))
    pitch = np.degrees(recording.column("gaze_l_pitch"))
    np.testing.assert_allclose(yaw[:2], [0.0, 100 * DEG_PER_PX])
    np.testing.assert_allclose(pitch[:2], [0.0, 50 * DEG_PER_PX])  # up on the screen is up
    assert np.isnan(yaw[2]) and recording.column("confidence").tolist() == [1.0, 1.0, 0.0]
    assert recording.column("pupil_r")[0] == pytest.approx(5.0)
    assert np.isnan(recording.column("pupil_r")[1:]).all()
    assert recording.labels.tolist() == [0, 1, 1]


@pytest.mark.parametrize("text, message", [
    ('"Time","Drive"\n1,7\n', "missing column(s) ['Stimulus', 'Gaze.X.Pos', 'Gaze.Y.Pos']"),
    ('"Time","Drive","Stimulus","Gaze.X.Pos","Gaze.Y.Pos"\n1,7,0,abc,3\n',
     ":2: column 'Gaze.X.Pos' must be a number or NA, got 'abc'"),
    ('"Time","Drive","Stimulus","Gaze.X.Pos","Gaze.Y.Pos"\n1,7,0\n', ":2: expected 5 cells, got 3"),
    ("", "empty file"),
])
def test_bad_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(RecordingError) as info:
        read_taamneh(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_read_recordings_of_files_and_folders(tmp_path, subject):
    from distractd import RecordingError
    from distractd.pipeline.formats import Recording, empty_block, read_recordings, write_recording

    block = empty_block(3)
    block[:, 0] = [0.0, 0.5, 1.0]
    write_recording(Recording(block), tmp_path / "plain.npz")
    (plain,) = read_recordings(tmp_path / "plain.npz")
    assert plain.meta["recording_id"] == plain.meta["driver_id"] == "plain"
    assert [r.meta["recording_id"] for r in read_recordings(subject)][:2] == ["T011-d2", "T011-d3"]
    assert len(read_recordings(tmp_path)) == 1
    with pytest.raises(RecordingError, match="no such file or folder"):
        read_recordings(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordingError, match="no recording"):
        read_recordings(tmp_path / "empty")
