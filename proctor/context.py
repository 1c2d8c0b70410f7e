"""What the running app holds (one per app, in ``app[CONTEXT]``): no module-level state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from sqlalchemy import Engine

from proctor.accounts import LoginThrottle
from proctor.bus import EventBus
from proctor.service import Service
from proctor.settings import Settings
from proctor.writer import Writer


@dataclass
class Context:
    settings: Settings
    engine: Engine
    service: Service
    writer: Writer
    bus: EventBus
    camera: Any = None
    """proctor.camera.Camera: the players' streams (None until started)."""
    platforms_refreshed: float = 0.0
    """When the platforms and their secrets were last read again (monotonic seconds)."""
    logins: LoginThrottle = field(default_factory=LoginThrottle)
    """Failed dashboard logins, per name and per address."""


CONTEXT = web.AppKey("context", Context)
