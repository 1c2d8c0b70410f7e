"""Debian's Chromium for the browser tests and the dashboard benchmark: where it is, how it is launched (never
``playwright install``), and what happens when it is missing: a developer's machine skips the browser tests, CI
(which installs chromium in .ci/run) fails them, so that they can never pass there by not running."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.async_api import Browser, Playwright

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run")  # fmt: skip


def require(unshare: bool = False) -> None:
    """Skip (or in CI fail) unless Chromium, and where asked ``unshare`` for a private network namespace, are here."""
    missing = [] if CHROMIUM.exists() else ["chromium"]
    if unshare and shutil.which("unshare") is None:
        missing.append("unshare")
    if missing:
        reason = f"needs Debian's {' and '.join(missing)} (.ci/run installs them)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


async def launch(playwright: Playwright, *extra: str) -> Browser:
    return await playwright.chromium.launch(executable_path=str(CHROMIUM), args=[*ARGS, *extra])
