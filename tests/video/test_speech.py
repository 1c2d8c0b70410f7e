"""The microphone check (issue 15): speech segments from voice-activity probabilities, the mouth's judgement, the
voice, muted and lost findings, and Silero VAD on espeak-ng's speech over synthesised room sounds."""

from __future__ import annotations

import itertools
import os
import shutil
import wave
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray
from skimage import data

from benchmarks import sounds
from video.audio import AudioRing, to_16k, wav_bytes
from video.checks import Box
from video.errors import ModelUnavailableError
from video.landmarks import FaceMesh
from video.models import FACE_LANDMARK, SILERO_VAD, model_path
from video.speech import (
    CHUNK,
    CHUNK_S,
    SAMPLE_RATE,
    FacePatches,
    MouthState,
    MouthView,
    SoundCheck,
    SoundFinding,
    SpeechSettings,
    SpeechTracker,
    VoiceMonitor,
    face_patches,
    judge_mouth,
    level_dbfs,
    mouth_motion,
    mouth_openness,
)
from video.vad import SileroVad, WebRtcVad

MODELS_DIR = Path(os.environ.get("PROCTOR_MODELS_DIR", "models"))
ROOM = -55.0
"""A quiet room's level (dBFS)."""


def needed(what: str) -> None:
    if os.environ.get("CI"):
        raise AssertionError(f"{what} is missing in CI (.ci/run installs it, scripts/test fetches the models)")
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="module")
def silero() -> SileroVad:
    try:
        return SileroVad(model_path(MODELS_DIR, SILERO_VAD))
    except ModelUnavailableError as error:
        needed(str(error))
        raise


@pytest.fixture(scope="module")
def espeak() -> None:
    if shutil.which("espeak-ng") is None:
        needed("Debian's espeak-ng")


def feed(monitor: VoiceMonitor, probabilities: list[float], start: float = 0.0, level: float = ROOM,
         views: list[MouthView] | None = None) -> list[tuple[float, SoundFinding]]:  # fmt: skip
    """Chunks of the given probabilities from ``start``; mouth views are given as their times come."""
    found = []
    pending = sorted(views or [], key=lambda v: v.at)
    for index, probability in enumerate(probabilities):
        at = start + (index + 1) * CHUNK_S
        while pending and pending[0].at <= at:
            monitor.see(pending.pop(0))
        found += [(at, finding) for finding in monitor.hear(at, probability, level)]
    return found


def chunks(seconds: float, probability: float) -> list[float]:
    return [probability] * round(seconds / CHUNK_S)


def test_a_click_does_not_open_a_segment_and_speech_does_backdated_to_its_first_voiced_chunk() -> None:
    tracker = SpeechTracker()
    events = [tracker.feed((i + 1) * CHUNK_S, p) for i, p in enumerate(chunks(1, 0.0) + chunks(0.2, 0.9)
                                                                         + chunks(2, 0.0))]  # fmt: skip
    assert all(opened is None and closed is None for opened, closed in events)
    tracker = SpeechTracker()
    probabilities = chunks(1, 0.0) + chunks(1.5, 0.9) + chunks(1.5, 0.0)
    events = [tracker.feed((i + 1) * CHUNK_S, p) for i, p in enumerate(probabilities)]
    opened = [(i, o) for i, (o, _) in enumerate(events) if o is not None]
    closed = [c for _, c in events if c is not None]
    assert len(opened) == 1 and len(closed) == 1
    index, segment = opened[0]
    assert segment.start == pytest.approx(1.0, abs=0.04)  # the first voiced chunk, not when it was recognised
    assert (index + 1) * CHUNK_S == pytest.approx(1.4, abs=0.05)  # recognised after 0.4 s of speech
    assert closed[0].end == pytest.approx(2.5, abs=0.04)


def test_speech_while_the_mouth_moves_is_the_players_own() -> None:
    monitor = VoiceMonitor()
    views = [MouthView(1.0 + i * 0.25, openness=0.05 + 0.25 * (i % 2)) for i in range(20)]
    found = feed(monitor, chunks(1, 0.0) + chunks(4, 0.9) + chunks(3, 0.0), views=views)
    assert found == []
    assert {state for _, _, state in monitor.judgements} == {MouthState.MOVING}


@pytest.mark.parametrize("views", ["still", "unseen"])
def test_speech_while_the_mouth_is_still_or_unseen_is_flagged_within_3_s_and_ends(views: str) -> None:
    monitor = VoiceMonitor()
    seen = [MouthView(1.0 + i * 0.25, openness=0.02) for i in range(20)] if views == "still" else []
    found = feed(monitor, chunks(1, 0.0) + chunks(4, 0.9) + chunks(7, 0.0), views=seen)
    raised = [(at, f) for at, f in found if f.ended is None]
    assert len(raised) == 1
    at, finding = raised[0]
    assert finding.check is SoundCheck.VOICE and finding.check.article == "36.4.2, 36.4.3"
    assert finding.started == pytest.approx(1.0, abs=0.04) and at - 1.0 <= 3.0
    assert ("still" if views == "still" else "no face") in finding.detail
    ended = [f for _, f in found if f.ended is not None]
    assert len(ended) == 1 and ended[0].ended is not None and ended[0].ended > 5.0
    assert monitor.active() == []


def test_a_second_voice_after_the_player_spoke_is_flagged() -> None:
    """The player speaks (the mouth moves), then someone else (the mouth still): only the second stretch counts."""
    monitor = VoiceMonitor()
    views = [MouthView(1.0 + i * 0.25, openness=0.05 + 0.25 * (i % 2)) for i in range(8)]
    views += [MouthView(3.0 + i * 0.25, openness=0.03) for i in range(16)]
    found = feed(monitor, chunks(1, 0.0) + chunks(6, 0.9) + chunks(2, 0.0), views=views)
    raised = [f for _, f in found if f.ended is None]
    assert len(raised) == 1 and raised[0].started >= 2.4
    assert [state for _, _, state in monitor.judgements][:1] == [MouthState.MOVING]


def test_the_mouth_is_judged_by_its_opening_or_its_regions_motion() -> None:
    settings = SpeechSettings()
    assert judge_mouth([MouthView(i, openness=0.1 + 0.1 * (i % 2)) for i in range(4)], settings) is MouthState.MOVING
    assert judge_mouth([MouthView(i, openness=0.1 + 0.01 * (i % 2)) for i in range(4)], settings) is MouthState.STILL
    assert judge_mouth([MouthView(i, motion=0.6) for i in range(3)], settings) is MouthState.MOVING
    assert judge_mouth([MouthView(i, motion=0.02) for i in range(3)], settings) is MouthState.STILL
    assert judge_mouth([MouthView(0, openness=0.3), MouthView(1)], settings) is MouthState.UNSEEN
    points = np.zeros((468, 3), dtype=np.float32)
    points[61, :2], points[291, :2], points[13, :2], points[14, :2] = (80, 120), (120, 120), (100, 118), (100, 128)
    assert mouth_openness(points) == pytest.approx(0.25)


def face_picture(open_by: int, shift: int = 0, seed: int = 0) -> NDArray[np.uint8]:
    """A grey face-like picture: eyes, a mouth opened by ``open_by`` pixels, camera noise; moved by ``shift``."""
    rng = np.random.default_rng(seed)
    image: NDArray[np.float32] = np.full((240, 320), 120, dtype=np.float32)
    image[60:200, 100:220] = 170  # the face
    image[95:105, 125:145] = image[95:105, 175:195] = 40  # the eyes
    image[160 - open_by // 2 : 162 + open_by // 2, 135:185] = 60  # the mouth
    image = np.asarray(np.roll(image, shift, axis=1) + rng.normal(0, 2.0, image.shape), dtype=np.float32)
    return np.clip(image, 0, 255).astype(np.uint8)


def test_without_landmarks_the_mouth_regions_motion_tells_talking_from_a_still_mouth_and_a_moving_head() -> None:
    face = Box(100, 60, 120, 140)
    still = [face_patches(face_picture(2, seed=i), face) for i in range(4)]
    talking = [face_patches(face_picture(2 + 14 * (i % 2), seed=i), face) for i in range(4)]
    swaying = [face_patches(face_picture(2, shift=3 * (i % 2), seed=i), face) for i in range(4)]
    threshold = SpeechSettings().mouth_motion

    def motions(patches: list[FacePatches | None]) -> list[float]:
        return [mouth_motion(a, b) for a, b in itertools.pairwise(patches) if a is not None and b is not None]

    assert max(motions(still)) < threshold
    assert min(motions(talking)) > threshold
    assert max(motions(swaying)) < threshold


def test_a_muted_microphone_and_a_lost_one_are_found_and_end_when_sound_is_back() -> None:
    monitor = VoiceMonitor()
    found = [f for _, f in feed(monitor, chunks(2, 0.0))]
    found += [f for _, f in feed(monitor, chunks(6, 0.0), start=2.0, level=float("-inf"))]
    assert [(f.check, f.ended is None) for f in found] == [(SoundCheck.MUTED, True)]
    assert found[0].started == pytest.approx(2.0, abs=0.04)
    back = [f for _, f in feed(monitor, chunks(1, 0.0), start=8.0)]
    assert [(f.check, f.ended is not None) for f in back] == [(SoundCheck.MUTED, True)]
    assert monitor.tick(11.0, 9.0) == []  # the last sound arrived at 9.0
    lost = monitor.tick(14.5, 9.0)
    assert [f.check for f in lost] == [SoundCheck.LOST] and lost[0].started == 9.0
    assert monitor.tick(15.0, 9.0) == []  # raised once
    assert feed(monitor, [0.0], start=8.5) == []  # a chunk judged late, from before the loss, does not end it
    assert [(f.check, f.ended is not None) for _, f in feed(monitor, [0.0], start=16.0)] == [(SoundCheck.LOST, True)]
    never = VoiceMonitor()
    assert [f.check for f in never.tick(6.0, 0.0)] == [SoundCheck.LOST]  # no sound at all since the stream opened


def test_the_ring_keeps_the_clips_seconds_and_the_wav_plays() -> None:
    ring = AudioRing(seconds=3.0)
    for k in range(10):  # ten blocks of 0.5 s, the last ending at 5.0
        ring.add(0.5 * (k + 1), np.full(SAMPLE_RATE // 2, k / 10, dtype=np.float32))
    clip = ring.between(3.0, 4.0)
    assert len(clip) == pytest.approx(SAMPLE_RATE, abs=2) and clip[0] == pytest.approx(0.6)
    assert len(ring.between(0.0, 1.0)) == 0  # older than the ring keeps
    with wave.open(BytesIO(wav_bytes(clip))) as played:
        assert (played.getframerate(), played.getnchannels(), played.getnframes()) == (SAMPLE_RATE, 1, len(clip))


def test_resampling_48_khz_to_16_khz_keeps_a_tone_and_its_level() -> None:
    tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(48_000) / 48_000)).astype(np.float32)
    out = to_16k(tone, 48_000)
    assert len(out) == pytest.approx(16_000, abs=64)
    assert level_dbfs(out[1000:-1000]) == pytest.approx(level_dbfs(tone), abs=0.2)


def heard(vad: SileroVad | WebRtcVad, sound: NDArray[np.float32]) -> tuple[list[SoundFinding], float]:
    """The voice findings over a 48 kHz sound (after Opus, as the service hears it), and when each was raised."""
    vad.reset()
    samples = to_16k(sounds.opus_round_trip(sound), sounds.RATE)
    monitor = VoiceMonitor()
    raised, first = [], float("nan")
    for index in range(len(samples) // CHUNK):
        chunk = samples[index * CHUNK : (index + 1) * CHUNK]
        for finding in monitor.hear((index + 1) * CHUNK_S, vad.probability(chunk), level_dbfs(chunk)):
            if finding.ended is None and finding.check is SoundCheck.VOICE:
                raised.append(finding)
                first = first if raised[:-1] else (index + 1) * CHUNK_S
    return raised, first


@pytest.mark.parametrize(
    ("voice", "text"), [("cmn", "黑棋走十一路，快堵住他的四"), ("en-us+f4", "block his four, play h eight")]
)
def test_silero_hears_espeaks_advice_over_typing_within_3_s(silero: SileroVad, espeak: None, voice: str,
                                                            text: str) -> None:  # fmt: skip
    rng = np.random.default_rng(7)
    mix = sounds.background("keyboard", rng, 8.0)
    speech = sounds.at_level(sounds.in_room(rng, sounds.espeak(text, voice, pitch=80), 0.4), -32)
    sounds._place(mix, speech, int(3.0 * sounds.RATE))
    raised, first = heard(silero, mix)
    assert len(raised) == 1 and 2.5 <= raised[0].started <= 3.5
    assert first - 3.0 <= 3.0


def test_silero_is_quiet_over_keyboard_mouse_chair_and_a_quiet_room(silero: SileroVad) -> None:
    rng = np.random.default_rng(11)
    for kind in ("quiet room", "keyboard", "mouse", "chair", "everything"):
        raised, _ = heard(silero, sounds.background(kind, rng, 20.0))
        assert raised == [], kind


@pytest.fixture(scope="module")
def mesh() -> FaceMesh:
    try:
        return FaceMesh(model_path(MODELS_DIR, FACE_LANDMARK))
    except ModelUnavailableError as error:
        needed(str(error))
        raise


def test_the_face_mesh_sees_a_mouth_open_and_close_and_a_still_one_stay_still(mesh: FaceMesh) -> None:
    """The astronaut (scikit-image), her mouth opened by a dark ellipse between her lips, with camera noise."""
    picture = np.ascontiguousarray(data.astronaut())  # type: ignore[no-untyped-call]
    face = Box(170, 60, 110, 130)
    rng = np.random.default_rng(0)

    def view(at: float, opened_by: int) -> MouthView:
        image = picture.copy()
        if opened_by:
            cv2.ellipse(image, (223, 147), (20, opened_by // 2), 0, 0, 360, (40, 10, 10), -1)
        noisy = np.clip(image + rng.normal(0, 3, image.shape), 0, 255).astype(np.uint8)
        points = mesh.points(noisy, face)
        assert points is not None
        return MouthView(at, openness=mouth_openness(points))

    settings = SpeechSettings()
    still = [view(i * 0.25, 0) for i in range(6)]
    talking = [view(i * 0.25, 14 * (i % 2)) for i in range(6)]
    assert judge_mouth(still, settings) is MouthState.STILL
    assert judge_mouth(talking, settings) is MouthState.MOVING
    assert mesh.points(np.zeros((480, 640, 3), dtype=np.uint8), face) is None  # no face there
