"""What the running app holds (one per app, in ``app[CONTEXT]``): no module-level state."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from sqlalchemy import Engine

from proctor.accounts import LoginLimit, PasswordPool
from proctor.bus import EventBus
from proctor.request_limits import RequestLimit
from proctor.service import Service
from proctor.settings import Settings
from proctor.web.event_streams import Revocations
from proctor.writer import Writer


@dataclass
class WebContext:
    """What every web process holds, the service's own and a web process's that forwards to it
    (proctor.forwarding): the settings, the database to read sessions from, the live stream's bus, and the
    revocations that wake its open streams."""

    settings: Settings
    engine: Engine
    bus: EventBus
    revocations: Revocations = field(default_factory=Revocations)
    """Wakes the open event streams when this process ends a session or a stream token (proctor.web.event_streams)."""


@dataclass(kw_only=True)
class Context(WebContext):
    """The service's process: the games and everything else in memory, and the one writer."""

    service: Service
    writer: Writer
    camera: Any = None
    """proctor.camera.Camera: the players' streams (None until started)."""
    platforms_refreshed: float = 0.0
    """When the platforms and their secrets were last read again (monotonic seconds)."""
    passwords: PasswordPool = field(default_factory=PasswordPool)
    """The bounded pool that checks dashboard passwords."""
    login_limit: LoginLimit = field(default_factory=LoginLimit)
    """The limit on failed dashboard logins (its state is in the database: proctor.models.LoginFailure)."""
    login_turns: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One login try counted at a time in this process (the database orders the processes)."""
    player_requests: RequestLimit = field(default_factory=RequestLimit)
    """The limit on the requests a player's page posts, per stream token (proctor.request_limits)."""


CONTEXT = web.AppKey("context", Context)
"""The service's process (absent in a web process)."""
WEB_CONTEXT = web.AppKey("web_context", WebContext)
"""Every web process: the service's own (the same object as :data:`CONTEXT`) or one that forwards to it."""
