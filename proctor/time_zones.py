"""The event's time zone: one IANA zone (``[event] time_zone`` in the event file, UTC by default) in which every page
and report shows times, and names it ("Asia/Shanghai (UTC+08:00)"); times are 24-hour.

Times are stored and sent as milliseconds since 1970 (UTC); only their display uses the zone.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Connection, select
from sqlmodel import col

from proctor.models import Tournament

DEFAULT_ZONE: Final = "UTC"


def find_zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` (``Asia/Shanghai``); ValueError for a name that is not one."""
    if not name or name.startswith(("/", ".")) or ".." in name:
        raise ValueError(f"{name!r} is not an IANA time zone")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Asia/Shanghai, Europe/Berlin, UTC)") from None


def offset_text(zone: ZoneInfo, at_ms: int) -> str:
    """``UTC+08:00``: the zone's offset at that instant."""
    offset = datetime.fromtimestamp(at_ms / 1000, zone).utcoffset()
    minutes = 0 if offset is None else int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def zone_label(name: str, at_ms: int) -> str:
    """``Asia/Shanghai (UTC+08:00)``."""
    return f"{name} ({offset_text(find_zone(name), at_ms)})"


def local_time(ms: int, name: str) -> str:
    """``2026-01-01 08:00:05`` in the zone (24-hour)."""
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(find_zone(name)).strftime("%Y-%m-%d %H:%M:%S")


def local_clock(ms: int, name: str) -> str:
    """``08:00`` in the zone (24-hour)."""
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(find_zone(name)).strftime("%H:%M")


def config_zone(config: dict[str, Any] | None) -> str:
    """The zone an event's stored file gives (checked when it was loaded), else UTC."""
    event = (config or {}).get("event")
    zone = event.get("time_zone") if isinstance(event, dict) else None
    return zone if isinstance(zone, str) and zone else DEFAULT_ZONE


def event_zone(connection: Connection, slug: str | None = None) -> str:
    """The zone of the event ``slug``; without one (or an unknown one), the latest loaded event's; UTC when there is
    no event."""
    query = select(col(Tournament.config)).order_by(col(Tournament.id).desc()).limit(1)
    if slug is not None:
        row = connection.execute(select(col(Tournament.config)).where(col(Tournament.slug) == slug)).first()
        if row is not None:
            return config_zone(row[0])
    row = connection.execute(query).first()
    return DEFAULT_ZONE if row is None else config_zone(row[0])


def now_label(name: str) -> str:
    """The zone's label now."""
    return zone_label(name, int(time.time() * 1000))
