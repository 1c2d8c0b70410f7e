"""JSON forms of the engine's adjudication events, for the game_event log (replaying them rebuilds a game)."""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from engine import adjudication as adj
from engine.actions import parse_action
from engine.openings import Player
from engine.penalties import Role

EVENT_TYPES: Final[dict[str, type]] = {
    cls.__name__: cls
    for cls in (
        adj.PlayerJoined,
        adj.PlayerDisconnected,
        adj.PlayerReconnected,
        adj.Played,
        adj.Resigned,
        adj.DrawOffered,
        adj.DrawAccepted,
        adj.DrawDeclined,
        adj.Tick,
        adj.ClockPaused,
        adj.ClockResumed,
        adj.TimeAdjusted,
        adj.SharedTimeSplit,
        adj.GameSuspended,
        adj.GameResumed,
        adj.VerdictConfirmed,
        adj.VerdictOverruled,
        adj.PenaltyImposed,
        adj.ResultConfirmed,
        adj.ResultDeclared,
        adj.Revised,
    )
}


def _encode(value: Any) -> Any:
    if isinstance(value, (Player, Role)):
        return value.value
    if hasattr(value, "token") and callable(value.token):
        return value.token()
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    return value


def event_to_dict(event: adj.Event) -> dict[str, Any]:
    if isinstance(event, adj.Revised):
        return {"type": "Revised", "at": event.at, "events": [event_to_dict(e) for e in event.events],
                "cause": event.cause}  # fmt: skip
    data = {field.name: _encode(getattr(event, field.name)) for field in dataclasses.fields(event)}
    return {"type": type(event).__name__, **data}


def event_from_dict(data: dict[str, Any]) -> adj.Event:
    cls = EVENT_TYPES[data["type"]]
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if field.name not in data:
            continue
        raw = data[field.name]
        if field.name in ("player", "winner"):
            values[field.name] = None if raw is None else Player(raw)
        elif field.name == "role":
            values[field.name] = Role(raw)
        elif field.name in ("action", "sealed_move"):
            values[field.name] = None if raw is None else parse_action(raw)
        elif field.name == "events":
            values[field.name] = tuple(event_from_dict(item) for item in raw)
        elif field.name == "evidence":
            values[field.name] = tuple(raw)
        else:
            values[field.name] = raw
    event: adj.Event = cls(**values)
    return event
