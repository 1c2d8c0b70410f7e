"""Voice-activity models: a probability of speech for each 32 ms chunk of 16 kHz sound (:mod:`video.speech`).

- :class:`SileroVad`: Silero VAD (``silero_vad_16k_op15.onnx`` from the PyPI wheel ``silero-vad==6.2.3``, MIT,
  fetched by ``proctor fetch-models`` with pinned hashes), run by onnxruntime on one thread: 0.2 ms a chunk here, about
  0.6 % of a core per stream.  OpenCV's DNN cannot read it (its STFT's Reshape and its If nodes).
- :class:`WebRtcVad`: the WebRTC project's Gaussian-mixture VAD (PyPI ``webrtcvad-wheels``, MIT), a yes or no per
  10-30 ms frame; kept for the benchmark's comparison (``benchmarks/audio.py``), where Silero did better.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from video.errors import ModelUnavailableError
from video.models import SILERO_VAD, model_path
from video.speech import CHUNK, SAMPLE_RATE, Samples

CONTEXT = 64
"""Silero VAD looks at the last 64 samples of the previous chunk too."""


class VoiceActivity(Protocol):
    name: str

    def probability(self, chunk: Samples) -> float:
        """The probability that this chunk (:data:`video.speech.CHUNK` samples, in time order after the previous
        one) is speech."""
        ...

    def reset(self) -> None: ...


class SileroVad:
    name = "silero-vad"

    def __init__(self, path: Path) -> None:
        import onnxruntime  # noqa: PLC0415 (only where the model is used)

        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        options.log_severity_level = 3  # the model's unused initialisers are not worth a warning each start
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.rate = np.array(SAMPLE_RATE, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        self.state: NDArray[Any] = np.zeros((2, 1, 128), dtype=np.float32)
        self.context: NDArray[Any] = np.zeros((1, CONTEXT), dtype=np.float32)

    def probability(self, chunk: Samples) -> float:
        window = np.concatenate([self.context, chunk.reshape(1, CHUNK).astype(np.float32)], axis=1)
        output, self.state = self.session.run(None, {"input": window, "state": self.state, "sr": self.rate})
        self.context = window[:, -CONTEXT:]
        return float(np.asarray(output).ravel()[0])


class WebRtcVad:
    """The share of a chunk's 10 ms frames that the WebRTC VAD calls speech, as its probability."""

    name = "webrtcvad"

    def __init__(self, aggressiveness: int = 2) -> None:
        import webrtcvad  # noqa: PLC0415

        self.vad = webrtcvad.Vad(aggressiveness)
        self.name = f"webrtcvad-{aggressiveness}"
        self.pending: NDArray[Any] = np.zeros(0, dtype=np.int16)

    def reset(self) -> None:
        self.pending = np.zeros(0, dtype=np.int16)

    def probability(self, chunk: Samples) -> float:
        pcm = np.concatenate([self.pending, (np.clip(chunk, -1, 1) * 32767).astype(np.int16)])
        frame = SAMPLE_RATE // 100
        whole = len(pcm) // frame * frame
        votes = [self.vad.is_speech(pcm[i : i + frame].tobytes(), SAMPLE_RATE) for i in range(0, whole, frame)]
        self.pending = pcm[whole:]
        return sum(votes) / len(votes) if votes else 0.0


def available_vad(models_dir: Path) -> tuple[VoiceActivity | None, str]:
    """Silero VAD if its model is there and onnxruntime runs it, with a note saying which; else None and why."""
    try:
        return SileroVad(model_path(models_dir, SILERO_VAD)), "voice activity: Silero VAD (onnxruntime)"
    except ModelUnavailableError as error:
        return None, f"voice activity: none ({error}); the microphone is checked for silence and loss only"
    except Exception as error:  # onnxruntime missing or unable to load the file
        return None, f"voice activity: none ({type(error).__name__}: {error})"
