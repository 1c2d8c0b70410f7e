"""One stream token cannot flood the arbiters' queue, and the queue never hides an incident (item 14 of issue 12):
a player's requests are limited per token (429 with Retry-After), and the incident list comes newest first, a page
at a time, with how many there are and where the next page is."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from proctor.request_limits import RequestLimit
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game

pytestmark = pytest.mark.asyncio


async def stream_token(platform: Platformer, token: str, player: str) -> str:
    issued = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=bearer(token))
    assert issued.status == 201
    return str((await issued.json())["token"])


async def test_a_players_requests_are_limited_per_token(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    black, white = await stream_token(platform, token, "g1-b"), await stream_token(platform, token, "g1-w")
    answers = [await platform.client.post(f"/api/v1/play/{black}/requests", json={"kind": "call"}) for _ in range(8)]
    statuses = [answer.status for answer in answers]
    assert statuses == [201] * settings.player_requests_burst + [429] * (8 - settings.player_requests_burst)
    refused = answers[-1]
    assert int(refused.headers["Retry-After"]) >= 1
    body = await refused.json()
    assert body["error"] == "too-many-requests" and "try again in" in body["message"]
    assert (await platform.client.post(f"/api/v1/play/{white}/requests", json={"kind": "leave"})).status == 201
    listed = await (await platform.client.get("/api/v1/incidents?kind=arbiter-call", headers=bearer(token))).json()
    assert len(listed) == settings.player_requests_burst  # the flood stopped at the burst


async def test_the_limit_refills_at_its_rate() -> None:
    limit = RequestLimit(burst=2, per_minute=6.0)  # one every 10 s
    assert [limit.take("t", 0.0), limit.take("t", 0.0)] == [None, None]
    assert limit.take("t", 1.0) == 9
    assert limit.take("t", 10.5) is None and limit.take("other", 10.5) is None


def next_link(response: Any) -> str | None:
    found = re.match(r'<([^>]+)>; rel="next"', response.headers.get("Link", ""))
    return found.group(1) if found else None


async def test_the_incident_list_is_newest_first_in_pages_that_say_what_is_left(
    platform: Platformer, settings: Settings
) -> None:
    token = add_arbiter(settings, "Li", "chief")
    context = app_context(platform)

    def raise_one(number: int) -> Any:
        return context.writer.submit(lambda connection, batch: context.service.raise_incident(
            connection, batch, None, "noise", f"old {number}", source="feed", at=number))  # fmt: skip

    await asyncio.gather(*(raise_one(n) for n in range(520)))  # an event with many old incidents…
    raised = await platform.client.post("/api/v1/incidents", headers=bearer(token),
                                        json={"kind": "real", "summary": "a player calls"})  # fmt: skip
    newest = (await raised.json())["id"]  # …and a new one, which a freshly loaded dashboard must show
    first = await platform.client.get("/api/v1/incidents?status=open", headers=bearer(token))
    page = await first.json()
    assert first.headers["X-Total-Count"] == "521" and len(page) == 500
    assert page[0]["id"] == newest and page[0]["kind"] == "real"
    seen, link = [i["id"] for i in page], next_link(first)
    while link is not None:
        following = await platform.client.get(link, headers=bearer(token))
        seen += [i["id"] for i in await following.json()]
        link = next_link(following)
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == 521  # every one, once, newest first
    small = await platform.client.get("/api/v1/incidents?limit=3&q=old", headers=bearer(token))
    assert [i["id"] for i in await small.json()] == seen[1:4]  # the newest of those the filter passes
    assert small.headers["X-Total-Count"] == "520" and "before=" in (next_link(small) or "")
    for bad in ("limit=0", "limit=501", "before=x"):
        assert (await platform.client.get(f"/api/v1/incidents?{bad}", headers=bearer(token))).status == 400
