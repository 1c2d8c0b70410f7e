"""Platform feed messages: the webhook body, checked field by field, and its meaning for the engine.

Body: ``{"type": T, "game_id": "...", "seq": N, "at": "RFC 3339", "data": {...}}`` with ``seq`` counting 1, 2, 3…
per game.  Every problem is a :class:`BadRequestError` that names the field and what was expected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from engine import adjudication as adj
from engine.actions import AddTwo, Choose, ClaimForbidden, Declare, Keep, Offer, Pass, Stone, Swap
from engine.board import parse_point
from engine.clock import TimeControl, find_time_control, increment, sudden_death
from engine.errors import EngineError
from engine.openings import Player
from proctor.errors import BadRequestError
from proctor.models import MAX_INTEGER

MAX_INITIAL_S: Final = 86_400
"""The longest initial time a platform may give (a day), and the largest increment (``MAX_INCREMENT_S``)."""
MAX_INCREMENT_S: Final = 3_600
MAX_CLOCK_MS: Final = 7 * 86_400_000
"""The largest remaining time a platform's ``clock_ms`` may show (a week)."""
MAX_DECLARED: Final = 225
"""Black's declared number of fifth-move candidates (11.1.2 A) is at most the board's 225 points."""

#: Types that become engine events, and the rest (game.created sets a game up; game.ended is the platform's claim).
ENGINE_TYPES: Final = frozenset(
    {
        "player.joined",
        "player.disconnected",
        "player.reconnected",
        "move",
        "opening.swap",
        "opening.keep",
        "opening.declare",
        "opening.candidates",
        "opening.choice",
        "opening.add2",
        "draw.offered",
        "draw.accepted",
        "draw.declined",
        "resign",
        "forbidden.claimed",
    }
)
TYPES: Final = ENGINE_TYPES | {"game.created", "game.ended"}


@dataclass(frozen=True, slots=True)
class FeedMessage:
    type: str
    game_id: str
    seq: int
    at_ms: int
    data: dict[str, Any]
    raw: dict[str, Any]
    text: str | None = None
    """The body as received (valid JSON), stored as it came."""


def parse_time(value: object, field: str) -> int:
    """RFC 3339 with a time zone → milliseconds since the epoch."""
    if not isinstance(value, str):
        raise BadRequestError(f"'{field}' must be an RFC 3339 time string like '2026-05-01T09:30:00Z'")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise BadRequestError(f"'{field}': {value!r} is not an RFC 3339 time") from None
    if moment.tzinfo is None:
        raise BadRequestError(f"'{field}': {value!r} has no time zone (RFC 3339 needs 'Z' or an offset)")
    return round(moment.timestamp() * 1000)


def _no_constants(name: str) -> None:
    raise BadRequestError(f"the body is not JSON: {name} is not a JSON number")


def parse_message(body: bytes) -> FeedMessage:
    try:
        text = body.decode("utf-8")
        raw = json.loads(text, parse_constant=_no_constants)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadRequestError(f"the body is not JSON (UTF-8): {error}") from None
    except RecursionError:
        raise BadRequestError("the body's JSON is nested too deeply") from None
    if not isinstance(raw, dict):
        raise BadRequestError("the body must be a JSON object")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        raise BadRequestError(f"'type' must be one of {', '.join(sorted(TYPES))}", got=kind)
    game_id = raw.get("game_id")
    if not isinstance(game_id, str) or not game_id.strip() or len(game_id) > 100:
        raise BadRequestError("'game_id' must be a non-empty string of at most 100 characters")
    seq = raw.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= MAX_INTEGER:
        raise BadRequestError(f"'seq' must be an integer counting 1, 2, 3… per game (at most {MAX_INTEGER})")
    data = raw.get("data", {})
    if not isinstance(data, dict):
        raise BadRequestError("'data' must be a JSON object")
    return FeedMessage(kind, game_id, seq, parse_time(raw.get("at"), "at"), data, raw, text)


# --- game.created ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameSetup:
    black_ref: str
    black_name: str
    white_ref: str
    white_name: str
    rule: str
    opening: str | None
    time_control: TimeControl
    start_at_ms: int
    event: str | None
    round_no: int | None
    board: int | None
    match_game: int | None = None
    """The game's number within its match (regulations 2023 VII(2)); none: the match's first (or only) game."""
    adjudication: str | None = None
    """``automatic`` or ``claim`` (19.1.2), as the platform plays it; none: the section's (automatic without one)."""


def _player(data: dict[str, Any], side: str) -> tuple[str, str]:
    value = data.get(side)
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"]:
        raise BadRequestError(f"'data.{side}' must be an object with a string 'id' (and a 'name')")
    name = value.get("name", "")
    if not isinstance(name, str):
        raise BadRequestError(f"'data.{side}.name' must be a string")
    return value["id"], name


def _time_control(value: object) -> TimeControl:
    if isinstance(value, str):
        try:
            return find_time_control(value)
        except EngineError as error:
            raise BadRequestError(f"'data.time_control': {error}") from None
    if isinstance(value, dict):
        initial, extra = value.get("initial_s"), value.get("increment_s", 0)
        if not isinstance(initial, (int, float)) or isinstance(initial, bool) or not 0 < initial <= MAX_INITIAL_S:
            raise BadRequestError(f"'data.time_control.initial_s' must be a positive number of seconds, at most "
                                  f"{MAX_INITIAL_S}")  # fmt: skip
        if not isinstance(extra, (int, float)) or isinstance(extra, bool) or not 0 <= extra <= MAX_INCREMENT_S:
            raise BadRequestError(f"'data.time_control.increment_s' must be a number of seconds from 0 to "
                                  f"{MAX_INCREMENT_S}")  # fmt: skip
        return increment(initial / 60, extra) if extra else sudden_death(initial / 60)
    raise BadRequestError("'data.time_control' must be a preset name or {initial_s, increment_s}")


def parse_setup(message: FeedMessage) -> GameSetup:
    data = message.data
    black_ref, black_name = _player(data, "black")
    white_ref, white_name = _player(data, "white")
    if black_ref == white_ref:
        raise BadRequestError("'data.black.id' and 'data.white.id' must differ")
    rule = data.get("rule", "renju")
    opening = data.get("opening")
    if not isinstance(rule, str) or (opening is not None and not isinstance(opening, str)):
        raise BadRequestError("'data.rule' and 'data.opening' must be strings")
    optional: dict[str, int | None] = {}
    for name in ("round", "board", "match_game"):
        value = data.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 <= value <= MAX_INTEGER):  # fmt: skip
            raise BadRequestError(f"'data.{name}' must be an integer from 0 to {MAX_INTEGER}")
        optional[name] = value
    event = data.get("event")
    if event is not None and not isinstance(event, str):
        raise BadRequestError("'data.event' must be a string")
    adjudication = data.get("adjudication")
    if adjudication is not None and adjudication not in ("automatic", "claim"):
        raise BadRequestError("'data.adjudication' must be 'automatic' or 'claim' (19.1.2)")
    start = parse_time(data["start_at"], "data.start_at") if "start_at" in data else message.at_ms
    return GameSetup(
        black_ref, black_name, white_ref, white_name, rule, opening, _time_control(data.get("time_control")), start,
        event, optional["round"], optional["board"], optional["match_game"], adjudication,
    )  # fmt: skip


# --- Engine events ----------------------------------------------------------------------------------------------


def _point(data: dict[str, Any], name: str = "point") -> int:
    value = data.get(name)
    if not isinstance(value, str):
        raise BadRequestError(f"'data.{name}' must be a point such as 'h8'")
    try:
        return parse_point(value)
    except EngineError as error:
        raise BadRequestError(f"'data.{name}': {error}") from None


def player_of(data: dict[str, Any], refs: dict[str, Player]) -> Player:
    ref = data.get("player")
    if not isinstance(ref, str) or ref not in refs:
        raise BadRequestError(f"'data.player' must be one of this game's player ids: {', '.join(sorted(refs))}")
    return refs[ref]


def to_engine_event(message: FeedMessage, at_ms: int, refs: dict[str, Player]) -> adj.Event:
    """The engine event a feed message stands for, at ``at_ms`` (the effective time)."""
    data, kind = message.data, message.type
    if kind == "player.joined":
        return adj.PlayerJoined(at_ms, player_of(data, refs))
    if kind == "player.disconnected":
        return adj.PlayerDisconnected(at_ms, player_of(data, refs))
    if kind == "player.reconnected":
        return adj.PlayerReconnected(at_ms, player_of(data, refs))
    if kind == "move":
        if data.get("pass") is True:
            return adj.Played(at_ms, Pass())
        return adj.Played(at_ms, Stone(_point(data)))
    if kind == "opening.swap":
        return adj.Played(at_ms, Swap())
    if kind == "opening.keep":
        return adj.Played(at_ms, Keep())
    if kind == "opening.add2":
        return adj.Played(at_ms, AddTwo())
    if kind == "opening.declare":
        count = data.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_DECLARED:
            raise BadRequestError(f"'data.count' must be an integer from 1 to {MAX_DECLARED}")
        return adj.Played(at_ms, Declare(count))
    if kind == "opening.candidates":
        points = data.get("points")
        if not isinstance(points, list) or not points:
            raise BadRequestError("'data.points' must be a non-empty list of points")
        return adj.Played(at_ms, Offer(tuple(_point({"p": p}, "p") for p in points)))
    if kind == "opening.choice":
        return adj.Played(at_ms, Choose(_point(data)))
    if kind == "draw.offered":
        return adj.DrawOffered(at_ms, player_of(data, refs))
    if kind == "draw.accepted":
        return adj.DrawAccepted(at_ms, player_of(data, refs))
    if kind == "draw.declined":
        return adj.DrawDeclined(at_ms, player_of(data, refs))
    if kind == "resign":
        return adj.Resigned(at_ms, player_of(data, refs))
    if kind == "forbidden.claimed":  # White points out Black's forbidden move (19.1.2, claim mode)
        return adj.Played(at_ms, ClaimForbidden())
    raise BadRequestError(f"'{kind}' does not become an engine event")


def check_engine_data(message: FeedMessage, refs: dict[str, Player]) -> None:
    """Refuse a malformed message before anything is stored (the effective time does not matter here)."""
    if message.type in ENGINE_TYPES:
        to_engine_event(message, 0, refs)
    elif message.type == "game.ended":
        result = message.data.get("result")
        if result not in ("black", "white", "draw", None):
            raise BadRequestError("'data.result' must be 'black', 'white', 'draw' or null")
        reason = message.data.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise BadRequestError("'data.reason' must be a string")
    if message.type == "move" and "clock_ms" in message.data:
        clock = message.data["clock_ms"]
        if isinstance(clock, bool) or not isinstance(clock, int) or not 0 <= clock <= MAX_CLOCK_MS:
            raise BadRequestError(f"'data.clock_ms' must be the mover's remaining time in whole milliseconds, at "
                                  f"most {MAX_CLOCK_MS}")  # fmt: skip
