"""The aiohttp application factory: ``create_app(settings)``.  Resources are opened and closed in ``cleanup_ctx``:
the database (migrated to the head), the service state loaded from it, the writer thread, the live-stream bus and
the timer that fires deadlines and reports feed gaps."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from proctor.accounts import LoginLimit, PasswordPool
from proctor.bus import InProcessBus
from proctor.camera import Camera
from proctor.context import CONTEXT, WEB_CONTEXT, Context
from proctor.database import create_database_engine, migrate, normalise_url
from proctor.deadlines import is_due
from proctor.errors import ConfigurationError
from proctor.forwarding import create_web_app
from proctor.microphone import MICROPHONE, Microphone
from proctor.redis_bus import RedisBus
from proctor.request_limits import RequestLimit
from proctor.service import Service
from proctor.settings import Settings
from proctor.sound_records import SOUND_RECORDS, SoundRecords
from proctor.staging import Notice
from proctor.wall_clock import now_ms
from proctor.web.forwarded import forwarded_middleware, trusted_networks
from proctor.web.routes import add_routes
from proctor.web.status import error_middleware
from proctor.writer import Writer
from proctor.writer_lease import WriterLease

log = logging.getLogger("proctor")


def create_app(settings: Settings) -> web.Application:
    """The service's app, or with ``WRITER_URLS`` a web process's in front of it (proctor.forwarding)."""
    if settings.writer_urls:
        return create_web_app(settings)
    if settings.writer_lease and not normalise_url(settings.database_url).startswith("postgresql"):
        raise ConfigurationError("WRITER_LEASE needs PostgreSQL (a SQLite file is one process's)")
    networks = trusted_networks(settings.trusted_proxies)
    app = web.Application(client_max_size=256 * 1024, middlewares=[error_middleware, forwarded_middleware(networks)])
    app.cleanup_ctx.append(_resources(settings))
    add_routes(app)
    return app


def _resources(settings: Settings) -> Any:
    async def context(app: web.Application) -> AsyncIterator[None]:
        engine = create_database_engine(settings)
        lease = WriterLease(engine) if settings.writer_lease else None
        if lease is not None:  # a standby waits here, its port closed, until the active process is gone
            await lease.acquire()
            lease.start_watch()
        await asyncio.to_thread(migrate, engine)
        service = Service(settings)
        with engine.connect() as connection:
            service.load(connection)
        bus = _bus(settings)

        def publish(notices: list[Notice]) -> None:
            bus.publish_many([(notice.kind, notice.payload) for notice in notices])

        writer = Writer(engine, service, publish)
        writer.start()
        camera = Camera(settings, service, writer)
        camera.start()
        if settings.janus_url:  # the distributed mode: the pages publish to Janus, workers analyse (issue 16)
            await camera.start_rooms()
        sounds = SoundRecords(camera)  # the microphones' findings, heard here or by the workers (issue 15)
        assert camera.ingest is not None
        microphone = Microphone(camera.ingest, Path(settings.models_dir), camera.microphone_policy,
                                sounds.on_finding, sounds.on_clip)  # the front streams' audio  # fmt: skip
        microphone.start()
        camera.streams.listening = microphone.heard  # the desk, the roster and the page show its state
        app[SOUND_RECORDS] = sounds
        app[MICROPHONE] = microphone
        passwords = PasswordPool(settings.login_hash_workers, settings.login_hash_queue)
        app[CONTEXT] = app[WEB_CONTEXT] = Context(
            settings, engine, bus, service=service, writer=writer, camera=camera, passwords=passwords,
            login_limit=LoginLimit(attempts=settings.login_attempts),
            player_requests=RequestLimit(settings.player_requests_burst, settings.player_requests_per_minute),
        )  # fmt: skip
        timer = asyncio.create_task(_timers(app[CONTEXT]))
        log.info("proctor ready: %d game(s) loaded", len(service.games))
        yield
        timer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await timer
        await microphone.close()
        await sounds.close()
        await camera.close()
        passwords.close()
        await asyncio.to_thread(writer.stop)
        if isinstance(bus, RedisBus):
            await bus.close()
        if lease is not None:
            await lease.release()
        engine.dispose()

    return context


def _bus(settings: Settings) -> InProcessBus | RedisBus:
    """The live stream's bus: in this process, or across processes through Redis (``BUS_URL``, issue 16)."""
    loop = asyncio.get_running_loop()
    if not settings.bus_url:
        return InProcessBus(loop)
    bus = RedisBus(loop, settings.bus_url)
    bus.start()
    log.info("event bus: Redis pub/sub")
    return bus


async def _timers(context: Context, period_s: float = 0.25) -> None:
    """Fire due deadlines (flag fall, reconnect window, no-show) and report feed gaps, from the stored state: after a
    restart, a deadline that passed while the server was down fires at once, at its own instant.  Escalate the pending
    verdicts past their confirmation deadline (proctor.casebook)."""
    settings = context.settings
    while True:
        server_now = now_ms()
        due_deadlines, due_gaps = [], []
        for game in list(context.service.games.values()):
            if is_due(game, settings.deadline_grace_ms, server_now):
                due_deadlines.append(game.id)
            if (
                game.gap_since_ms is not None
                and not game.gap_reported
                and server_now - game.gap_since_ms >= settings.feed_gap_timeout_s * 1000
            ):
                due_gaps.append(game.id)
        if due_deadlines or due_gaps:
            try:
                await context.writer.submit(functools.partial(_fire, context, due_deadlines, due_gaps, server_now))
            except Exception:
                log.exception("firing deadlines failed; retrying")
        if context.service.casebook.confirmation_due(server_now):
            try:
                await context.writer.submit(functools.partial(_escalate, context, server_now))
            except Exception:
                log.exception("escalating pending verdicts failed; retrying")
        await asyncio.sleep(period_s)


def _fire(
    context: Context, deadlines: list[int], gaps: list[int], server_now: int, connection: Any, batch: Any
) -> None:
    for game_id in deadlines:
        context.service.fire_deadlines(connection, batch, game_id, server_now)
    for game_id in gaps:
        context.service.report_gap(connection, batch, game_id, server_now)


def _escalate(context: Context, server_now: int, connection: Any, batch: Any) -> None:
    context.service.escalate_cases(connection, batch, server_now)
