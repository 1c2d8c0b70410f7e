"""The views' screenshots the browser tests write to tests/browser/artifacts/: each view at the two desk sizes an
arbiter uses, from one page load (the page is resized, drawn again, and given back its size)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Final

from playwright.async_api import Page

ARTIFACTS: Final = Path(__file__).parent / "artifacts"
SIZES: Final = ((1366, 768), (1920, 1080))
"""The first is ``name.png``; the others are written as ``name-WIDTHxHEIGHT.png``."""


def png_size(path: Path) -> tuple[int, int]:
    """A PNG file's width and height, from its header."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


async def views(page: Page, name: str, *, full_page: bool = False, selector: str | None = None) -> list[Path]:
    """``name.png`` at 1366x768 and ``name-1920x1080.png``, the page left at the size it had: the viewport, the whole
    page (``full_page``) or one element of it (``selector``, e.g. a dialog, as laid out at each size)."""
    ARTIFACTS.mkdir(exist_ok=True)
    before = page.viewport_size
    written = []
    for index, (width, height) in enumerate(SIZES):
        path = ARTIFACTS / (f"{name}.png" if index == 0 else f"{name}-{width}x{height}.png")
        await page.set_viewport_size({"width": width, "height": height})
        await page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        await page.wait_for_timeout(100)  # the boards redrawn at the new width
        if selector is not None:
            await page.locator(selector).screenshot(path=str(path))
        else:
            await page.screenshot(path=str(path), full_page=full_page)
            shot = png_size(path)
            fits = shot[0] >= width and shot[1] >= height if full_page else shot == (width, height)
            assert fits, (path, shot)
        written.append(path)
    if before is not None:
        await page.set_viewport_size(before)
    return written
