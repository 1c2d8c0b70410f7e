"""Platform webhooks against the real app: signatures, delivery rules, and the service's own verdicts."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from standardwebhooks import Webhook

from proctor.cli import main as cli
from proctor.database import create_database_engine
from proctor.signatures import new_secret
from tests.proctor.conftest import T0, Platformer, app_context, iso, reader

pytestmark = pytest.mark.asyncio


async def game_state(platform: Platformer, game: str) -> dict[str, Any]:
    response = await platform.client.get(f"/api/v1/platforms/{platform.name}/games/{game}", headers=reader(platform))
    assert response.status == 200
    result: dict[str, Any] = await response.json()
    return result


async def join_both(platform: Platformer, game: str, at: int = T0 - 30_000) -> None:
    for side in ("b", "w"):
        status, _ = await platform.send("player.joined", game, {"player": f"{game}-{side}"}, at=at)
        assert status == 200


async def test_a_game_is_created_and_moves_are_applied(platform: Platformer) -> None:
    status, body = await platform.create("g1")
    assert (status, body["status"]) == (200, "created")
    await join_both(platform, "g1")
    for index, point in enumerate(["h8", "h9", "i8", "i9", "j8", "j9", "k8", "k9", "l8"], start=1):
        status, body = await platform.send("move", "g1", {"point": point}, at=T0 + index * 5_000)
        assert (status, body["status"]) == (200, "applied")
    state = await game_state(platform, "g1")
    assert state["result"]["winner"] == "black" and state["result"]["reason"] == "five"
    assert state["result"]["article"] == "19.1.2 C"
    assert state["moves"][-1] == "l8" and state["status"] == "over"


async def test_the_standardwebhooks_library_signs_deliveries_we_accept(platform: Platformer) -> None:
    data = {"black": {"id": "a"}, "white": {"id": "b"}, "start_at": iso(T0), "time_control": "blitz-3+2"}
    body = platform.body("game.created", "lib", data)
    signature = Webhook(platform.secret).sign("msg_lib", datetime.now(tz=UTC), body.decode())
    headers = {"webhook-id": "msg_lib", "webhook-timestamp": str(int(time.time())), "webhook-signature": signature}
    response = await platform.client.post(f"/api/v1/webhooks/{platform.name}", data=body, headers=headers)
    assert response.status == 200


@pytest.mark.parametrize(
    ("mangle", "status", "code"),
    [
        ("wrong-secret", 401, "unauthorized"),
        ("stale", 400, "stale"),
        ("future", 400, "stale"),
        ("unsigned", 401, "unauthorized"),
    ],
)
async def test_bad_signatures_are_refused_and_change_nothing(
    platform: Platformer, mangle: str, status: int, code: str
) -> None:
    await platform.create("g2")
    body = platform.body("player.joined", "g2", {"player": "g2-b"})
    if mangle == "unsigned":
        response = await platform.client.post(f"/api/v1/webhooks/{platform.name}", data=body)
        got, answer = response.status, await response.json()
    else:
        secret = new_secret() if mangle == "wrong-secret" else None
        offset = {"stale": -600, "future": 600}.get(mangle, 0)
        got, answer = await platform.post(body, secret=secret, timestamp=int(time.time()) + offset)
    assert (got, answer["error"]) == (status, code)
    state = await game_state(platform, "g2")
    assert state["feed"]["last_seq"] == 1


async def test_malformed_bodies_get_a_400_that_says_what_is_wrong(platform: Platformer) -> None:
    await platform.create("g3")
    cases = [
        (b"not json", "not JSON"),
        (b'{"type": "move", "game_id": "g3", "seq": 2, "at": "2026-01-01T00:00:00Z"}', "'data.point'"),
        (b'{"type": "teleport", "game_id": "g3", "seq": 2, "at": "2026-01-01T00:00:00Z"}', "'type' must be"),
        (b'{"type": "move", "game_id": "g3", "seq": 0, "at": "2026-01-01T00:00Z", "data": {"point": "h8"}}', "'seq'"),
        (b'{"type": "move", "game_id": "g3", "seq": 2, "at": "yesterday", "data": {"point": "h8"}}', "RFC 3339"),
        (b'{"type": "move", "game_id": "g3", "seq": 2, "at": "2026-01-01T00:00:00Z", "data": {"point": "z9"}}', "'z9'"),
    ]
    for body, message in cases:
        status, answer = await platform.post(body)
        assert status == 400, body
        assert message in answer["message"], (body, answer)
    assert (await game_state(platform, "g3"))["feed"]["last_seq"] == 1


async def test_unknown_game_and_platform_are_404(platform: Platformer) -> None:
    status, answer = await platform.send("move", "nope", {"point": "h8"})
    assert (status, answer["error"]) == (404, "not-found")
    response = await platform.client.post("/api/v1/webhooks/other", data=b"{}")
    assert response.status == 404


async def test_the_same_webhook_id_is_acknowledged_once_applied_once(platform: Platformer) -> None:
    await platform.create("g4")
    body = platform.body("player.joined", "g4", {"player": "g4-b"})
    first = await platform.post(body, webhook_id="msg_same")
    again = await platform.post(body, webhook_id="msg_same")
    assert first[1]["status"] == "applied" and again[1]["status"] == "duplicate"
    other_id = await platform.post(body, webhook_id="msg_other")  # a retry under a new id: same seq, same body
    assert other_id[1]["status"] == "duplicate"
    conflicting = platform.body("player.joined", "g4", {"player": "g4-w"}, seq=2)
    status, answer = await platform.post(conflicting)
    assert (status, answer["error"]) == (409, "conflict")
    state = await game_state(platform, "g4")
    assert state["feed"]["last_seq"] == 2


async def test_out_of_order_events_are_held_until_the_gap_fills(platform: Platformer) -> None:
    await platform.create("g5")
    b2 = platform.body("player.joined", "g5", {"player": "g5-b"}, seq=2, at=T0 - 20_000)
    b3 = platform.body("player.joined", "g5", {"player": "g5-w"}, seq=3, at=T0 - 10_000)
    b4 = platform.body("move", "g5", {"point": "h8"}, seq=4, at=T0 + 3_000)
    assert (await platform.post(b4))[0] == 202
    assert (await platform.post(b3))[0] == 202
    state = await game_state(platform, "g5")
    assert state["feed"] == {"last_seq": 1, "held": [3, 4], "events_applied": 0}
    status, answer = await platform.post(b2)
    assert (status, answer["status"]) == (200, "applied")
    state = await game_state(platform, "g5")
    assert state["feed"] == {"last_seq": 4, "held": [], "events_applied": 3} and state["moves"] == ["h8"]


async def test_a_gap_that_stays_open_raises_a_feed_gap_incident(platform: Platformer) -> None:
    await platform.create("g6")
    await platform.post(platform.body("player.joined", "g6", {"player": "g6-w"}, seq=3))
    for _ in range(40):
        await asyncio.sleep(0.1)
        incidents = (await game_state(platform, "g6"))["incidents"]
        if incidents:
            break
    assert [i["kind"] for i in incidents] == ["feed-gap"]
    assert "seq 2" in incidents[0]["summary"]


async def test_an_illegal_move_the_platform_accepted_is_an_incident_not_applied(platform: Platformer) -> None:
    await platform.create("g7")
    await join_both(platform, "g7")
    await platform.send("move", "g7", {"point": "h8"}, at=T0 + 1_000)
    status, answer = await platform.send("move", "g7", {"point": "h8"}, at=T0 + 2_000)
    assert (status, answer["status"]) == (200, "refused")
    state = await game_state(platform, "g7")
    assert state["moves"] == ["h8"]
    (incident,) = state["incidents"]
    assert incident["kind"] == "platform-disagreement" and incident["article"] == "6.1"


async def test_the_service_rules_a_forbidden_move_and_flags_a_different_platform_claim(platform: Platformer) -> None:
    await platform.create("g8")
    await join_both(platform, "g8")
    moves = ["h8", "o15", "h9", "o13", "i10", "o11", "j10", "o9", "h10"]
    for index, point in enumerate(moves, start=1):
        await platform.send("move", "g8", {"point": point}, at=T0 + index * 1_000)
    status, _ = await platform.send("game.ended", "g8", {"result": "black", "reason": "five"}, at=T0 + 20_000)
    assert status == 200
    state = await game_state(platform, "g8")
    assert state["result"] == {"winner": "white", "reason": "forbidden-33", "article": "8.1, 19.1.2, 35.1",
                               "double_loss": False, "at": T0 + 9_000}  # fmt: skip
    assert [i["kind"] for i in state["incidents"]] == ["result-mismatch"]


async def test_clock_readings_beyond_the_tolerance_raise_an_incident(platform: Platformer) -> None:
    await platform.create("g9", time_control="rapid-15")
    await join_both(platform, "g9")
    await platform.send("move", "g9", {"point": "h8", "clock_ms": 15 * 60_000 - 10_000}, at=T0 + 10_000)
    await platform.send("move", "g9", {"point": "h9", "clock_ms": 15 * 60_000 - 60_000}, at=T0 + 20_000)
    state = await game_state(platform, "g9")
    assert [i["kind"] for i in state["incidents"]] == ["clock-mismatch"]
    assert "-50000 ms" in state["incidents"][0]["summary"]


async def test_the_server_rules_a_flag_fall_from_its_own_timer(platform: Platformer) -> None:
    now = int(time.time() * 1000)
    await platform.create("g10", time_control={"initial_s": 1, "increment_s": 0}, start=now - 5_000)
    await join_both(platform, "g10", at=now - 10_000)
    for _ in range(40):
        state = await game_state(platform, "g10")
        if state["result"]:
            break
        await asyncio.sleep(0.1)
    assert state["result"]["reason"] == "time-forfeit" and state["result"]["winner"] == "white"
    assert state["result"]["at"] == now - 5_000 + 1_000  # the exact instant, not the timer's tick


async def test_a_game_created_after_its_start_waits_for_the_arrivals_before_a_no_show(platform: Platformer) -> None:
    """A platform that posts ``game.created`` after the start, then the arrivals: the timer (which ticks in between,
    with no grace in the tests) does not rule a no-show before the service has known the game for
    NEW_GAME_SETTLE_MS; a player who does not come loses by no-show at the start's own instant (14.3)."""
    now = int(time.time() * 1000)
    await platform.create("late", start=now - 10_000)
    await asyncio.sleep(1.0)  # four ticks of the timer
    await join_both(platform, "late", at=now - 30_000)
    await platform.create("late-absent", start=now - 10_000)
    await platform.send("player.joined", "late-absent", {"player": "late-absent-b"}, at=now - 30_000)
    for _ in range(40):
        absent = await game_state(platform, "late-absent")
        if absent["result"]:
            break
        await asyncio.sleep(0.1)
    assert (await game_state(platform, "late"))["result"] is None
    assert (absent["result"]["reason"], absent["result"]["winner"]) == ("no-show", "black")
    assert absent["result"]["at"] == now - 10_000  # the start's instant, not when it was ruled


async def test_healthz_and_listings(platform: Platformer) -> None:
    await platform.create("g11")
    response = await platform.client.get("/healthz")
    assert response.status == 200 and (await response.json())["status"] == "ok"
    response = await platform.client.get("/api/v1/games?status=scheduled")
    assert [g["platform_game_id"] for g in await response.json()] == ["g11"]
    response = await platform.client.get("/api/v1/games?status=bogus")
    assert response.status == 400
    assert app_context(platform).writer.jobs >= 1


async def test_secrets_rotate_while_the_server_runs(platform: Platformer, settings: Any) -> None:
    await platform.create("rot")
    new = new_secret()
    assert cli(["platform", "add", platform.name, "--secret", new, "--db", settings.database_url]) == 0
    await asyncio.sleep(1.1)  # the server looks again at most once a second
    status, _ = await platform.post(platform.body("player.joined", "rot", {"player": "rot-b"}), secret=new)
    assert status == 200  # the new secret works without a restart; the old one still does during the rotation
    status, _ = await platform.send("player.joined", "rot", {"player": "rot-w"})
    assert status == 200
    assert cli(["platform", "revoke", platform.name, platform.secret, "--db", settings.database_url]) == 0
    with engine_connect(settings) as connection:
        platform_context = app_context(platform)
        platform_context.service.reload_platforms(connection)
    status, answer = await platform.send("player.disconnected", "rot", {"player": "rot-w"})
    assert (status, answer["error"]) == (401, "unauthorized")


def engine_connect(settings: Any) -> Any:
    return create_database_engine(settings).connect()
