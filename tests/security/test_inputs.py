"""Hostile input (items 11 and 17 of issue 12): numbers beyond what the database or the engine can hold, media
names that are no file names, and JSON nested deeper than Python's parser goes, each refused with a 4xx that names
the field, never a 500."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from proctor.settings import Settings
from tests.proctor.conftest import Platformer, iso
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game

pytestmark = pytest.mark.asyncio

HUGE = (10**30, 2**63, 10**23, 2**31)
"""Integers past SQLite's 64 bits, PostgreSQL's bigint and its integer (ids, seq, round and board are integers)."""


async def answer(response: Any) -> tuple[int, dict[str, Any]]:
    body = await response.json()
    return response.status, body


@pytest.mark.parametrize("seq", HUGE)
async def test_a_webhook_seq_beyond_an_integer_is_a_400_naming_seq(platform: Platformer, seq: int) -> None:
    await platform.create("g1")
    status, body = await platform.send("move", "g1", {"point": "h8"}, seq=seq)
    assert status == 400 and "'seq'" in body["message"]


@pytest.mark.parametrize(
    ("field", "data"),
    [
        ("initial_s", {"time_control": {"initial_s": 1e308}}),
        ("initial_s", {"time_control": {"initial_s": 10**30}}),
        ("increment_s", {"time_control": {"initial_s": 600, "increment_s": 1e308}}),
        ("round", {"round": 10**23}),
        ("board", {"board": 2**63}),
    ],
)
async def test_a_game_created_with_numbers_out_of_range_is_a_400_naming_the_field(
    platform: Platformer, field: str, data: dict[str, Any]
) -> None:
    start = int(time.time() * 1000)
    body = {"black": {"id": "b", "name": "B"}, "white": {"id": "w", "name": "W"}, "rule": "renju",
            "time_control": "rapid-15", "start_at": iso(start), **data}  # fmt: skip
    status, answer_body = await platform.send("game.created", "g1", body)
    assert status == 400 and field in answer_body["message"]


@pytest.mark.parametrize(
    ("field", "kind", "data"),
    [
        ("clock_ms", "move", {"point": "h8", "clock_ms": 10**20}),
        ("count", "opening.declare", {"count": 10**20}),
    ],
)
async def test_feed_data_out_of_range_is_a_400_naming_the_field(
    platform: Platformer, field: str, kind: str, data: dict[str, Any]
) -> None:
    await started_game(platform, "g1")
    status, body = await platform.send(kind, "g1", data)
    assert status == 400 and field in body["message"]


@pytest.mark.parametrize(("field", "value"), [("delta_ms", 10**20), ("delta_ms", -(2**63)), ("add_ms", 10**20)])
async def test_a_time_adjustment_out_of_range_is_a_400_naming_the_field(
    platform: Platformer, settings: Settings, field: str, value: int
) -> None:
    token = add_arbiter(settings, "Chief", "chief")
    game = await started_game(platform, "g1")
    action = {"action": "adjust", "player": "g1-b"} if field == "delta_ms" else {"action": "overrule"}
    response = await platform.client.post(f"/api/v1/games/{game}/actions", json={**action, field: value,
                                          "reason": "test"}, headers=bearer(token))  # fmt: skip
    status, body = await answer(response)
    assert status == 400 and field in body["message"]


@pytest.mark.parametrize("value", HUGE)
async def test_ids_beyond_an_integer_in_a_body_are_a_400_naming_the_field(
    platform: Platformer, settings: Settings, value: int
) -> None:
    token = add_arbiter(settings, "Chief", "chief")
    await started_game(platform, "g1")
    posts = [
        ("/api/v1/incidents", {"game": value, "kind": "x", "summary": "y"}, "game"),
        ("/api/v1/appeals", {"game": value, "grounds": "g", "filed_by": {"name": "n", "capacity": "coach", "team": "t"},
                             "deposit": {"amount": 100, "currency": "CNY"}}, "game"),
        ("/api/v1/appeals", {"incident": value, "grounds": "g", "deposit": {"amount": 100, "currency": "CNY"},
                             "filed_by": {"name": "n", "capacity": "coach", "team": "t"}}, "incident"),
        ("/api/v1/players/g1-b/camera/messages", {"text": "hello", "incident": value}, "incident"),
        ("/api/v1/events/e/sections/s/results", {"round": value, "board": 1, "result": "1-0"}, "round"),
    ]  # fmt: skip
    for path, body, field in posts:
        status, answer_body = await answer(await platform.client.post(path, json=body, headers=bearer(token)))
        assert status == 400 and field in answer_body["message"], (path, status, answer_body)


@pytest.mark.parametrize("value", HUGE)
async def test_ids_beyond_an_integer_in_a_query_or_path_are_refused(
    platform: Platformer, settings: Settings, value: int
) -> None:
    token = add_arbiter(settings, "Chief", "chief")
    for path, field in [("/api/v1/incidents?game={}", "game"), ("/api/v1/incidents?since={}", "since"),
                        ("/api/v1/incidents?until={}", "until"), ("/api/v1/appeals?game={}", "game"),
                        ("/api/v1/reports/incidents.html?game={}", "game"),
                        ("/api/v1/events/e/sections/s/standings?round={}", "round")]:  # fmt: skip
        if field in ("since", "until") and value < 2**63:
            continue  # a time in milliseconds: a bigint holds it
        status, body = await answer(await platform.client.get(path.format(value), headers=bearer(token)))
        assert status == 400 and field in body["message"], (path, status, body)
    for path in ("/api/v1/games/{}/timeline", "/api/v1/games/{}/record.rif", "/api/v1/appeals/{}"):
        status, body = await answer(await platform.client.get(path.format(value), headers=bearer(token)))
        assert status == 404, (path, status, body)
    for path, body in [("/api/v1/games/{}/actions", {"action": "pause"}),
                       ("/api/v1/incidents/{}/actions", {"action": "note"}),
                       ("/api/v1/appeals/{}/votes", {"vote": "uphold"})]:  # fmt: skip
        status, answer_body = await answer(
            await platform.client.post(path.format(value), json=body, headers=bearer(token))
        )
        assert status == 404, (path, status, answer_body)


@pytest.mark.parametrize("name", ["%00.jpg", "a%00b.jpg", "x" * 5000 + ".jpg", "/".join(["d" * 250] * 30) + ".jpg"])
async def test_media_names_that_are_no_file_names_are_a_4xx(
    platform: Platformer, settings: Settings, name: str
) -> None:
    token = add_arbiter(settings, "Chief", "chief")
    response = await platform.client.get(f"/api/v1/media?name={name}", headers=bearer(token))
    assert response.status in (400, 404) and (await response.json())["error"] in ("bad-request", "not-found")


async def test_json_nested_too_deep_is_a_400(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Chief", "chief")
    deep = "[" * 100_000 + "]" * 100_000
    for path in ("/api/v1/incidents", "/api/v1/session", "/api/v1/rtc/offer"):
        response = await platform.client.post(path, data=deep, headers={**bearer(token),
                                              "Content-Type": "application/json"})  # fmt: skip
        assert response.status == 400, path
    body = json.dumps({"type": "move", "game_id": "g", "seq": 1, "at": iso(0), "data": {}})
    nested = body[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    status, answer_body = await platform.post(nested.encode())
    assert status == 400 and answer_body["error"] == "bad-request"
