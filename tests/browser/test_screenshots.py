"""The screenshots the browser tests write (issue 13: each view at 1366x768 and 1920x1080): every view of the desk
goes through :func:`tests.browser.screenshots.views`, which writes it at both sizes; a test that writes one with
Playwright's own ``screenshot(path=…)`` writes it at one size only. The exceptions are named here, with why."""

from __future__ import annotations

import re
from pathlib import Path

ONE_SIZE = {
    "arbiter-queue.png": "a crop of the queue beside the round's views",
    "arbiter-cases.png": "a crop of the queue beside the English views",
    "arbiter-board-camera.png": "a crop of one board (its fixed width) with its camera thumbnail",
    "arbiter-round-menu.png": "a crop of the top bar with the round's menu open, at the 1366 px the bar must fit",
    "desk-en-menu.png": "a crop of the top bar with the arbiter's menu open, at the 1366 px the bar must fit",
    "arbiter-roster-print.png": "the printed sheet, as the print medium lays it out",
    "player-leave-refused.png": "the player's page on a phone (390 px)",
    "player-phone-zh.png": "the player's page on a phone (390 px)",
    "player-phone-zh-answered.png": "the player's page on a phone (390 px)",
    "player-phone-en.png": "the player's page on a phone (390 px)",
    "player-window-refused-en.png": "the player's page on a phone (390 px)",
    "player-side.png": "the side camera's page on the phone (390 px)",
    "player-devices.png": "the player's page on a laptop (1000 px) with its devices' guide",
    "player-microphone-notice-en.png": "the player's page on a phone (390 px)",
    "player-talk.png": "the player's page on a phone (390 px)",
    "arbiter-talk.png": "the desk while the push-to-talk button is held: resizing would move it from under the pointer",
}
WRITTEN = re.compile(r'ARTIFACTS / "([^"]+\.png)"')


def test_each_desk_view_is_written_at_both_sizes() -> None:
    tests = Path(__file__).parent.glob("test_*.py")
    written = {name: path.name for path in tests for name in WRITTEN.findall(path.read_text())}
    assert set(written) == set(ONE_SIZE), {name: where for name, where in written.items() if name not in ONE_SIZE}
