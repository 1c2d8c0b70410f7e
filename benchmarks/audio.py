"""The microphone check's evaluation (issue 15): speech recall within 3 s over mixed room sounds, and false alarms
per player-hour over keyboard, mouse, chair and room noise, for each voice-activity model.

Run by hand (needs Debian's espeak-ng; asterisk-core-sounds-en-wav and sound-theme-freedesktop add recorded speech
and notification sounds when installed; the models from ``proctor fetch-models``):

    nice -n 10 .venv/bin/python benchmarks/audio.py [--seed 2] [--hours 3] [--utterances 240]

Every sound goes through Opus (32 kbit/s, 48 kHz, as a browser sends it) and the service's resampler to 16 kHz, then
through :class:`video.speech.VoiceMonitor` with no mouth in view: every stretch of speech it finds is a voice
finding, so the figures are those of the sound alone (a player whose mouth is seen moving is never flagged; one whose
mouth is still is flagged exactly as here).  The sounds are described, with their licences, in benchmarks/sounds.py.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import sounds
from video.audio import to_16k
from video.models import SILERO_VAD, model_path
from video.speech import CHUNK, SAMPLE_RATE, SoundCheck, SpeechSettings, VoiceMonitor, level_dbfs
from video.vad import SileroVad, VoiceActivity, WebRtcVad

CLIP_S = 8.0
WITHIN_S = 3.0
LEVELS = (-42.0, -36.0, -30.0, -24.0)
"""The speech's level (RMS of its voiced part, dBFS): a soft voice across the room to a normal one at the desk."""


def poisson_upper(count: int, confidence: float = 0.95) -> float:
    """The one-sided upper bound of a Poisson mean, having seen ``count`` events (by bisection on its CDF)."""
    low, high = float(count), float(count) + 50.0
    for _ in range(100):
        mid = (low + high) / 2
        cdf = sum(math.exp(-mid + k * math.log(mid) - math.lgamma(k + 1)) for k in range(count + 1)) if mid else 1.0
        low, high = (mid, high) if cdf > 1 - confidence else (low, mid)
    return high


@dataclass(frozen=True, slots=True)
class Heard:
    raised: list[float]
    """When each voice finding was raised (the end of the chunk that raised it)."""
    started: list[float]
    seconds: float


def listen(vad: VoiceActivity, samples: NDArray[np.float32], settings: SpeechSettings, offset: float = 0.0,
           monitor: VoiceMonitor | None = None) -> tuple[Heard, VoiceMonitor]:  # fmt: skip
    monitor = monitor or VoiceMonitor(settings)
    raised, started = [], []
    started_at = time.perf_counter()
    for index in range(len(samples) // CHUNK):
        chunk = samples[index * CHUNK : (index + 1) * CHUNK]
        at = offset + (index + 1) * CHUNK / SAMPLE_RATE
        for finding in monitor.hear(at, vad.probability(chunk), level_dbfs(chunk)):
            if finding.check is SoundCheck.VOICE and finding.ended is None:
                raised.append(at)
                started.append(finding.started)
    return Heard(raised, started, time.perf_counter() - started_at), monitor


Positive = tuple[dict[str, str], NDArray[np.float32], float]
"""(its labels, the sound as the service hears it, when the speech starts)"""


def make_positive(rng: np.random.Generator, index: int, whisper: bool) -> Positive:
    kinds = list(sounds.BACKGROUNDS)
    kind = kinds[index % len(kinds)]
    recorded = sounds.recorded_speech(rng) if (not whisper and rng.random() < 0.25) else None
    if recorded is not None:
        name, speech = recorded
        language = "en (recorded)"
    else:
        name, speech = sounds.speech_sample(rng)
        if whisper:
            voice = name.split()[0].split("+")[0]
            text = str(rng.choice(sounds.MANDARIN if voice == "cmn" else sounds.ENGLISH))
            speech, name = sounds.espeak(text, voice + "+whisper", 50, 150), f"{voice}+whisper"
        language = "zh" if name.startswith("cmn") else "en"
    level = float(LEVELS[int(rng.integers(len(LEVELS)))])
    speech = sounds.at_level(sounds.in_room(rng, speech, float(rng.uniform(0.2, 0.6))), level)
    mix = sounds.background(kind, rng, CLIP_S)
    onset = float(rng.uniform(2.0, 3.0))
    sounds._place(mix, speech, int(onset * sounds.RATE))
    decoded = to_16k(sounds.opus_round_trip(mix), sounds.RATE)
    return {"background": kind, "language": language, "level": f"{level:.0f} dBFS", "voice": name}, decoded, onset


def negatives(state: Mapping[str, Any], minutes: int) -> Iterator[NDArray[np.float32]]:
    """The minutes without speech, made one at a time (12 hours of them would not fit in memory) from the random
    generator's ``state``, so that every model hears the same minutes."""
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    kinds = list(sounds.BACKGROUNDS)
    for index in range(minutes):
        kind = "everything" if index % 2 == 0 else kinds[(index // 2) % len(kinds)]
        yield to_16k(sounds.opus_round_trip(sounds.background(kind, rng, 60.0)), sounds.RATE)


def evaluate(vad: VoiceActivity, settings: SpeechSettings, positives: list[Positive], whispers: list[Positive],
             quiet: Iterable[NDArray[np.float32]]) -> None:  # fmt: skip
    """Print one model's recall, latency, false alarms and CPU."""
    found, latencies, early = 0, [], 0
    by: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    cpu, audio_s = 0.0, 0.0
    for labels, samples, onset in positives:
        vad.reset()
        heard, _ = listen(vad, samples, settings)
        cpu, audio_s = cpu + heard.seconds, audio_s + len(samples) / SAMPLE_RATE
        early += sum(1 for at in heard.raised if at < onset - 0.5)
        hit = [at for at in heard.raised if onset - 0.5 <= at <= onset + WITHIN_S]
        if hit:
            found += 1
            latencies.append(hit[0] - onset)
        for key, value in labels.items():
            if key != "voice":
                by[key][value][0] += bool(hit)
                by[key][value][1] += 1
    whispered = 0
    for _, samples, onset in whispers:
        vad.reset()
        heard, _ = listen(vad, samples, settings)
        whispered += any(onset - 0.5 <= at <= onset + WITHIN_S for at in heard.raised)
    alarms, hours = 0, 0.0
    vad.reset()
    monitor = None
    for index, samples in enumerate(quiet):  # one long session: the monitor and the model go on from minute to minute
        heard, monitor = listen(vad, samples, settings, index * 60.0, monitor)
        alarms += len(heard.raised)
        hours += len(samples) / SAMPLE_RATE / 3600
        cpu, audio_s = cpu + heard.seconds, audio_s + len(samples) / SAMPLE_RATE
    lat = np.array(latencies) if latencies else np.array([float("nan")])
    print(f"\n{vad.name}: recall within {WITHIN_S:.0f} s {found}/{len(positives)} = {found / len(positives):.3f}; "
          f"latency median {np.median(lat):.2f} s, 90th {np.percentile(lat, 90):.2f} s, max {lat.max():.2f} s; "
          f"whispers {whispered}/{len(whispers)}; raised before the speech in the clips: {early}")  # fmt: skip
    print(
        f"  false alarms: {alarms} in {hours:.2f} player-hours = {alarms / hours:.2f} an hour "
        f"(95 % upper bound {poisson_upper(alarms) / hours:.2f}); CPU {cpu / audio_s * 100:.2f} % of a core"
    )
    for key, values in by.items():
        print(f"  {key}: " + ", ".join(f"{v} {h}/{n}" for v, (h, n) in sorted(values.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--hours", type=float, default=3.0, help="player-hours of sound without speech")
    parser.add_argument("--utterances", type=int, default=240)
    parser.add_argument("--whispers", type=int, default=40)
    parser.add_argument("--models", default="models")
    parser.add_argument(
        "--vad",
        choices=("all", "silero"),
        default="all",
        help="silero: the service's model alone (the WebRTC VAD's figures need no long run)",
    )
    parser.add_argument("--keep", help="a folder to write the first clips into (WAV), to listen to")
    args = parser.parse_args(argv)
    settings = SpeechSettings()
    vads: list[VoiceActivity] = [SileroVad(model_path(Path(args.models), SILERO_VAD))]
    if args.vad == "all":
        vads += [WebRtcVad(level) for level in (1, 2, 3)]
    rng = np.random.default_rng(args.seed)

    made = time.perf_counter()
    positives = [make_positive(rng, i, False) for i in range(args.utterances)]
    whispers = [make_positive(rng, i, True) for i in range(args.whispers)]
    state, minutes = rng.bit_generator.state, round(args.hours * 60)
    print(f"sound set: {len(positives)} utterances, {len(whispers)} whispers, {minutes} minutes without speech "
          f"(made in {time.perf_counter() - made:.0f} s; the minutes as they are heard, seed {args.seed})")  # fmt: skip
    if args.keep:
        folder = Path(args.keep)
        folder.mkdir(parents=True, exist_ok=True)
        for i, (labels, samples, _) in enumerate(positives[:10]):
            sounds.wav_file(samples, folder / f"speech-{i}-{labels['background'].replace(' ', '-')}.wav", SAMPLE_RATE)
        sounds.wav_file(next(negatives(state, 1)), folder / "no-speech-0.wav", SAMPLE_RATE)

    for vad in vads:
        evaluate(vad, settings, positives, whispers, negatives(state, minutes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
