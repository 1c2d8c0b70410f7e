"""Every browser test needs Chromium: skipped without it on a developer's machine, failed without it in CI."""

from __future__ import annotations

import pytest

from tests.browser.chromium import require


@pytest.fixture(autouse=True)
def chromium() -> None:
    require()
