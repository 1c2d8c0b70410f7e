"""The simulated platform against the real app: real games, with duplicates, swaps and broken signatures."""

from __future__ import annotations

import random

import pytest

from proctor.simulate import play_game, simulate
from tests.proctor.conftest import Platformer

pytestmark = pytest.mark.asyncio


async def test_a_simulated_platform_gets_the_engines_results(platform: Platformer) -> None:
    url = str(platform.client.make_url("/")).rstrip("/")
    report = await simulate(url, platform.name, platform.secret, games=6, rate=0, seed=7, real_time=False)
    assert report.disagreed == [] and report.agreed == 6
    assert report.statuses["applied"] > 50 and report.statuses["created"] == 6
    assert report.statuses.get("gave up", 0) == 0
    assert report.refused_on_purpose == report.statuses.get("unauthorized", 0)


async def test_simulated_games_are_legal_and_end_by_the_rules() -> None:
    moves, result, reason = play_game(random.Random(3), "renju", max_moves=225)
    assert moves[0] == "h8" and len(moves) == len(set(m for m in moves if m != "pass")) + moves.count("pass")
    assert (result, reason) != (None, None)
