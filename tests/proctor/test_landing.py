"""The landing page at ``/`` (issue 14: a newcomer was left in front of a raw 404): what the service is, whether it
is well, its version, the events with their time zone, the ways in; both languages; no script allowed."""

from __future__ import annotations

from importlib import metadata

import pytest

from proctor.events import load_event_file
from proctor.settings import Settings
from proctor.web.landing import render
from tests.proctor.conftest import Platformer
from tests.proctor.test_events import EXAMPLE, engine_for

pytestmark = pytest.mark.asyncio


async def test_the_landing_page_says_what_is_here_and_how_to_get_in(platform: Platformer, settings: Settings) -> None:
    response = await platform.client.get("/")
    assert response.status == 200 and response.content_type == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    page = await response.text()
    for link in ('href="/arbiter"', 'href="/review"', 'href="/api/openapi.json"', 'href="/healthz"'):
        assert link in page, link
    assert "裁判台" in page and "the arbiters' desk" in page
    assert "运行正常" in page and "Running: the database answers; 0 games." in page
    assert metadata.version("gomoku-proctor") in page
    assert "No event is loaded yet" in page and "<script" not in page
    engine = engine_for(settings.database_url)
    with engine.begin() as connection:
        spec = load_event_file(connection, EXAMPLE, now=0)
    engine.dispose()
    page = await (await platform.client.get("/")).text()
    assert spec.name in page and "No event is loaded yet" not in page
    assert "Asia/Shanghai (UTC+08:00)" in page  # the event's time zone, named


async def test_the_page_escapes_what_it_shows_and_says_when_it_cannot_store() -> None:
    events = [{"name": "<b>Open</b>", "zone": "UTC", "sections": ["A & B"]}]
    page = render(False, "the disk is full <now>", 3, events, 0)
    assert "&lt;b&gt;Open&lt;/b&gt;" in page and "A &amp; B" in page and "<b>Open" not in page
    assert "无法写入：the disk is full &lt;now&gt;" in page and "Cannot store" in page and "运行正常" not in page
