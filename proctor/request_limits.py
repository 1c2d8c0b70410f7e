"""Limits on how fast one client may ask for something: a token bucket per key (a player's stream token), pure (time
is an argument), kept in memory by the process that answers (a limit per process: behind several processes a player
gets the burst once per process)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``burst`` requests at once, then one every ``60 / per_minute`` seconds."""

    burst: int
    per_minute: float
    tokens: float
    at: float

    def take(self, now: float) -> float | None:
        """Take one request's token: None when it is allowed, else how many seconds until the next one is."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_minute / 60)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        return (1 - self.tokens) * 60 / self.per_minute


@dataclass
class RequestLimit:
    """A token bucket per key; buckets that have refilled are forgotten once there are many."""

    burst: int = 5
    per_minute: float = 4.0
    buckets: dict[str, TokenBucket] = field(default_factory=dict)
    forget_beyond: int = 10_000

    def take(self, key: str, now: float) -> int | None:
        """None when the request is allowed, else the whole seconds to wait (for ``Retry-After``)."""
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= self.forget_beyond:
                self._forget_full(now)
            bucket = self.buckets[key] = TokenBucket(self.burst, self.per_minute, self.burst, now)
        wait = bucket.take(now)
        return None if wait is None else max(1, math.ceil(wait))

    def _forget_full(self, now: float) -> None:
        full = [key for key, b in self.buckets.items() if b.tokens + (now - b.at) * b.per_minute / 60 >= b.burst]
        for key in full:
            del self.buckets[key]
