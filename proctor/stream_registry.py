"""The camera streams of the distributed mode and who analyses each (issue 16), in Redis: a thin adapter.

- ``proctor:streams`` (a hash): every stream a player publishes to Janus, by ``player|device``: its room, the room's
  PIN, its feed, the policy it is checked against and the leave granted to the player. The service writes it (when a
  page says it published, when leave is granted) and writes it all again every few seconds, so that a Redis that
  restarted empty has it back within seconds.
- ``proctor:worker:<id>``: each analysis worker's load and capacity, written every second, gone after
  :data:`WORKER_TTL_MS` without it (the worker died).
- ``proctor:claim:<player|device>``: the worker analysing the stream, renewed by it every second, gone after
  :data:`CLAIM_TTL_MS` without it; taken with ``SET NX`` (one holder at a time).
- ``proctor:seen:<player|device>``: when the stream was last analysed (milliseconds), written with each renewal: the
  worker that takes a stream over reports the gap from it (the camera timeline shows it).
- ``proctor:report:<player|device>``: the stream as its worker sees it, written every second (proctor.stream_views:
  what the desk shows of it).
- ``proctor:ask:<worker>`` (a list): what the service asks of the worker holding a stream (a still of it, for an
  arbiter approving its view), taken by the worker with its next round; ``proctor:answer:<id>`` (a list): its
  answer, which the asking service process waits for.  Both gone after :data:`ASK_TTL_MS`.

Which worker claims which stream is proctor.stream_assignment's pure rule."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import redis.asyncio as redis

from proctor.stream_assignment import WorkerLoad
from video.checks import Check, Thresholds
from video.devices import Device, DeviceThresholds, StreamKey
from video.ingest import StreamPolicy

STREAMS: Final = "proctor:streams"
WORKER: Final = "proctor:worker:"
CLAIM: Final = "proctor:claim:"
SEEN: Final = "proctor:seen:"
REPORT: Final = "proctor:report:"
REPORT_TTL_MS: Final = 10_000
WORKER_TTL_MS: Final = 3000
CLAIM_TTL_MS: Final = 3000
"""A worker killed by SIGKILL holds its streams this long at most: they are taken over within about 4 s."""
SEEN_TTL_MS: Final = 86_400_000
ASK: Final = "proctor:ask:"
ANSWER: Final = "proctor:answer:"
ASK_TTL_MS: Final = 30_000
BLOCK_S: Final = 2.0

RENEW = """
local out = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    out[i] = 1
  elseif not holder then
    if redis.call('SET', key, ARGV[1], 'NX', 'PX', ARGV[2]) then out[i] = 1 else out[i] = -1 end
  else
    out[i] = -1
  end
end
return out
"""
"""Renew the worker's claims (``ARGV[1]``): 1 where it still holds the stream (or held it before Redis restarted
and took it again), -1 where another worker holds it now."""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def stream_name(key: StreamKey) -> str:
    return f"{key.player}|{key.device.value}"


def policy_json(policy: StreamPolicy) -> dict[str, Any]:
    return {
        "thresholds": asdict(policy.thresholds),
        "enabled": sorted(check.value for check in policy.enabled),
        "devices": asdict(policy.devices),
    }


def policy_of(data: Mapping[str, Any]) -> StreamPolicy:
    return StreamPolicy(
        thresholds=Thresholds(**data.get("thresholds", {})),
        enabled=frozenset(Check(value) for value in data.get("enabled", [c.value for c in Check])),
        devices=DeviceThresholds(**data.get("devices", {})),
    )


@dataclass(frozen=True, slots=True)
class PublishedStream:
    """One device of one player, published to Janus: where a worker subscribes to it and what it checks."""

    player: str
    device: Device
    room: int
    pin: str
    feed: int
    policy: dict[str, Any] = field(default_factory=dict)
    """:func:`policy_json` of the stream's :class:`video.ingest.StreamPolicy` (the player's section's)."""
    leave_until: float = 0.0
    """Leave of the area granted to the player until then (seconds; 36.4.1)."""
    reference: str = ""
    """The SHA-256 of the device's approved view (its reference still), if an arbiter approved one: the worker
    holding the stream fetches the still from the service and compares the picture with it."""
    sound: dict[str, Any] = field(default_factory=dict)
    """A front camera's microphone policy (:meth:`proctor.sound_policy.MicrophonePolicy.to_json`): whether the
    worker holding the stream listens to its audio, and how; empty, it does not."""

    @property
    def key(self) -> StreamKey:
        return StreamKey(self.player, self.device)

    @property
    def name(self) -> str:
        return stream_name(self.key)

    def same_media(self, other: PublishedStream) -> bool:
        return (self.room, self.feed) == (other.room, other.feed)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "device": self.device.value})

    @classmethod
    def from_json(cls, raw: str | bytes) -> PublishedStream:
        data = json.loads(raw)
        return cls(**{**data, "device": Device(data["device"])})


class StreamRegistry:
    """The registry in Redis (``BUS_URL``'s)."""

    def __init__(self, url: str) -> None:
        self.client: redis.Redis = redis.from_url(url, decode_responses=True)
        self._renew = self.client.register_script(RENEW)
        self._release = self.client.register_script(RELEASE)

    async def close(self) -> None:
        await self.client.aclose()

    # --- the service's side ---

    async def publish(self, streams: Iterable[PublishedStream]) -> None:
        mapping = {stream.name: stream.to_json() for stream in streams}
        if mapping:
            await self.client.hset(STREAMS, mapping=mapping)  # type: ignore[arg-type]  # redis-py's key type is invariant

    # --- the workers' side ---

    async def streams(self) -> dict[str, PublishedStream]:
        raw = await self.client.hgetall(STREAMS)
        return {str(name): PublishedStream.from_json(value) for name, value in raw.items()}

    async def heartbeat(self, worker: str, load: int, capacity: int) -> None:
        value = json.dumps({"load": load, "capacity": capacity})
        await self.client.set(WORKER + worker, value, px=WORKER_TTL_MS)

    async def workers(self) -> dict[str, WorkerLoad]:
        names = [name async for name in self.client.scan_iter(match=WORKER + "*", count=500)]
        values = await self.client.mget(names) if names else []
        live: dict[str, WorkerLoad] = {}
        for name, value in zip(names, values, strict=True):
            if value is not None:
                data = json.loads(value)
                live[name.removeprefix(WORKER)] = WorkerLoad(int(data["load"]), int(data["capacity"]))
        return live

    async def holders(self, names: list[str]) -> dict[str, str | None]:
        if not names:
            return {}
        values = await self.client.mget([CLAIM + name for name in names])
        return {name: None if value is None else str(value) for name, value in zip(names, values, strict=True)}

    async def claim(self, name: str, worker: str) -> bool:
        return bool(await self.client.set(CLAIM + name, worker, nx=True, px=CLAIM_TTL_MS))

    async def renew(self, names: list[str], worker: str) -> dict[str, bool]:
        """Whether the worker still holds each of its streams (renewed)."""
        if not names:
            return {}
        held = await self._renew(keys=[CLAIM + name for name in names], args=[worker, CLAIM_TTL_MS])
        return {name: int(value) == 1 for name, value in zip(names, held, strict=True)}

    async def release(self, name: str, worker: str) -> None:
        await self._release(keys=[CLAIM + name], args=[worker])

    async def seen(self, names: list[str], at_ms: int) -> None:
        if names:
            async with self.client.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.set(SEEN + name, at_ms, px=SEEN_TTL_MS)
                await pipe.execute()

    async def last_seen(self, name: str) -> int | None:
        value = await self.client.get(SEEN + name)
        return None if value is None else int(value)

    async def report(self, reports: Mapping[str, Mapping[str, Any]]) -> None:
        """The worker's report of each of its streams (proctor.stream_views)."""
        if reports:
            async with self.client.pipeline(transaction=False) as pipe:
                for name, report in reports.items():
                    pipe.set(REPORT + name, json.dumps(report), px=REPORT_TTL_MS)
                await pipe.execute()

    async def ask(self, worker: str, request: Mapping[str, Any]) -> None:
        """Ask ``worker`` something about a stream it holds (it answers with :meth:`answer`)."""
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.rpush(ASK + worker, json.dumps(request))
            pipe.pexpire(ASK + worker, ASK_TTL_MS)
            await pipe.execute()

    async def asked(self, worker: str, most: int = 16) -> list[dict[str, Any]]:
        """What the service asked of this worker since its last round."""
        values = await self.client.lpop(ASK + worker, most)
        return [json.loads(str(value)) for value in (values if isinstance(values, list) else [])]

    async def answer(self, ident: str, body: Mapping[str, Any]) -> None:
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.rpush(ANSWER + ident, json.dumps(body))
            pipe.pexpire(ANSWER + ident, ASK_TTL_MS)
            await pipe.execute()

    async def answered(self, ident: str, within_s: float) -> dict[str, Any] | None:
        """The answer to the request ``ident``, waited for up to ``within_s`` (None: none came): in blocking pops of
        at most :data:`BLOCK_S`, each within the client's read timeout (redis-py's is 5 s)."""
        deadline = time.monotonic() + within_s
        while (left := deadline - time.monotonic()) > 0:
            popped = await self.client.blpop([ANSWER + ident], timeout=min(BLOCK_S, left))
            if popped is not None:
                return dict(json.loads(popped[1]))
        return None

    async def reports(self, names: list[str]) -> dict[str, dict[str, Any]]:
        """The latest report of each of these streams that has one."""
        if not names:
            return {}
        values = await self.client.mget([REPORT + name for name in names])
        return {name: json.loads(value) for name, value in zip(names, values, strict=True) if value is not None}
