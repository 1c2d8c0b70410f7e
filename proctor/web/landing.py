"""The landing page at ``/``: what this service is, whether it is well (the database answers, the writer stores),
its version, the events loaded with their time zone, and the ways in (the arbiters' desk, the review panel, the API
document), in Chinese and English side by side.  No script: its Content-Security-Policy allows none."""

from __future__ import annotations

import html
from importlib import metadata
from typing import Any, Final

from aiohttp import web
from sqlalchemy import select
from sqlmodel import col

from proctor.models import Section, Tournament
from proctor.time_zones import config_zone, zone_label
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of
from proctor.web.openapi import Route
from proctor.web.reads import read

POLICY: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STYLE: Final = (
    "body{font:16px/1.5 system-ui,'Noto Sans CJK SC','WenQuanYi Micro Hei',sans-serif;margin:2rem auto;max-width:46rem;"
    "padding:0 1rem;color:#1b1b1b}h1{font-size:1.5rem;margin:0 0 .2rem}h2{font-size:1.1rem;margin:1.6rem 0 .4rem}"
    ".en{color:#555}.ok{color:#0a6b2d}.bad{color:#b00020}ul{padding-left:1.2rem}li{margin:.3rem 0}"
    "code{background:#f2f2f2;padding:0 .25rem;border-radius:3px}footer{margin-top:2rem;color:#666;font-size:.85rem}"
)


def version() -> str:
    try:
        return metadata.version("gomoku-proctor")
    except metadata.PackageNotFoundError:  # run from a checkout that was not installed
        return "unknown"


def _events(connection: Any) -> list[dict[str, Any]]:
    events = connection.execute(
        select(col(Tournament.id), col(Tournament.name), col(Tournament.config)).order_by(col(Tournament.id))
    ).all()
    sections = connection.execute(select(col(Section.tournament_id), col(Section.name)).order_by(col(Section.id)))
    names: dict[int, list[str]] = {}
    for tournament_id, name in sections:
        names.setdefault(tournament_id, []).append(name)
    return [{"name": e.name, "zone": config_zone(e.config), "sections": names.get(e.id, [])} for e in events]


def render(healthy: bool, failure: str | None, games: int, events: list[dict[str, Any]], at_ms: int) -> str:
    """The page, every value escaped."""
    e = html.escape
    if healthy:
        state = (f'<p class="ok">运行正常：数据库可用，共 {games} 盘对局。 '
                 f'<span class="en">Running: the database answers; {games} games.</span></p>')  # fmt: skip
    else:
        state = (f'<p class="bad">无法写入：{e(failure or "")} '
                 f'<span class="en">Cannot store: {e(failure or "")}</span></p>')  # fmt: skip
    if events:
        items = "".join(
            f'<li>{e(ev["name"])}（{e("、".join(ev["sections"]))}）· 时区 <span class="en">time zone</span> '
            f"{e(zone_label(ev['zone'], at_ms))}</li>"
            for ev in events
        )
        listed = f"<ul>{items}</ul>"
    else:
        listed = ('<p>尚未载入赛事：<code>proctor event load 文件.toml</code> '
                  '<span class="en">No event is loaded yet: <code>proctor event load FILE.toml</code>'
                  " (docs/events.md)</span></p>")  # fmt: skip
    return f"""<!doctype html>
<html lang="zh-CN">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>五子棋网络比赛监考与裁判 · Gomoku online proctoring</title><style>{STYLE}</style></head>
<body>
<h1>五子棋网络比赛监考与裁判服务</h1>
<p class="en" lang="en">Proctoring and adjudication for online Gomoku and Renju competitions (Chinese Gomoku
Competition Rules, chapter 7: online play)</p>
{state}
<h2>入口 <span class="en" lang="en">Ways in</span></h2>
<ul>
<li><a href="/arbiter">裁判台</a> <span class="en" lang="en">· the arbiters' desk: the live round, cases,
cameras</span></li>
<li><a href="/review">赛后审查</a> <span class="en" lang="en">· the review panel: timelines, evidence, audit,
appeals, standings</span></li>
<li><a href="/api/openapi.json">接口文档（OpenAPI）</a> <span class="en" lang="en">· the API document</span></li>
<li><a href="/healthz">健康检查</a> <span class="en" lang="en">· the health check (JSON)</span></li>
</ul>
<p>棋手通过裁判发放的个人链接进入摄像头页面。 <span class="en" lang="en">Players open their camera page from the
personal link the arbiters issue (the camera roster on the desk).</span></p>
<h2>赛事 <span class="en" lang="en">Events</span></h2>
{listed}
<footer>版本 <span lang="en">version</span> {e(version())} · 文档见源代码中的 README.md 与 docs/
<span class="en" lang="en">· documentation: README.md and docs/ in the source</span></footer>
</body>
</html>
"""


async def landing_page(request: web.Request) -> web.Response:
    context = context_of(request)
    events = await read(context, _events)
    failure = context.writer.last_failure
    text = render(failure is None, failure, len(context.service.games), events, now_ms())
    headers = {"Content-Security-Policy": POLICY, "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


ROUTES: Final = (
    Route("GET", "/", landing_page, "The landing page: the service's state and version, the events, the ways in",
          {"200": "the page"}),
)  # fmt: skip
