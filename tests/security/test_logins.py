"""Dashboard logins under attack (items 2, 6, 8 and 9 of issue 12): the limit counted before the password is hashed,
per name and address together, slowing down before it refuses, with the tries left said in both languages; its state
in the database (seen by every process, cleared by `proctor unlock`); passwords hashed in a small bounded pool; and
every role, the review panel's too, able to log out."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import update
from sqlmodel import col

from proctor.app import create_app
from proctor.cli import main as cli_main
from proctor.database import create_database_engine
from proctor.models import LoginFailure
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_accounts import PASSWORD, add, log_in


async def test_the_review_panel_can_log_out(platform: Platformer, settings: Settings) -> None:
    add(settings, "Panel", "reviewer")
    csrf = (await (await log_in(platform, "Panel")).json())["csrf"]
    assert (await platform.client.delete("/api/v1/session")).status == 403  # the CSRF token is still needed
    assert (await platform.client.delete("/api/v1/session", headers={"X-CSRF-Token": csrf})).status == 204
    assert (await platform.client.get("/api/v1/session")).status == 401


@web.middleware
async def from_address(request: web.Request, handler: Any) -> web.StreamResponse:
    """The test's stand-in for other machines: the client address an ``X-Test-Address`` header names."""
    address = request.headers.get("X-Test-Address")
    response: web.StreamResponse = await handler(request.clone(remote=address) if address else request)
    return response


async def desk(settings: Settings, aiohttp_client: Any, **changes: Any) -> TestClient[Any, Any]:
    """The real app (one process of the service) with client addresses set by the test."""
    app = create_app(replace(settings, **changes))
    app.middlewares.insert(0, from_address)
    client: TestClient[Any, Any] = await aiohttp_client(app)
    return client


async def try_login(client: TestClient[Any, Any], name: str, password: str, address: str = "10.0.0.1") -> Any:
    return await client.post("/api/v1/session", json={"name": name, "password": password},
                             headers={"X-Test-Address": address})  # fmt: skip


async def test_parallel_wrong_logins_are_counted_before_the_password_is_checked(
    settings: Settings, aiohttp_client: Any
) -> None:
    client = await desk(settings, aiohttp_client, login_hash_queue=100)
    add(settings, "Chief", "chief")
    answers = await asyncio.gather(*(try_login(client, "Chief", "not the password") for _ in range(40)))
    statuses = sorted(answer.status for answer in answers)
    assert statuses == [401] * 5 + [429] * 35
    assert all(int(a.headers["Retry-After"]) >= 1 for a in answers if a.status == 429)


async def test_another_address_cannot_lock_the_chief_out(settings: Settings, aiohttp_client: Any) -> None:
    client = await desk(settings, aiohttp_client)
    add(settings, "Chief", "chief")
    for _ in range(5):
        assert (await try_login(client, "Chief", "guess", "203.0.113.9")).status == 401
    assert (await try_login(client, "Chief", "guess", "203.0.113.9")).status == 429
    assert (await try_login(client, "CHIEF", "guess", "203.0.113.9")).status == 429  # one name, any case
    assert (await try_login(client, "Chief", PASSWORD, "10.0.0.1")).status == 201  # the real chief, at the desk


async def test_a_failure_says_the_tries_left_then_each_try_waits_longer(
    settings: Settings, aiohttp_client: Any
) -> None:
    client = await desk(settings, aiohttp_client)
    add(settings, "Li", "arbiter")
    bodies = [await (await try_login(client, "Li", "guess")).json() for _ in range(5)]
    assert [body["tries_left"] for body in bodies] == [4, 3, 2, 1, 0] and bodies[-1]["next_try_after_s"] == 1
    refused = await try_login(client, "Li", "guess")
    assert refused.status == 429 and refused.headers["Retry-After"] == "1"
    assert (await refused.json())["error"] == "too-many-logins"
    backdate(settings, 1_500)  # the second has passed: one more try, then two seconds
    assert (await try_login(client, "Li", "guess")).status == 401
    again = await try_login(client, "Li", "guess")
    assert again.status == 429 and again.headers["Retry-After"] == "2"
    backdate(settings, 2_500)
    assert (await try_login(client, "Li", PASSWORD)).status == 201  # slowed, never locked
    assert (await (await try_login(client, "Li", "guess")).json())["tries_left"] == 4  # a success starts again


def backdate(settings: Settings, ms: int) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(update(LoginFailure).values(at_ms=col(LoginFailure.at_ms) - ms))
    engine.dispose()


async def test_the_limit_is_in_the_database_for_every_process_and_the_chief_can_unlock(
    settings: Settings, aiohttp_client: Any
) -> None:
    first = await desk(settings, aiohttp_client)
    second = await desk(settings, aiohttp_client)  # another process on the same database
    add(settings, "Chief", "chief")
    for _ in range(5):
        assert (await try_login(first, "Chief", "guess")).status == 401
    assert (await try_login(second, "Chief", PASSWORD)).status == 429
    assert cli_main(["arbiter", "unlock", "chief", "--db", settings.database_url]) == 0
    assert (await try_login(second, "Chief", PASSWORD)).status == 201


async def test_a_login_flood_is_refused_beyond_the_password_pool(settings: Settings, aiohttp_client: Any) -> None:
    client = await desk(settings, aiohttp_client, login_hash_workers=1, login_hash_queue=1)
    answers = await asyncio.gather(*(try_login(client, f"name-{n}", "guess", f"10.1.0.{n}") for n in range(30)))
    busy = [a for a in answers if a.status == 429]
    assert {a.status for a in answers} <= {401, 429} and len(busy) >= 20
    assert all(a.headers["Retry-After"] == "1" for a in busy)
    assert {(await a.json())["error"] for a in busy} == {"busy"}
    assert (await client.get("/healthz")).status == 200


@pytest.mark.parametrize("page", ["arbiter.html", "review.html"])
def test_the_login_pages_say_the_tries_left_in_both_languages(page: str) -> None:
    dashboard = Path(__file__).parent.parent.parent / "dashboard"
    text = (dashboard / page).read_text(encoding="utf-8")
    assert 'from "/assets/session.js"' in text and "SESSION_WORDS" in text  # the login's words, shared by both
    words = (dashboard / "js" / "session.js").read_text(encoding="utf-8")
    for key, chinese in [("login.tries-left", "还可再试"), ("login.slowed", "秒后再试"), ("login.busy", "同时登录")]:
        assert words.count(f'"{key}": ') == 2 and chinese in words, key
