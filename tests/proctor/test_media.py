"""Evidence files for arbiters and the review panel, and nothing outside the media folder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_arbiters import add_arbiter, bearer


async def test_evidence_files_are_served_to_arbiters_only_and_only_from_the_media_folder(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context = app_context(platform)
    media = tmp_path / "media"
    context.settings = dataclasses.replace(context.settings, media_dir=str(media))
    (media / "open-2026" / "a").mkdir(parents=True)
    (media / "open-2026" / "a" / "1-left-area-ab.jpg").write_bytes(b"\xff\xd8 a snapshot")
    (media / "2-camera-frozen-cd.webm").write_bytes(b"\x1aE\xdf\xa3 a clip")
    (media / "notes.txt").write_text("not evidence")
    (tmp_path / "secret.jpg").write_bytes(b"\xff\xd8 outside the media folder")
    panel = bearer(add_arbiter(settings, "Panel", "reviewer"))

    async def get(name: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, str]:
        response = await platform.client.get("/api/v1/media", params={"name": name}, headers=headers or {})
        return response.status, await response.read(), response.headers.get("Content-Type", "")

    assert (await get("open-2026/a/1-left-area-ab.jpg"))[0] == 401
    assert await get("open-2026/a/1-left-area-ab.jpg", panel) == (200, b"\xff\xd8 a snapshot", "image/jpeg")
    assert await get("2-camera-frozen-cd.webm", panel) == (200, b"\x1aE\xdf\xa3 a clip", "video/webm")
    for name in ("../secret.jpg", str(tmp_path / "secret.jpg"), "notes.txt", "gone.jpg", "", "open-2026"):
        status, body, _ = await get(name, panel)
        assert status == 404 and b"outside" not in body, name
