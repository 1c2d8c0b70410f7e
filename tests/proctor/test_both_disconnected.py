"""Both players disconnected (37.7: "unless the competition rules provide otherwise"): by default no automatic loss,
the case goes to the arbiter; a section may choose that each player's own reconnect window counts.  On the real app
with signed webhooks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, load_event_file, parse_event
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import add_arbiter
from tests.proctor.test_review import get, settings  # noqa: F401  (the fixture)

EVENT = """
[event]
slug = "outage-cup"
name = "Outage Cup"

[[sections]]
slug = "open"
name = "Open"
rule = "freestyle"
time_control = "rapid-15"

[sections.policy]
reconnect_window_s = 5
{reading}
[[sections.players]]
start_no = 1
name = "One"
platform_ref = "oc-1"

[[sections.players]]
start_no = 2
name = "Two"
platform_ref = "oc-2"

[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
platform_game_id = "oc-g1"
"""


def load(service: Settings, tmp_path: Path, reading: str) -> None:
    path = tmp_path / "outage-cup.toml"
    path.write_text(EVENT.format(reading=reading), encoding="utf-8")
    engine = create_database_engine(service)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()


async def both_drop_two_seconds_apart(platform: Platformer, token: str) -> dict[str, Any]:
    """Both players lose the platform 2 s apart; the first comes back after both windows (5 s) have run out."""
    start = int(time.time() * 1000) - 60_000
    data = {"black": {"id": "oc-1"}, "white": {"id": "oc-2"}, "rule": "freestyle", "time_control": "rapid-15",
            "start_at": iso(start)}  # fmt: skip
    status, created = await platform.send("game.created", "oc-g1", data, at=start - 60_000)
    assert status == 200 and "incidents" not in created, created
    for player in ("oc-1", "oc-2"):
        await platform.send("player.joined", "oc-g1", {"player": player}, at=start - 30_000)
    await platform.send("move", "oc-g1", {"point": "h8"}, at=start + 5_000)
    await platform.send("player.disconnected", "oc-g1", {"player": "oc-1"}, at=start + 10_000)
    await platform.send("player.disconnected", "oc-g1", {"player": "oc-2"}, at=start + 12_000)
    await platform.send("player.reconnected", "oc-g1", {"player": "oc-1"}, at=start + 30_000)
    view: dict[str, Any] = await (await get(platform, f"/api/v1/platforms/{platform.name}/games/oc-g1", token)).json()
    return view


@pytest.mark.asyncio
async def test_37_7_both_disconnected_is_no_automatic_loss_by_default(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path, "")
    token = add_arbiter(settings, "Panel", "reviewer")
    view = await both_drop_two_seconds_apart(platform, token)
    assert view["result"] is None, view["result"]
    assert view["pending_verdict"]["winner"] is None and view["pending_verdict"]["article"] == "37.7"


@pytest.mark.asyncio
async def test_37_7_a_section_may_let_the_first_window_to_run_out_lose(
    platform: Platformer,
    settings: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    load(settings, tmp_path, 'both_disconnected = "window"\n')
    token = add_arbiter(settings, "Panel", "reviewer")
    view = await both_drop_two_seconds_apart(platform, token)
    assert view["result"]["winner"] == "white" and view["result"]["reason"] == "reconnect-deadline"


def test_37_7_the_reading_is_checked_when_the_event_is_loaded(tmp_path: Path) -> None:
    with pytest.raises(EventFileError, match=r"sections\[0\]\.policy\.both_disconnected: expected arbiter or window"):
        parse_event(EVENT.format(reading='both_disconnected = "first"\n'), tmp_path)
