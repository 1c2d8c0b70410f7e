"""Issue 12, item 12: a delivery that fails in the writer fails alone; the good ones committed beside it are stored
and acknowledged."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from proctor.models import FeedDelivery
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer, app_context

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform


async def test_a_bad_delivery_does_not_fail_the_good_ones_in_its_batch(platform: Platformer) -> None:
    for g in range(8):
        assert (await platform.create(f"held-{g}"))[0] == 200
    good = [platform.body("game.created", f"good-{g}", {
        "black": {"id": f"good-{g}-b"}, "white": {"id": f"good-{g}-w"}, "rule": "renju", "time_control": "rapid-15",
        "start_at": "2026-01-01T00:00:00.000Z",
    }) for g in range(40)]  # fmt: skip
    # Seq numbers beyond what the database's integers hold: the row cannot be written.
    bad = [platform.body("player.joined", f"held-{g}", {"player": f"held-{g}-b"}, seq=2**63 + g) for g in range(8)]
    bodies = good[:20] + bad[:4] + good[20:] + bad[4:]
    answers = await asyncio.gather(*(platform.post(body) for body in bodies))
    statuses = [status for status, _ in answers]
    good_statuses = statuses[:20] + statuses[24:44]
    bad_statuses = statuses[20:24] + statuses[44:]
    assert good_statuses == [200] * 40, statuses
    assert all(status >= 400 for status in bad_statuses), statuses
    with app_context(platform).engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(FeedDelivery)).scalar_one() == 48
