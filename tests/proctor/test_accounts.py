"""Dashboard logins: argon2id passwords, session cookies with a CSRF token, the login limit, and the review panel's
read-only role, on the real app."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlmodel import col

from proctor.account_log import record_account
from proctor.accounts import set_password, token_hash, unlock_logins
from proctor.database import create_database_engine
from proctor.models import Arbiter, ArbiterSession
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context

PASSWORD = "correct horse battery"


def add(settings: Settings, name: str, role: str, password: str | None = PASSWORD) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(f"{name}-token")))
        record_account(connection, name, "test", "added", 0)  # as proctor arbiter add does
        if password is not None:
            set_password(connection, name, password)
    engine.dispose()


async def log_in(platform: Platformer, name: str, password: str = PASSWORD) -> Any:
    return await platform.client.post("/api/v1/session", json={"name": name, "password": password})


async def test_a_login_sets_an_httponly_strict_cookie_and_returns_the_csrf_token(
    platform: Platformer, settings: Settings
) -> None:
    add(settings, "Li", "chief")
    response = await log_in(platform, "Li")
    assert response.status == 201
    body = await response.json()
    assert (body["name"], body["role"], body["sections"]) == ("Li", "chief", []) and len(body["csrf"]) >= 24
    cookie = response.headers["Set-Cookie"]
    assert "proctor_session=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    again = await (await platform.client.get("/api/v1/session")).json()
    assert again["csrf"] == body["csrf"] and again["name"] == "Li"
    assert body["time_zone"] == again["time_zone"] == "UTC"  # no event loaded: the pages show UTC
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        stored = connection.execute(select(col(ArbiterSession.token_hash))).scalars().all()
        hashed = connection.execute(select(col(Arbiter.password_hash))).scalar_one()
    engine.dispose()
    token = platform.client.session.cookie_jar.filter_cookies(platform.client.make_url("/"))["proctor_session"].value
    assert stored == [token_hash(token)] and hashed.startswith("$argon2id$") and PASSWORD not in hashed


async def test_wrong_names_and_passwords_get_the_same_answer(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    add(settings, "Token-only", "arbiter", password=None)
    answers = [await log_in(platform, name, password) for name, password in
               [("Li", "wrong password!"), ("Nobody", PASSWORD), ("Token-only", "")]]  # fmt: skip
    assert [a.status for a in answers[:2]] == [401, 401]
    assert len({(await a.json())["message"] for a in answers[:2]}) == 1
    assert answers[2].status == 400  # an empty password is malformed, not tried
    assert (await platform.client.get("/api/v1/session")).status == 401


async def test_changes_through_the_cookie_need_the_csrf_token(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    csrf = (await (await log_in(platform, "Li")).json())["csrf"]
    body = {"kind": "setup", "summary": "camera angle", "player": "p-1"}
    forged = await platform.client.post("/api/v1/incidents", json=body)
    wrong = await platform.client.post("/api/v1/incidents", json=body, headers={"X-CSRF-Token": "guess"})
    assert (forged.status, wrong.status) == (403, 403)
    assert "CSRF" in (await forged.json())["message"]
    assert await (await platform.client.get("/api/v1/incidents")).json() == []
    made = await platform.client.post("/api/v1/incidents", json=body, headers={"X-CSRF-Token": csrf})
    assert made.status == 201
    incidents = await (await platform.client.get("/api/v1/incidents")).json()
    assert [i["kind"] for i in incidents] == ["setup"]


async def test_logging_out_ends_the_session(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    csrf = (await (await log_in(platform, "Li")).json())["csrf"]
    token = platform.client.session.cookie_jar.filter_cookies(platform.client.make_url("/"))["proctor_session"].value
    assert (await platform.client.delete("/api/v1/session")).status == 403  # no CSRF token
    assert (await platform.client.delete("/api/v1/session", headers={"X-CSRF-Token": csrf})).status == 204
    platform.client.session.cookie_jar.update_cookies({"proctor_session": token})  # an old cookie, replayed
    assert (await platform.client.get("/api/v1/session")).status == 401
    refused = await platform.client.post("/api/v1/incidents", json={"kind": "x", "summary": "y"},
                                         headers={"X-CSRF-Token": csrf})  # fmt: skip
    assert refused.status == 401


async def test_failed_logins_are_limited_per_name(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    limit = app_context(platform).settings.login_attempts
    for _ in range(limit):
        assert (await log_in(platform, "Li", "not the password")).status == 401
    blocked = await log_in(platform, "Li")  # even the right password, for now
    assert blocked.status == 429 and int(blocked.headers["Retry-After"]) > 0
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        unlock_logins(connection, "Li")  # the chief's unlock (proctor arbiter unlock)
    engine.dispose()
    assert (await log_in(platform, "Li")).status == 201


async def test_the_review_panel_reads_but_changes_nothing(platform: Platformer, settings: Settings) -> None:
    add(settings, "Panel", "reviewer")
    csrf = (await (await log_in(platform, "Panel")).json())["csrf"]
    assert (await platform.client.get("/api/v1/incidents")).status == 200
    refused = await platform.client.post("/api/v1/incidents", json={"kind": "x", "summary": "y"},
                                         headers={"X-CSRF-Token": csrf})  # fmt: skip
    assert refused.status == 403 and "reads only" in (await refused.json())["message"]
    by_token = await platform.client.post("/api/v1/incidents", json={"kind": "x", "summary": "y"},
                                          headers={"Authorization": "Bearer Panel-token"})  # fmt: skip
    assert by_token.status == 403


async def test_a_new_password_ends_the_open_sessions(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    assert (await log_in(platform, "Li")).status == 201
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        set_password(connection, "Li", "another long password")
    engine.dispose()
    assert (await platform.client.get("/api/v1/session")).status == 401
    assert (await log_in(platform, "Li")).status == 401
    assert (await log_in(platform, "Li", "another long password")).status == 201
