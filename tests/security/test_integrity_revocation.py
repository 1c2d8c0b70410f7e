"""Issue 12, item 3: a webhook secret revoked with ``proctor platform revoke`` stops working at once on a running
server (every process checks the secret's row in the transaction that stores the delivery)."""

from __future__ import annotations

from typing import Any

from proctor.cli import main as cli
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform


async def test_a_revoked_secret_is_refused_on_the_next_delivery(platform: Platformer, settings: Any) -> None:
    status, _ = await platform.create("rev")
    assert status == 200
    status, _ = await platform.send("player.joined", "rev", {"player": "rev-b"})
    assert status == 200  # the server has the secret in memory now
    assert cli(["platform", "revoke", platform.name, platform.secret, "--db", settings.database_url]) == 0
    status, answer = await platform.send("player.joined", "rev", {"player": "rev-w"})
    assert (status, answer["error"]) == (401, "unauthorized")
    assert "revoked" in answer["message"]
