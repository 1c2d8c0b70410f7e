"""What the analysis workers tell the service (the distributed mode, issue 16; proctor.worker): their findings with
the snapshot, their clips, the microphones' findings and sound clips, and the time a stream went unchecked while it
moved between workers; and what they fetch from it: an approved view's still, to compare the stream they hold with.
Each with the workers' secret (``Authorization: Bearer``, ``WORKER_SECRET``); each report recorded once however
often it is told (proctor.camera_records, proctor.sound_records), answered after it is stored."""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import math
import re
from typing import Any, Final

from aiohttp import web

from proctor import errors
from proctor.player_devices import require_device
from proctor.sound_records import SOUND_RECORDS, sound_check
from proctor.web.inputs import context_of, text_field
from proctor.web.openapi import Route
from video.checks import Check, Finding
from video.devices import StreamKey
from video.speech import SoundFinding

MAX_REPORT: Final = 16 * 1024 * 1024
"""A report's largest body (a clip of a few seconds, in base64)."""
MAX_DETAIL: Final = 500


def _worker(request: web.Request) -> None:
    secret = context_of(request).settings.worker_secret
    if not secret:
        raise errors.NotFoundError("this service has no analysis workers (no WORKER_SECRET)")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme != "Bearer" or not hmac.compare_digest(given.encode(), secret.encode()):
        raise errors.UnauthorizedError("not an analysis worker of this service")


async def _report(request: web.Request) -> dict[str, Any]:
    _worker(request)
    if request.content_length is not None and request.content_length > MAX_REPORT:
        raise errors.BadRequestError(f"a report is at most {MAX_REPORT // (1024 * 1024)} MB")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_REPORT:
            raise errors.BadRequestError(f"a report is at most {MAX_REPORT // (1024 * 1024)} MB")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        raise errors.BadRequestError("the body must be JSON") from None
    if not isinstance(body, dict):
        raise errors.BadRequestError("the body must be a JSON object")
    return body


def _stream(request: web.Request, body: dict[str, Any]) -> StreamKey:
    """The stream a report is about: a player the service knows (NotFoundError) and a device."""
    stream = StreamKey(text_field(body, "player", True), require_device(body.get("device")))
    context_of(request).camera.require_known(stream.player)
    return stream


def _seconds(body: dict[str, Any], name: str, optional: bool = False) -> float | None:
    value = body.get(name)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise errors.BadRequestError(f"'{name}' must be a time in seconds")
    return float(value)


def _span(body: dict[str, Any]) -> tuple[float, float | None, str]:
    """A finding's ``started``, ``ended`` (or None) and ``detail``, checked."""
    started, ended = _seconds(body, "started"), _seconds(body, "ended", optional=True)
    assert started is not None
    if ended is not None and ended < started:
        raise errors.BadRequestError("'ended' must not be before 'started'")
    return started, ended, text_field(body, "detail")[:MAX_DETAIL]


def _finding(body: dict[str, Any]) -> Finding:
    try:
        check = Check(body.get("check"))
    except ValueError:
        raise errors.BadRequestError(f"'check' must be one of {', '.join(c.value for c in Check)}") from None
    return Finding(check, *_span(body))


def _sound_finding(body: dict[str, Any]) -> SoundFinding:
    try:
        check = sound_check(body.get("check"))
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    return SoundFinding(check, *_span(body))


def _media(body: dict[str, Any], name: str) -> bytes | None:
    value = body.get(name)
    if value is None:
        return None
    try:
        return base64.b64decode(text_field(body, name), validate=True)
    except binascii.Error:
        raise errors.BadRequestError(f"'{name}' must be base64") from None


async def worker_finding(request: web.Request) -> web.Response:
    """A finding ``{player, device, check, started, ended, detail, snapshot}`` (times in seconds, the snapshot a
    base64 JPEG): the incident raised, or its end noted."""
    body = await _report(request)
    stream, finding = _stream(request, body), _finding(body)
    snapshot = _media(body, "snapshot")
    incident = await context_of(request).camera.worker_finding(stream, finding, snapshot)
    return web.json_response({"incident": incident})


async def worker_clip(request: web.Request) -> web.Response:
    """A started finding's clip ``{player, device, check, started, detail, clip}`` (a base64 WebM), attached to its
    incident."""
    body = await _report(request)
    stream, finding = _stream(request, body), _finding(body)
    clip = _media(body, "clip")
    if not clip:
        raise errors.BadRequestError("'clip' must be a base64 WebM")
    incident = await context_of(request).camera.attach_clip(stream, finding, clip)
    return web.json_response({"incident": incident})


def _player(request: web.Request, body: dict[str, Any]) -> str:
    """The player a microphone's report is about: one the service knows (NotFoundError)."""
    player = text_field(body, "player", True)
    context_of(request).camera.require_known(player)
    return player


async def worker_sound(request: web.Request) -> web.Response:
    """A microphone's finding ``{player, check, started, ended, detail}`` (times in seconds; the front camera's
    audio, proctor.sound_records): the incident raised, or its end noted."""
    body = await _report(request)
    player, finding = _player(request, body), _sound_finding(body)
    incident = await request.app[SOUND_RECORDS].record(player, finding)
    return web.json_response({"incident": incident})


async def worker_sound_clip(request: web.Request) -> web.Response:
    """A voice finding's clip ``{player, check, started, detail, clip}`` (a base64 WAV), kept in the section's sound
    folder and attached to its incident."""
    body = await _report(request)
    player, finding = _player(request, body), _sound_finding(body)
    clip = _media(body, "clip")
    if not clip or clip[:4] != b"RIFF" or clip[8:12] != b"WAVE":
        raise errors.BadRequestError("'clip' must be a base64 WAV")
    incident = await request.app[SOUND_RECORDS].attach_clip(player, finding, clip)
    return web.json_response({"incident": incident})


async def worker_gap(request: web.Request) -> web.Response:
    """A stream no worker checked ``{player, device, from_ms, to_ms}``: an ``analysis-gap`` incident, its end
    noted (the camera timeline)."""
    body = await _report(request)
    stream = _stream(request, body)
    bounds: list[int] = []
    for name in ("from_ms", "to_ms"):
        value = body.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise errors.BadRequestError(f"'{name}' must be a time in milliseconds")
        bounds.append(value)
    if bounds[1] < bounds[0]:
        raise errors.BadRequestError("'to_ms' must not be before 'from_ms'")
    incident = await context_of(request).camera.record_gap(stream, bounds[0], bounds[1])
    return web.json_response({"incident": incident})


async def worker_reference(request: web.Request) -> web.Response:
    """An approved view's still (a JPEG) by its SHA-256, as the registry names it with the stream.  A read: without
    the workers' secret (or on a service that has none) it is 401, as every read that is not public."""
    if not context_of(request).settings.worker_secret:
        raise errors.UnauthorizedError("not an analysis worker of this service (it has none)")
    _worker(request)
    digest = request.match_info["sha256"]
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise errors.BadRequestError("a still is named by its SHA-256, 64 lower-case hex digits")
    still = context_of(request).camera.devices.still_of(digest)
    if still is None:
        raise errors.NotFoundError("no approved view has this still")
    return web.Response(body=still, content_type="image/jpeg")


_ANSWERS: Final = {
    "200": "stored (or stored before): the incident", "400": "malformed report", "401": "not the workers' secret",
    "404": "no analysis workers here, or an unknown player or device",
}  # fmt: skip

ROUTES: Final = (
    Route("POST", "/api/v1/worker/findings", worker_finding,
          "An analysis worker's finding {player, device, check, started, ended, detail, snapshot}", _ANSWERS),
    Route("POST", "/api/v1/worker/clips", worker_clip,
          "An analysis worker's clip of a started finding {player, device, check, started, detail, clip}", _ANSWERS),
    Route("POST", "/api/v1/worker/sounds", worker_sound,
          "An analysis worker's microphone finding {player, check, started, ended, detail}", _ANSWERS),
    Route("POST", "/api/v1/worker/sound-clips", worker_sound_clip,
          "An analysis worker's sound clip of a voice finding {player, check, started, detail, clip}", _ANSWERS),
    Route("POST", "/api/v1/worker/gaps", worker_gap,
          "A stream no analysis worker checked {player, device, from_ms, to_ms}", _ANSWERS),
    Route("GET", "/api/v1/worker/references/{sha256}", worker_reference,
          "An approved view's still (JPEG) by its SHA-256, for the worker holding the stream",
          {"200": "the still", "400": "not a SHA-256", "401": "not the workers' secret",
           "404": "no approved view with this still"},
          (("sha256", "path", "the still's SHA-256, as the stream registry gives it"),)),
)  # fmt: skip
