"""The server's wall clock, in milliseconds since 1970 (UTC): the time the service stamps on what it receives and
does.  The engine never reads it: it is handed the time (engine/)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000
