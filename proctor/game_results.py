"""A game's result for the standings: the first and the second player's (28.3), from the service's adjudication."""

from __future__ import annotations

from typing import Final

from engine.adjudication import Adjudication, PlayerResult
from engine.openings import Player
from engine.standings import ResultKind

_SEATS: Final = (Player.FIRST, Player.SECOND)
_PLAYER_RESULTS: Final = {
    PlayerResult.WIN: ResultKind.WIN,
    PlayerResult.DRAW: ResultKind.DRAW,
    PlayerResult.LOSS: ResultKind.LOSS,
    PlayerResult.FORFEIT_WIN: ResultKind.FORFEIT_WIN,
    PlayerResult.FORFEIT_LOSS: ResultKind.FORFEIT_LOSS,
}


def game_results(state: Adjudication) -> tuple[ResultKind, ResultKind] | None:
    """The first and the second player's results once the game is over (28.3; a disciplinary loss after the
    confirmed result changes only the offender's, 15.3)."""
    if not state.is_over:
        return None
    table = state.results()
    first, second = (_PLAYER_RESULTS[table[state.color_of(p)]] for p in _SEATS)
    return first, second
