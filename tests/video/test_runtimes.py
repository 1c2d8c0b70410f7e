"""The models' runtimes (video.runtimes): onnxruntime with the input's size freed, LiteRT with one interpreter per
thread, and a clear error for a file they cannot read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from video.errors import ModelUnavailableError
from video.models import CENTERFACE, SELFIE_SEGMENTATION, ModelSource, model_path
from video.runtimes import OnnxNet, TfliteNet

MODELS_DIR = Path(os.environ.get("PROCTOR_MODELS_DIR", "models"))


def model(source: ModelSource) -> Path:
    try:
        return model_path(MODELS_DIR, source)
    except ModelUnavailableError as error:
        if os.environ.get("CI"):
            raise  # CI fetches the models (scripts/test): a missing model there is a failure
        pytest.skip(f"{error}")


def test_a_freed_onnx_model_takes_any_picture_size_and_the_file_as_it_is_does_not() -> None:
    path = model(CENTERFACE)
    net = OnnxNet(path, free_size=True)
    for height, width in ((192, 256), (480, 640)):
        heat, *_ = net.run(np.zeros((1, 3, height, width), np.float32), ["537", "538", "539", "540"])
        assert heat.shape == (1, 1, height // 4, width // 4)
    fixed = OnnxNet(path)  # as the file says: 10x3x32x32 only
    with pytest.raises(Exception, match="dimensions"):
        fixed.run(np.zeros((1, 3, 192, 256), np.float32))


def test_each_thread_runs_its_own_tflite_interpreter_with_the_same_answer() -> None:
    net = TfliteNet(model(SELFIE_SEGMENTATION))
    assert net.shape == (1, 144, 256, 3)
    picture = np.random.default_rng(3).random(net.shape, dtype=np.float32)
    answers: dict[str, np.typing.NDArray[np.float32]] = {}

    def run(name: str) -> None:
        (answers[name],) = net.run(picture).values()

    threads = [threading.Thread(target=run, args=(str(n),)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run("main")
    assert all(np.array_equal(answers["main"], answer) for answer in answers.values())
    assert answers["main"].shape == (1, 144, 256, 1)


@pytest.mark.parametrize("kind", [OnnxNet, TfliteNet])
def test_a_file_the_runtime_cannot_read_is_a_clear_error(tmp_path: Path, kind: type) -> None:
    damaged = tmp_path / "model.bin"
    damaged.write_bytes(b"not a model at all" * 50)
    with pytest.raises(ModelUnavailableError, match=r"cannot load model\.bin"):
        kind(damaged)
