"""The demo copy of an event file (``proctor demo``): the same sections, players, pairings and policies, made to run
in minutes on the wall clock, and labelled as a demo wherever it shows.

What changes, and why:

- the slug gets ``-demo`` (``-demo-2``… when the database already has one), the name says 演示 / demo, the dates
  are today's (the same number of days);
- every section's time control becomes :data:`DEMO_TIME_CONTROL` (deadlines run on the wall clock: a 30-minute game
  would keep the demo waiting), and a knockout's play-off controls become faster still (30.4);
- the lateness tolerance becomes at least :data:`DEMO_LATENESS_S`, so that the demo's late player is seen arriving
  late (14.3) rather than ruled absent;
- the scheduled ear checks (36.2) are off: the simulated players cannot turn their heads to show their ears, and
  every camera's check at the start of the round at once would hold up the other checks of a small machine (an
  arbiter can still ask for one from the desk);
- the players' platform ids and the pairings' platform game ids get the same suffix as the slug, so that a demo
  never takes the place of the real event's players or games in the same database.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any, Final

DEMO_TIME_CONTROL: Final = "1+1"
"""1 minute each and 1 second a move: long enough for the demo's players, who think about a second a move."""
DEMO_PLAY_OFF: Final = ("0.5+1", "0.25+1")
"""A knockout's play-off in the demo: faster than :data:`DEMO_TIME_CONTROL`, as 30.4 requires."""
DEMO_LATENESS_S: Final = 20.0
"""The demo's late player arrives a few seconds after the start, within this tolerance (14.3)."""
DEMO_NAME: Final = "（演示 · demo）"


def demo_copy(raw: dict[str, Any], suffix: str, today: dt.date) -> dict[str, Any]:
    """The event file's table (as ``tomllib`` reads it) made into its demo copy; ``suffix``: ``-demo``, ``-demo-2``…"""
    event = copy.deepcopy(raw)
    head = event.setdefault("event", {})
    head["slug"] = f"{head.get('slug', 'event')}{suffix}"
    head["name"] = f"{head.get('name', 'Event')}{DEMO_NAME}"
    starts, ends = _date(head.get("starts")), _date(head.get("ends"))
    days = (ends - starts).days if starts and ends and ends >= starts else 0
    head["starts"] = today.isoformat()
    head["ends"] = (today + dt.timedelta(days=days)).isoformat()
    for section in event.get("sections", []):
        section["time_control"] = DEMO_TIME_CONTROL
        if section.get("system") == "knockout":
            section["play_off"] = list(DEMO_PLAY_OFF)
        policy = section.setdefault("policy", {})
        policy["lateness_tolerance_s"] = max(float(policy.get("lateness_tolerance_s", 0)), DEMO_LATENESS_S)
        policy["ear_check_at_start"], policy["ear_checks_per_hour"] = False, 0
        for player in section.get("players", []):
            ref = player.get("platform_ref") or f"{section.get('slug', 'section')}-{player.get('start_no')}"
            player["platform_ref"] = f"{ref}{suffix}"
        for pairing in section.get("pairings", []):
            if pairing.get("platform_game_id"):
                pairing["platform_game_id"] = f"{pairing['platform_game_id']}{suffix}"
    return event


def _date(value: object) -> dt.date | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None
