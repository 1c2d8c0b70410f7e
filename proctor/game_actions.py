"""An arbiter's actions on a game (pause, resume, adjust time, split, suspend, verdicts and results, penalties): the
engine event each stands for, applied at the server's time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection

from engine import adjudication as adj
from engine.actions import parse_action
from engine.errors import EngineError
from engine.openings import Player
from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_game
from proctor.errors import BadRequestError, NotFoundError
from proctor.live_games import LiveGame, LiveGames
from proctor.staging import Batch

MAX_ADJUST_MS = 86_400_000
"""The most time an arbiter's adjustment (``delta_ms``, ``add_ms``) may give or take: a day."""

GAME_ACTIONS = (
    "pause", "resume", "adjust", "split", "suspend", "resume-game", "confirm-verdict", "overrule",
    "confirm-result", "declare-result", "penalty",
)  # fmt: skip


def game_action_event(
    action: str, params: dict[str, Any], who: Identity, reason: str, refs: dict[str, Player]
) -> Callable[[int], adj.Event]:
    """The engine event an arbiter's action on a game stands for; :class:`BadRequestError` if malformed."""
    arbiter, role = who.name, who.role

    def player(name: str = "player") -> Player:
        ref = params.get(name)
        if not isinstance(ref, str) or ref not in refs:
            raise BadRequestError(f"'{name}' must be one of this game's player ids: {', '.join(sorted(refs))}")
        return refs[ref]

    def number(name: str) -> int:
        value = params.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not -MAX_ADJUST_MS <= value <= MAX_ADJUST_MS:
            raise BadRequestError(f"'{name}' must be a whole number of milliseconds from {-MAX_ADJUST_MS} to "
                                  f"{MAX_ADJUST_MS} (a day)")  # fmt: skip
        return value

    if action == "pause":
        return lambda at: adj.ClockPaused(at, arbiter, role, reason)
    if action == "resume":
        return lambda at: adj.ClockResumed(at, arbiter, role, reason)
    if action == "adjust":
        target, delta = player(), number("delta_ms")
        return lambda at: adj.TimeAdjusted(at, arbiter, role, reason, player=target, delta_ms=delta)
    if action == "split":
        return lambda at: adj.SharedTimeSplit(at, arbiter, role, reason)
    if action == "suspend":
        sealed_text = params.get("sealed_move")
        try:
            sealed = parse_action(sealed_text) if isinstance(sealed_text, str) else None
        except EngineError as error:
            raise BadRequestError(f"'sealed_move': {error}") from None
        round_wide = bool(params.get("round_wide", False))
        return lambda at: adj.GameSuspended(at, arbiter, role, reason, sealed_move=sealed, round_wide=round_wide)
    if action == "resume-game":
        return lambda at: adj.GameResumed(at, arbiter, role, reason)
    if action == "confirm-verdict":
        return lambda at: adj.VerdictConfirmed(at, arbiter, role, reason)
    if action == "overrule":
        add = number("add_ms") if "add_ms" in params else 0
        return lambda at: adj.VerdictOverruled(at, arbiter, role, reason, add_ms=add)
    if action == "confirm-result":
        return lambda at: adj.ResultConfirmed(at, arbiter, role, reason)
    if action == "declare-result":
        both_lose = params.get("both_lose", False)
        if not isinstance(both_lose, bool):
            raise BadRequestError("'both_lose' must be true or false (15.3: both players lose)")
        if both_lose and params.get("winner") is not None:
            raise BadRequestError("'both_lose' has no winner: give one or the other (15.3)")
        winner = None if params.get("winner") is None else player("winner")
        return lambda at: adj.ResultDeclared(at, arbiter, role, reason, winner=winner, both_lose=both_lose)
    if action == "penalty":
        target = player()
        offence = params.get("offence")
        if not isinstance(offence, str) or not offence:
            raise BadRequestError("'offence' must be the article of the offence, e.g. '17.4' or '36.2'")
        evidence = params.get("evidence", [])
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise BadRequestError("'evidence' must be a list of references (incident ids, media)")
        disqualify = bool(params.get("disqualify", False))
        return lambda at: adj.PenaltyImposed(
            at, arbiter, role, reason, player=target, offence=offence, evidence=tuple(evidence), disqualify=disqualify
        )
    raise BadRequestError(f"unknown action {action!r}: expected one of {', '.join(GAME_ACTIONS)}")


class GameActions:
    def __init__(self, live: LiveGames) -> None:
        self.live = live

    def apply(
        self,
        connection: Connection,
        batch: Batch,
        game_id: int,
        who: Identity,
        make: Callable[[int], adj.Event],
        server_now: int,
    ) -> LiveGame:
        """Apply an arbiter's action to a game at the server's time (AdjudicationError: nothing is staged); an
        assigned arbiter acts only on the games of their sections and boards (16)."""
        if not self.live.knows(batch, game_id):
            raise NotFoundError(f"no game {game_id}")
        require_assigned_to_game(connection, who, game_id, f"game {game_id}")
        game = self.live.game(batch, game_id)
        at = max(server_now, game.state.now)
        event = make(at)
        after = game.state.apply(event)
        game = self.live.record(batch, game, "arbiter", None, event, after)
        self.live.save(batch, game, server_now)
        return self.live.game(batch, game_id)
