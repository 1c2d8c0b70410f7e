"""The views' screenshots the browser tests write to tests/browser/artifacts/: each view at the two desk sizes an
arbiter uses, from one page load (the page is resized, drawn again, and given back its size)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from playwright.async_api import Page

ARTIFACTS: Final = Path(__file__).parent / "artifacts"
SIZES: Final = ((1366, 768), (1920, 1080))
"""The first is the tests' own viewport (``name.png``); the others are written as ``name-WIDTHxHEIGHT.png``."""


async def views(page: Page, name: str, *, full_page: bool = False) -> list[Path]:
    """``name.png`` at 1366x768 and ``name-1920x1080.png``, the page left at the size it had."""
    ARTIFACTS.mkdir(exist_ok=True)
    before = page.viewport_size
    written = []
    for index, (width, height) in enumerate(SIZES):
        path = ARTIFACTS / (f"{name}.png" if index == 0 else f"{name}-{width}x{height}.png")
        await page.set_viewport_size({"width": width, "height": height})
        await page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        await page.wait_for_timeout(100)  # the boards redrawn at the new width
        await page.screenshot(path=str(path), full_page=full_page)
        written.append(path)
    if before is not None:
        await page.set_viewport_size(before)
    return written
