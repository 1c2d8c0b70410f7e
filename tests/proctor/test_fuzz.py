"""Hostile deliveries against a real server on loopback: fuzzed bodies, duplicates, reordering, tampered
signatures and stale timestamps never produce a 5xx, never apply an event twice, and never change state when
refused (hypothesis)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from proctor.signatures import signed_headers
from tests.proctor.conftest import database_urls, fresh_postgres_database, iso, register_platform
from tests.proctor.test_crash import free_port, start_server

GAME = "fuzz-game"
"""The target of the fuzzed bodies (which may leave events held for it)."""
ORDERLY = "orderly-game"
"""The target of the tampering and reordering tests."""


class Client:
    def __init__(self, port: int, secret: str) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.secret = secret
        self.counter = 0

    def post(
        self,
        body: bytes,
        *,
        webhook_id: str | None = None,
        secret: str | None = None,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        self.counter += 1
        webhook_id = webhook_id or f"fuzz-{self.counter}-{time.time_ns()}"
        if headers is None:
            headers = signed_headers(secret or self.secret, webhook_id, timestamp or int(time.time()), body)
        sent = headers
        request = urllib.request.Request(f"{self.base}/api/v1/webhooks/tourney", data=body, headers=sent, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def game(self, name: str = GAME) -> Any:
        """The full game view (the review panel's: feed state and incidents too)."""
        request = urllib.request.Request(f"{self.base}/api/v1/platforms/tourney/games/{name}",
                                         headers={"Authorization": "Bearer fuzz-reader"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            data = json.loads(response.read())
        data.pop("clocks", None)  # running clocks move with time; everything else must stand still
        data.pop("next_deadline_ms", None)
        return data


@pytest.fixture(scope="module", params=database_urls())
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'fuzz.db'}"
    else:
        url = fresh_postgres_database("fuzz")
    secret = register_platform(url)
    engine = create_database_engine(Settings(database_url=url))
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Reader", role="reviewer", token_hash=token_hash("fuzz-reader")))
    engine.dispose()
    port = free_port()
    server = start_server(url, port, log=Path("/tmp/fuzz-server.log"))
    client = Client(port, secret)
    start = int(time.time() * 1000) + 3_600_000
    for name in (GAME, ORDERLY):
        created = {
            "type": "game.created",
            "game_id": name,
            "seq": 1,
            "at": iso(start - 60_000),
            "data": {"black": {"id": "b"}, "white": {"id": "w"}, "time_control": "rapid-15", "start_at": iso(start)},
        }
        assert client.post(json.dumps(created).encode())[0] == 200
    yield client
    server.terminate()
    server.wait(timeout=20)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)

TYPES = [
    "game.created",
    "player.joined",
    "move",
    "opening.swap",
    "opening.candidates",
    "opening.choice",
    "draw.offered",
    "resign",
    "game.ended",
    "teleport",
    "",
    5,
]


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Near-valid bodies with one or more fields broken, and sometimes plain garbage."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    body: dict[str, Any] = {
        "type": draw(st.sampled_from(TYPES)),
        "game_id": draw(st.sampled_from([GAME, "other-game", "", 7, None])),
        "seq": draw(st.one_of(st.integers(-3, 10**12), st.sampled_from(["2", None, 1.5, True]))),
        "at": draw(st.sampled_from([iso(int(time.time() * 1000)), "2026-13-45T99:00:00Z", "now", 17, None])),
        "data": draw(
            st.one_of(
                json_values,
                st.fixed_dictionaries({"point": st.text(max_size=4)}),
                st.fixed_dictionaries({"player": st.sampled_from(["b", "w", "x", 3])}),
            )
        ),
    }
    for key in draw(st.lists(st.sampled_from(list(body)), max_size=2)):
        body.pop(key, None)
    return json.dumps(body).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies())
def test_fuzzed_bodies_never_5xx_and_refusals_change_nothing(client: Client, body: bytes) -> None:
    before = client.game()
    status, answer = client.post(body)
    assert status < 500, (status, answer, body)
    if status >= 400:
        assert isinstance(answer, dict) and answer["error"] and answer["message"]
        assert client.game() == before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mangle=st.sampled_from(["tamper-body", "tamper-signature", "stale", "future", "drop-header", "bad-timestamp"]),
    player=st.sampled_from(["b", "w"]),
)
def test_tampered_and_stale_deliveries_are_refused(client: Client, mangle: str, player: str) -> None:
    before = client.game(ORDERLY)
    body = json.dumps(
        {
            "type": "player.disconnected",
            "game_id": ORDERLY,
            "seq": before["feed"]["last_seq"] + 1,
            "at": iso(int(time.time() * 1000)),
            "data": {"player": player},
        }
    ).encode()
    headers = signed_headers(client.secret, f"t-{time.time_ns()}", int(time.time()), body)
    if mangle == "tamper-body":
        body = body.replace(b"disconnected", b"reconnected")
    elif mangle == "tamper-signature":
        headers["webhook-signature"] = "v1," + "A" * 43 + "="
    elif mangle in ("stale", "future"):
        moved = int(time.time()) + (-301 if mangle == "stale" else 301)
        headers = signed_headers(client.secret, f"t-{time.time_ns()}", moved, body)
    elif mangle == "drop-header":
        del headers["webhook-id"]
    else:
        headers["webhook-timestamp"] = "soon"
    status, answer = client.post(body, headers=headers)
    assert status in (400, 401), answer
    assert client.game(ORDERLY) == before


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(4)), repeats=st.lists(st.integers(0, 3), max_size=4))
def test_duplicates_and_reordering_apply_each_event_once(client: Client, order: list[int], repeats: list[int]) -> None:
    before = client.game(ORDERLY)["feed"]
    start_seq = before["last_seq"] + 1
    now = int(time.time() * 1000)
    events = [
        json.dumps(
            {
                "type": "player.disconnected" if i % 2 == 0 else "player.reconnected",
                "game_id": ORDERLY,
                "seq": start_seq + i,
                "at": iso(now + i),
                "data": {"player": "w"},
            }
        ).encode()
        for i in range(4)
    ]
    ids = [f"dup-{start_seq}-{i}" for i in range(4)]
    for index in [*order, *repeats]:
        status, _ = client.post(events[index], webhook_id=ids[index])
        assert status in (200, 202)
    after = client.game(ORDERLY)["feed"]
    assert (after["last_seq"], after["held"]) == (start_seq + 3, [])
    assert after["events_applied"] == before["events_applied"] + 4  # each once, whatever the order and repeats


pytestmark = pytest.mark.slow
