"""A game as JSON: its summary (the live stream, the game lists), its result, and the full view of the game route."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.adjudication import Adjudication
from engine.board import Color, format_point
from engine.openings import Player
from proctor.deadlines import deadline_of

if TYPE_CHECKING:
    from proctor.live_games import LiveGame


def game_summary(game: LiveGame) -> dict[str, Any]:
    state = game.state
    outcome = state.outcome
    return {
        "id": game.id,
        "external_id": game.external_id,
        "status": "over" if outcome else ("live" if state.started else "scheduled"),
        "ply": state.game.ply,
        "result": result_json(state),
    }


def result_json(state: Adjudication) -> dict[str, Any] | None:
    outcome = state.outcome
    if outcome is None:
        return None
    return {
        "winner": outcome.winner.value if outcome.winner else None,
        "reason": outcome.termination.value,
        "article": outcome.article,
        "double_loss": outcome.double_loss,
        "at": outcome.at,
    }


def game_view(game: LiveGame, refs_by_player: dict[Player, str], server_now: int) -> dict[str, Any]:
    state = game.state
    now = max(server_now, state.now) if state.running else state.now
    position = state.game.position
    due = state.game.due()
    return {
        **game_summary(game),
        "platform_game_id": game.external_id,
        "rule": state.game.rules.name,
        "opening": state.game.opening.name,
        "players": {
            "black": refs_by_player[state.game.black_player],
            "white": refs_by_player[state.game.black_player.other],
        },
        "moves": [action.token() for action in state.game.actions],
        "position": {
            "black": [format_point(p) for p in position.points_of(Color.BLACK)],
            "white": [format_point(p) for p in position.points_of(Color.WHITE)],
        },
        "to_move": state.game.to_move.value,
        "opening_due": None
        if due is None
        else {
            "player": refs_by_player[due.actor],
            "options": sorted(o.value for o in due.options),
            "article": due.article,
            "prompt": due.prompt,
        },
        "clocks": {
            refs_by_player[p]: {"remaining_ms": state.remaining(p, now), "used_ms": state.clock.used_of(p)}
            for p in (Player.FIRST, Player.SECOND)
        },
        "running": [refs_by_player[p] for p in sorted(state.clock.charged, key=lambda p: p.value)]
        if state.running
        else [],
        "paused": state.paused_at is not None,
        "suspended": state.suspension is not None,
        "pending_verdict": None
        if state.pending_verdict is None
        else {
            "winner": state.pending_verdict.winner.value if state.pending_verdict.winner else None,
            "reason": state.pending_verdict.termination.value,
            "article": state.pending_verdict.article,
        },
        "verdicts": [
            {"at": e.at, "kind": e.kind, "text": e.text, "article": e.article, "actor": e.actor, "cause": e.cause}
            for e in state.log
        ],
        "feed": {"last_seq": game.last_seq, "held": sorted(game.held), "events_applied": game.applied},
        "next_deadline_ms": deadline_of(state),
    }


def public_view(game: LiveGame, names: dict[Player, str], server_now: int) -> dict[str, Any]:
    """What a platform or a broadcast may show of a game, without credentials: the position, the moves, whose turn,
    the clocks, the state and the result (winner, reason, article), and the players by colour with their names.  No
    player ids, incidents, verdicts' causes or feed state: those are for the arbiters and the review panel
    (:func:`game_view`)."""
    state = game.state
    now = max(server_now, state.now) if state.running else state.now
    position = state.game.position
    due = state.game.due()
    black = state.game.black_player

    def colour(player: Player) -> str:
        return "black" if player is black else "white"

    return {
        **game_summary(game),
        "platform_game_id": game.external_id,
        "rule": state.game.rules.name,
        "opening": state.game.opening.name,
        "players": {"black": {"name": names.get(black, "")}, "white": {"name": names.get(black.other, "")}},
        "moves": [action.token() for action in state.game.actions],
        "position": {
            "black": [format_point(p) for p in position.points_of(Color.BLACK)],
            "white": [format_point(p) for p in position.points_of(Color.WHITE)],
        },
        "to_move": state.game.to_move.value,
        "opening_due": None if due is None else {"colour": colour(due.actor), "article": due.article},
        "clocks": {colour(p): {"remaining_ms": state.remaining(p, now)} for p in (Player.FIRST, Player.SECOND)},
        "running": sorted(colour(p) for p in state.clock.charged) if state.running else [],
    }
