"""The microphone check's sound set: speech, and the room's other sounds, made from Debian packages or synthesised
here with a seed, all at 48 kHz mono (what a browser's Opus carries).

What is in it, where it comes from, and its licence:
- speech in Mandarin and English (voices ``cmn``, ``en-us``, ``en-gb``; variants m1-m3, f1, f2, f4, whisper; pitch
  20-95, from a man's to a child's): Debian ``espeak-ng`` 1.51, synthesised at run time (the program is GPL-3+, its
  output is not covered);
- recorded English speech (a human voice, 8 kHz telephone prompts): Debian ``asterisk-core-sounds-en-wav`` 1.6.1
  (``/usr/share/asterisk/sounds/en``; optional), CC-BY-SA-3.0, recorded by Allison Smith;
- the computer's notification sounds (bell, message, camera shutter, …; not the spoken ``audio-channel-*`` files):
  Debian ``sound-theme-freedesktop`` 0.8 (``/usr/share/sounds/freedesktop/stereo``; optional), CC-BY-SA-3.0,
  CC-BY-3.0 or GPL-2+ per file (its copyright file);
- keyboard, mouse clicks and the scroll wheel, chair creaks and rolling, room tone (pink noise, mains hum, a fan), the
  board's stone clicks: synthesised here (numpy, seeded), this project's (MIT).

None of it leaves the machine: the benchmark and the tests make what they need.
"""

from __future__ import annotations

import subprocess
import tempfile
import wave
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
from numpy.typing import NDArray

RATE = 48_000
Sound = NDArray[np.float32]
Maker = Callable[[np.random.Generator, float], Sound]

FREEDESKTOP = Path("/usr/share/sounds/freedesktop/stereo")
NOTIFICATIONS = ("bell", "complete", "message", "message-new-instant", "dialog-information", "dialog-warning",
                 "dialog-error", "device-added", "device-removed", "camera-shutter", "screen-capture", "trash-empty",
                 "audio-volume-change", "power-plug", "power-unplug", "network-connectivity-established",
                 "suspend-error", "service-login", "service-logout", "phone-incoming-call")  # fmt: skip
ASTERISK = Path("/usr/share/asterisk/sounds/en")


def db(level: float) -> float:
    return float(10 ** (level / 20))


def rms(sound: Sound) -> float:
    return float(np.sqrt(np.mean(np.square(sound, dtype=np.float64)))) if sound.size else 0.0


def at_level(sound: Sound, dbfs: float) -> Sound:
    """Scaled so that its voiced part (the samples above a tenth of the peak's envelope) has this RMS level."""
    loud = np.abs(sound) > 0.1 * float(np.abs(sound).max() or 1)
    level = rms(sound[loud]) if loud.any() else rms(sound)
    return (sound * (db(dbfs) / level)).astype(np.float32) if level > 0 else sound


def decode(path: Path) -> Sound:
    """Any file PyAV reads, as mono float at 48 kHz."""
    with av.open(str(path)) as container:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
        pieces = [f.to_ndarray().reshape(-1) for frame in container.decode(audio=0) for f in resampler.resample(frame)]
        pieces += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(pieces).astype(np.float32)


def espeak(text: str, voice: str, pitch: int = 50, speed: int = 160) -> Sound:
    """Speech from Debian's espeak-ng, at 48 kHz."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(out), text],
                       check=True, capture_output=True)  # fmt: skip
        return decode(out)


def wav_file(sound: Sound, path: Path, rate: int = RATE) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(sound, -1, 1) * 32767).astype("<i2").tobytes())


def _filtered(rng: np.random.Generator, n: int, low: float, high: float) -> Sound:
    """White noise band-limited to low..high Hz (by FFT)."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    spectrum[(freqs < low) | (freqs > high)] = 0
    out = np.fft.irfft(spectrum, n)
    return (out / (np.abs(out).max() or 1)).astype(np.float32)


def _ring(n: int, freq: float, decay_s: float) -> Sound:
    t = np.arange(n) / RATE
    return np.asarray(np.sin(2 * np.pi * freq * t) * np.exp(-t / decay_s), dtype=np.float32)


def _place(out: Sound, sound: Sound, at: int) -> None:
    end = min(len(out), at + len(sound))
    if at < end:
        out[at:end] += sound[: end - at]


def room_tone(rng: np.random.Generator, seconds: float) -> Sound:
    """A quiet room: pink noise at -62 to -50 dBFS, mains hum (50 Hz and its harmonics), sometimes a fan."""
    n = int(seconds * RATE)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    spectrum[1:] /= np.sqrt(freqs[1:])
    spectrum[0] = 0
    pink = np.fft.irfft(spectrum, n).astype(np.float32)
    out = pink * (db(rng.uniform(-62, -50)) / (rms(pink) or 1))
    t = np.arange(n) / RATE
    hum = np.sum([np.sin(2 * np.pi * 50 * k * t + rng.uniform(0, 6.3)) / k for k in (1, 2, 3)], axis=0)
    out += np.asarray(hum * db(rng.uniform(-70, -58)), dtype=np.float32)
    if rng.random() < 0.4:
        fan = _filtered(rng, n, 80, 2500)
        out += fan * (db(rng.uniform(-55, -45)) / (rms(fan) or 1))
    return out.astype(np.float32)


def keystroke(rng: np.random.Generator) -> Sound:
    """One key: the press's click, the bottoming-out thock, and the release's click 60-140 ms later."""
    n = int(0.2 * RATE)
    key = np.zeros(n, dtype=np.float32)
    click_n = int(0.006 * RATE)
    click = _filtered(rng, click_n, 1500, 9000) * np.exp(-np.arange(click_n) / (0.0012 * RATE)).astype(np.float32)
    thock = _ring(int(0.05 * RATE), rng.uniform(150, 450), rng.uniform(0.006, 0.02))
    _place(key, click, 0)
    _place(key, 0.6 * thock, int(0.002 * RATE))
    _place(key, rng.uniform(0.3, 0.7) * click, int(rng.uniform(0.06, 0.14) * RATE))
    return key * db(rng.uniform(-26, -12))


def keyboard(rng: np.random.Generator, seconds: float) -> Sound:
    """Typing in bursts (chat, notes, a search: 5-60 keys at 3-10 keys a second) with pauses of 1-15 s."""
    n = int(seconds * RATE)
    out = np.zeros(n, dtype=np.float32)
    at = rng.uniform(0, 2)
    while at < seconds:
        for _ in range(int(rng.integers(5, 60))):
            _place(out, keystroke(rng), int(at * RATE))
            at += rng.uniform(0.08, 0.35) + (rng.uniform(0.3, 1.0) if rng.random() < 0.08 else 0)
        at += rng.uniform(1, 15)
    return out


def mouse(rng: np.random.Generator, seconds: float) -> Sound:
    """Clicks (press and release 60-120 ms apart, now and then double) and the scroll wheel's ticks."""
    n = int(seconds * RATE)
    out = np.zeros(n, dtype=np.float32)
    at = rng.uniform(0, 3)
    while at < seconds:
        level = db(rng.uniform(-30, -16))
        for _ in range(2 if rng.random() < 0.2 else 1):
            for offset in (0.0, rng.uniform(0.06, 0.12)):
                tick = _filtered(rng, int(0.003 * RATE), 2000, 12000) * np.exp(-np.arange(int(0.003 * RATE)) / 40)
                _place(out, (tick + 0.4 * _ring(int(0.01 * RATE), rng.uniform(2500, 5000), 0.002)[: len(tick)])
                       * level, int((at + offset) * RATE))  # fmt: skip
            at += rng.uniform(0.15, 0.3)
        if rng.random() < 0.3:  # the scroll wheel: 20-40 ticks a second for 0.3-1.2 s
            rate, length = rng.uniform(20, 40), rng.uniform(0.3, 1.2)
            for k in range(int(rate * length)):
                _place(out, _ring(int(0.004 * RATE), 3500, 0.0008) * level * 0.3, int((at + k / rate) * RATE))
        at += rng.uniform(1, 10)
    return out


def creak(rng: np.random.Generator) -> Sound:
    """A chair's creak: stick-slip pulses at 30-160 a second through the wood's resonances, 0.2-1.2 s."""
    length = rng.uniform(0.2, 1.2)
    n = int(length * RATE)
    pulses = np.zeros(n, dtype=np.float32)
    at, rate = 0.0, rng.uniform(30, 160)
    while int(at * RATE) < n:
        pulses[int(at * RATE)] = rng.uniform(0.5, 1.0)
        at += 1 / (rate * rng.uniform(0.8, 1.25))
        rate = min(160.0, max(30.0, rate * rng.uniform(0.98, 1.03)))  # unbounded, it can grow until ``at`` stalls
    body = sum(np.convolve(pulses, _ring(int(0.02 * RATE), rng.uniform(300, 2500), 0.003), "same") for _ in range(3))
    envelope = np.sin(np.pi * np.arange(n) / n) ** 0.5
    sound = (body * envelope).astype(np.float32)
    return np.asarray(sound / (np.abs(sound).max() or 1) * db(rng.uniform(-34, -18)), dtype=np.float32)


def chair(rng: np.random.Generator, seconds: float) -> Sound:
    """Creaks (every 5-40 s, sometimes a few in a row) and the chair rolling (a low rumble, 1-3 s)."""
    n = int(seconds * RATE)
    out = np.zeros(n, dtype=np.float32)
    at = rng.uniform(0, 5)
    while at < seconds:
        if rng.random() < 0.75:
            for _ in range(int(rng.integers(1, 4))):
                sound = creak(rng)
                _place(out, sound, int(at * RATE))
                at += len(sound) / RATE + rng.uniform(0.1, 0.6)
        else:
            length = rng.uniform(1, 3)
            rumble = _filtered(rng, int(length * RATE), 20, 300)
            rumble *= np.sin(np.pi * np.arange(len(rumble)) / len(rumble)).astype(np.float32)
            _place(out, rumble * db(rng.uniform(-36, -24)), int(at * RATE))
        at += rng.uniform(5, 40)
    return out


def stones(rng: np.random.Generator, seconds: float) -> Sound:
    """The platform's stone sound from the speakers (a wooden click) at each move, every 3-40 s."""
    n = int(seconds * RATE)
    out = np.zeros(n, dtype=np.float32)
    at = rng.uniform(0, 5)
    while at < seconds:
        click = _ring(int(0.08 * RATE), rng.uniform(900, 2200), 0.012) + 0.5 * _ring(int(0.08 * RATE), 3100, 0.004)
        _place(out, click.astype(np.float32) * db(rng.uniform(-32, -18)), int(at * RATE))
        at += rng.uniform(3, 40)
    return out


_NOTIFICATION_CACHE: dict[str, Sound] = {}


def notifications(rng: np.random.Generator, seconds: float) -> Sound:
    """The computer's notification sounds (sound-theme-freedesktop), every 30-300 s; silence without the package."""
    n = int(seconds * RATE)
    out = np.zeros(n, dtype=np.float32)
    names = [name for name in NOTIFICATIONS if (FREEDESKTOP / f"{name}.oga").is_file()]
    if not names:
        return out
    at = rng.uniform(0, 30)
    while at < seconds:
        name = str(rng.choice(names))
        if name not in _NOTIFICATION_CACHE:
            _NOTIFICATION_CACHE[name] = decode(FREEDESKTOP / f"{name}.oga")
        _place(out, at_level(_NOTIFICATION_CACHE[name], rng.uniform(-36, -22)), int(at * RATE))
        at += rng.uniform(30, 300)
    return out


BACKGROUNDS: dict[str, tuple[Maker, ...]] = {
    "quiet room": (room_tone,),
    "keyboard": (room_tone, keyboard),
    "mouse": (room_tone, mouse),
    "chair": (room_tone, chair),
    "everything": (room_tone, keyboard, mouse, chair, stones, notifications),
}


def background(kind: str, rng: np.random.Generator, seconds: float) -> Sound:
    return np.asarray(np.sum([make(rng, seconds) for make in BACKGROUNDS[kind]], axis=0), dtype=np.float32)


def room_response(rng: np.random.Generator, rt60: float) -> Sound:
    """A small room's impulse response: the direct sound, then exponentially decaying reflections."""
    n = int(rt60 * RATE)
    tail = rng.standard_normal(n).astype(np.float32) * np.exp(-6.9 * np.arange(n) / n).astype(np.float32)
    tail[: int(0.003 * RATE)] = 0
    response = np.asarray(tail * 0.25 / np.sqrt(np.sum(tail**2) or 1), dtype=np.float32)
    response[0] = 1.0
    return response


def in_room(rng: np.random.Generator, speech: Sound, rt60: float) -> Sound:
    wet = np.convolve(speech, room_response(rng, rt60))[: len(speech) + int(rt60 * RATE)]
    return wet.astype(np.float32)


MANDARIN = ("下这里", "黑棋走十一路", "快堵住他的四", "这步不好，走右边", "对方要做三三了", "你先冲四再说",
            "别急，慢慢想", "左上角那个点", "白棋必须防守", "再想一想")  # fmt: skip
ENGLISH = ("play there", "block his four", "take the corner on the left", "h eight, then j ten",
           "that move loses, go right", "he is making a double three", "wait, think first", "move up one",
           "you need to defend now", "try the diagonal")  # fmt: skip


def speech_sample(rng: np.random.Generator) -> tuple[str, Sound]:
    """One utterance of advice: a voice, a language, a pitch (20-95: a man to a child) and a speed, drawn at random."""
    language = str(rng.choice(["cmn", "en-us", "en-gb"]))
    variant = str(rng.choice(["", "+m1", "+m3", "+f2", "+f4", "+f1", "+m2"]))
    pitch, speed = int(rng.integers(20, 96)), int(rng.integers(130, 190))
    text = str(rng.choice(MANDARIN if language == "cmn" else ENGLISH))
    return f"{language}{variant} p{pitch} s{speed}", espeak(text, language + variant, pitch, speed)


def recorded_speech(rng: np.random.Generator) -> tuple[str, Sound] | None:
    """A recorded human utterance (asterisk-core-sounds-en-wav), or None without the package."""
    if not ASTERISK.is_dir():
        return None
    files = sorted(p for p in ASTERISK.glob("*.wav") if p.stat().st_size > 12_000)
    path = files[int(rng.integers(len(files)))]
    return f"recorded {path.stem}", decode(path)


def opus_round_trip(sound: Sound, bitrate: int = 32_000) -> Sound:
    """Through Opus at 48 kHz in 20 ms frames, as a browser sends it and aiortc decodes it."""
    encoder = av.CodecContext.create("libopus", "w")
    encoder.sample_rate, encoder.layout, encoder.format = RATE, "mono", "s16"
    encoder.bit_rate = bitrate
    decoder = av.CodecContext.create("opus", "r")
    decoder.sample_rate, decoder.layout = RATE, "mono"
    pcm = (np.clip(sound, -1, 1) * 32767).astype(np.int16)
    out = []
    step = RATE // 50
    for index, start in enumerate(range(0, len(pcm) - step + 1, step)):
        frame = av.AudioFrame.from_ndarray(pcm[start : start + step].reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = RATE, index * step
        for packet in encoder.encode(frame):
            for decoded in decoder.decode(packet):
                samples = decoded.to_ndarray().reshape(-1)
                out.append(samples.astype(np.float32) / (32768 if samples.dtype == np.int16 else 1))
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, dtype=np.float32)
