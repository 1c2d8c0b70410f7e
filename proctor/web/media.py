"""Evidence files (snapshots, clips, stills, ear crops) for arbiters and the review panel."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aiohttp import web

from proctor import errors
from proctor.web.inputs import context_of
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter

MEDIA_TYPES: Final = {".jpg": "image/jpeg", ".webm": "video/webm", ".wav": "audio/wav"}
"""What is served: snapshots and stills, the cameras' clips, and the microphone's sound clips (proctor.microphone)."""
MAX_NAME: Final = 1000
"""The longest media name asked for (the names the camera gives are well under 200 characters)."""


async def get_media(request: web.Request) -> web.StreamResponse:
    """An evidence file (a snapshot, clip, still or ear crop) by the name its incident gives; arbiters and the review
    panel only.  Only files inside ``MEDIA_DIR`` with a known type are served; anything else is 404."""
    arbiter(request)
    folder = Path(context_of(request).settings.media_dir).resolve()
    name = request.query.get("name", "")
    if "\x00" in name or len(name) > MAX_NAME:
        raise errors.BadRequestError(f"query parameter 'name' must be a media name of at most {MAX_NAME} characters")
    try:
        path = (folder / name).resolve()
        served = path.is_relative_to(folder) and path.suffix in MEDIA_TYPES and path.is_file()
    except (OSError, ValueError):  # a name the file system cannot hold (too long a part, say)
        served = False
    if not served:
        raise errors.NotFoundError(f"no evidence file {name!r} (deleted after its retention, or never kept)")
    headers = {"Content-Type": MEDIA_TYPES[path.suffix], "Cache-Control": "private, max-age=3600",
               "X-Content-Type-Options": "nosniff"}  # fmt: skip
    return web.FileResponse(path, headers=headers)


ROUTES: Final = (
    Route(
        "GET", "/api/v1/media", get_media,
        "An evidence file named by an incident (snapshot, clip, still, ear crop), for arbiters and the review panel",
        {"200": "the file (image/jpeg, video/webm or audio/wav)", "400": "not a name (too long, or a NUL)",
         "401": "not an arbiter",
         "404": "no such file under MEDIA_DIR (or deleted after its retention)"},
        (("name", "query", "the media name as the incident's evidence gives it, e.g. event/section/file.jpg"),),
    ),
)  # fmt: skip
