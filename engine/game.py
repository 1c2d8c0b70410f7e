"""A game: rule set + opening protocol + position, advanced one action at a time.

:class:`Game` is immutable.  :meth:`Game.apply` returns the next game or raises :class:`IllegalActionError` (the game
it was called on is unchanged, so bad input never changes anything).  Every end of game is an :class:`Outcome` with
a :class:`Termination` that names the article it applies.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Final

from engine.actions import (
    Action,
    AgreeDraw,
    Choose,
    ClaimForbidden,
    Offer,
    Pass,
    Resign,
    Stone,
    Swap,
    parse_action,
)
from engine.board import Color, Position, format_point
from engine.errors import GameOverError, IllegalActionError
from engine.forbidden import FiveEye, ForbiddenKind
from engine.openings import (
    Due,
    OpeningContext,
    OpeningProtocol,
    OpeningState,
    Player,
    find_opening,
)
from engine.rules import RuleSet, StoneEffect, find_rule_set
from engine.values import evolve


class Termination(enum.Enum):
    """Why a game ended.  ``article`` is the rule applied; later kinds come from clocks and penalties."""

    FIVE = "five"
    """A five (or an overline where it counts as five) (19.1.1, 35.1)."""
    FORBIDDEN_33 = "forbidden-33"
    """Black made a double-three (8.1, 19.1.2)."""
    FORBIDDEN_44 = "forbidden-44"
    """Black made a double-four (8.2, 19.1.2)."""
    FORBIDDEN_OVERLINE = "forbidden-overline"
    """Black made an overline (8.3, 19.1.2)."""
    DOUBLE_PASS = "double-pass"
    """Both players passed in succession (19.2.1 B, 35.5)."""
    BOARD_FULL = "board-full"
    """No empty point left and no win (19.2.1 C, 35.5)."""
    RESIGNATION = "resignation"
    """A player resigned (35.2)."""
    AGREED_DRAW = "agreed-draw"
    """Both players agreed to a draw (19.2.1 A, 35.4)."""
    TIME_FORFEIT = "time-forfeit"
    """The first player to reach the time limit loses (14.1, 34.4)."""
    BOTH_OUT_OF_TIME = "both-out-of-time"
    """Both players out of time and the order unknown (19.2.1 D)."""
    NO_SHOW = "no-show"
    """A player did not arrive within the lateness limit (14.3, 35.3)."""
    RECONNECT_DEADLINE = "reconnect-deadline"
    """A disconnected player did not return within the event's reconnect window (37.7)."""
    PENALTY = "penalty"
    """A loss given as a penalty (17, 18)."""
    ARBITER_DECISION = "arbiter-decision"
    """A result decided by the arbiter (19, 19.1.4)."""

    @property
    def article(self) -> str:
        return _ARTICLES[self]


_ARTICLES: Final = {
    Termination.FIVE: "19.1.1",
    Termination.FORBIDDEN_33: "8.1, 19.1.2",
    Termination.FORBIDDEN_44: "8.2, 19.1.2",
    Termination.FORBIDDEN_OVERLINE: "8.3, 19.1.2",
    Termination.DOUBLE_PASS: "19.2.1 B, 35.5",
    Termination.BOARD_FULL: "19.2.1 C, 35.5",
    Termination.RESIGNATION: "35.2",
    Termination.AGREED_DRAW: "19.2.1 A, 35.4",
    Termination.TIME_FORFEIT: "34.4",
    Termination.BOTH_OUT_OF_TIME: "19.2.1 D",
    Termination.NO_SHOW: "35.3",
    Termination.RECONNECT_DEADLINE: "37.7",
    Termination.PENALTY: "17, 18",
    Termination.ARBITER_DECISION: "19.1.4",
}

_FORBIDDEN_TERMINATION: Final = {
    ForbiddenKind.DOUBLE_THREE: Termination.FORBIDDEN_33,
    ForbiddenKind.DOUBLE_FOUR: Termination.FORBIDDEN_44,
    ForbiddenKind.OVERLINE: Termination.FORBIDDEN_OVERLINE,
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: ``winner`` is None for a draw; ``ply`` is the 1-based action that ended it."""

    termination: Termination
    winner: Color | None
    ply: int
    article: str
    at: int | None = None
    """When the game ended (ms), for endings that come from the clock or the arbiter."""
    double_loss: bool = False
    """Both players lose (both absent, 14.3; both declared lost, 15.3)."""

    @property
    def result(self) -> str:
        if self.double_loss:
            return "double-loss"
        return self.winner.value if self.winner else "draw"


class AdjudicationMode(enum.Enum):
    """Who acts on Black's forbidden moves."""

    AUTOMATIC = "automatic"
    """The platform or the service rules at once (35.1)."""
    CLAIM = "claim"
    """White must point it out: a 3-3 or 4-4 lapses once White moves, an overline can be claimed until the game
    ends (19.1.2 A, B)."""


@dataclass(frozen=True, slots=True)
class GameSettings:
    rule: str = "renju"
    opening: str | None = None
    """None: the rule set's default (``free``, or ``swap2`` for the ``swap2`` rule)."""
    adjudication: AdjudicationMode = AdjudicationMode.AUTOMATIC
    five_eye: FiveEye = FiveEye.ENGINE
    max_candidates: int | None = None
    """An event's cap on the number of fifth-move candidates Black may declare (11.1.2)."""
    min_stones_before_pass: int = 5
    """Passing is refused in the first 5 moves (9.4), counted in stones on the board."""


@dataclass(frozen=True, slots=True)
class PendingForbidden:
    """A forbidden move by Black that White has not (yet) claimed, under claim-based adjudication."""

    kind: ForbiddenKind
    point: int
    ply: int


@dataclass(frozen=True, slots=True)
class Game:
    """An immutable game state.  Start one with :meth:`Game.new`; advance it with :meth:`apply`."""

    settings: GameSettings
    rules: RuleSet
    opening: OpeningProtocol
    opening_state: OpeningState
    position: Position = field(default_factory=Position)
    to_move: Color = Color.BLACK
    black_player: Player = Player.FIRST
    actions: tuple[Action, ...] = ()
    stone_points: tuple[int, ...] = ()
    """The stones in the order placed: stone k (1-based) is Black's when k is odd (13.2)."""
    passes_in_a_row: int = 0
    pending: tuple[PendingForbidden, ...] = ()
    outcome: Outcome | None = None

    @classmethod
    def new(cls, settings: GameSettings | None = None, **overrides: object) -> Game:
        """A new game; keyword arguments override fields of :class:`GameSettings` (e.g. ``rule="swap2"``)."""
        settings = dataclasses.replace(settings or GameSettings(), **overrides)  # type: ignore[arg-type]
        rules = find_rule_set(settings.rule)
        opening = find_opening(settings.opening or rules.default_opening, settings.max_candidates)
        return cls(settings=settings, rules=rules, opening=opening, opening_state=opening.initial())

    # --- Queries ------------------------------------------------------------------------------------------------

    @property
    def ply(self) -> int:
        """Actions applied so far."""
        return len(self.actions)

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def in_opening(self) -> bool:
        return self.opening_state.phase != "done"

    @property
    def moves_6_2(self) -> int:
        """Moves as art. 6.2 counts them: a designated opening's three stones count as one, a swap, the giving of
        candidates and a pass each count as one, a declined swap counts as none."""
        count = 0
        stones = 0
        designated = self.opening.sets_out_designated_opening
        for action in self.actions:
            if isinstance(action, Stone):
                stones += 1
                if designated and stones in (1, 2):
                    continue
                count += 1
            elif isinstance(action, (Swap, Offer, Pass)):
                count += 1
            elif isinstance(action, Choose):
                stones += 1
        return count

    def due(self) -> Due | None:
        """The opening decision that is due, or None once the opening is complete (or the game over)."""
        if self.outcome is not None:
            return None
        return self.opening.due(self.opening_state, self._context())

    def player_of(self, color: Color) -> Player:
        return self.black_player if color is Color.BLACK else self.black_player.other

    def _context(self) -> OpeningContext:
        return OpeningContext(self.position, self.black_player)

    # --- Actions ------------------------------------------------------------------------------------------------

    def play(self, token: str) -> Game:
        """Apply one record token (``"h8"``, ``"pass"``, ``"swap"``…)."""
        return self.apply(parse_action(token))

    def apply(self, action: Action) -> Game:
        """The game after ``action``; :class:`IllegalActionError` (state unchanged) if the rules do not allow it."""
        if self.outcome is not None:
            raise GameOverError(
                f"the game is over ({self.outcome.termination.value} at ply {self.outcome.ply})",
                self.outcome.article,
            )
        ply = self.ply + 1
        if isinstance(action, Resign):
            return self._end(action, Termination.RESIGNATION, action.color.other, ply)
        if isinstance(action, AgreeDraw):
            return self._end(action, Termination.AGREED_DRAW, None, ply)
        if isinstance(action, ClaimForbidden):
            return self._claim(action, ply)
        if self.in_opening:
            return self._apply_opening(action, ply)
        if isinstance(action, Stone):
            return self._place(action, action.point, ply)
        if isinstance(action, Pass):
            return self._pass(action, ply)
        raise IllegalActionError(f"'{action.token()}' is only allowed during the opening, which is complete")

    def _apply_opening(self, action: Action, ply: int) -> Game:
        if isinstance(action, Pass):
            raise IllegalActionError("passing is not allowed during the opening", "9.4")
        if isinstance(action, Stone):
            self._check_empty(action.point)
        step = self.opening.apply(self.opening_state, action, self._context())
        game = evolve(self, opening_state=step.state)
        if step.swap:
            game = evolve(game, black_player=game.black_player.other)
        if isinstance(action, Stone):
            return game._place(action, action.point, ply)
        if step.place is not None:
            self._check_empty(step.place)
            return game._place(action, step.place, ply)
        return evolve(game, actions=(*game.actions, action))

    def _check_empty(self, point: int) -> None:
        if not self.position.is_empty(point):
            raise IllegalActionError(f"{format_point(point)} is already occupied", "6.1")

    def _place(self, action: Action, point: int, ply: int) -> Game:
        self._check_empty(point)
        color = self.to_move
        verdict = self.rules.judge(self.position, point, color, self.settings.five_eye)
        pending = self.pending
        if color is Color.WHITE and pending:
            # 19.1.2 A: a 3-3 or 4-4 not pointed out before White moves no longer stands; an overline does (B).
            pending = tuple(p for p in pending if p.kind is ForbiddenKind.OVERLINE)
        game = evolve(
            self,
            position=self.position.place(point, color),
            to_move=color.other,
            actions=(*self.actions, action),
            stone_points=(*self.stone_points, point),
            passes_in_a_row=0,
            pending=pending,
        )
        if verdict.effect is StoneEffect.FIVE:
            return evolve(game, outcome=Outcome(Termination.FIVE, color, ply, verdict.article or "19.1.1"))
        if verdict.effect is StoneEffect.FORBIDDEN:
            assert verdict.forbidden is not None
            if self.settings.adjudication is AdjudicationMode.AUTOMATIC:
                termination = _FORBIDDEN_TERMINATION[verdict.forbidden]
                return evolve(game, outcome=Outcome(termination, Color.WHITE, ply, f"{termination.article}, 35.1"))
            game = evolve(game, pending=(*game.pending, PendingForbidden(verdict.forbidden, point, ply)))
        if game.position.is_full:
            return evolve(game, outcome=Outcome(Termination.BOARD_FULL, None, ply, Termination.BOARD_FULL.article))
        return game

    def _pass(self, action: Pass, ply: int) -> Game:
        if self.position.stones < self.settings.min_stones_before_pass:
            raise IllegalActionError(
                f"passing is not allowed in the first {self.settings.min_stones_before_pass} moves", "9.4"
            )
        pending = self.pending
        if self.to_move is Color.WHITE:
            pending = tuple(p for p in pending if p.kind is ForbiddenKind.OVERLINE)
        game = evolve(
            self,
            to_move=self.to_move.other,
            actions=(*self.actions, action),
            passes_in_a_row=self.passes_in_a_row + 1,
            pending=pending,
        )
        if game.passes_in_a_row >= 2:
            return evolve(game, outcome=Outcome(Termination.DOUBLE_PASS, None, ply, Termination.DOUBLE_PASS.article))
        return game

    def _claim(self, action: ClaimForbidden, ply: int) -> Game:
        if self.settings.adjudication is not AdjudicationMode.CLAIM:
            raise IllegalActionError("forbidden moves are adjudicated automatically in this game", "35.1")
        if not self.pending:
            raise IllegalActionError(
                "there is no forbidden move to claim: a 3-3 or 4-4 must be pointed out before White moves",
                "19.1.2 A",
            )
        claimed = self.pending[-1] if self.pending[-1].kind is not ForbiddenKind.OVERLINE else self.pending[0]
        termination = _FORBIDDEN_TERMINATION[claimed.kind]
        return self._end(action, termination, Color.WHITE, ply, article=f"{termination.article} (claimed)")

    def _end(
        self, action: Action, termination: Termination, winner: Color | None, ply: int, article: str | None = None
    ) -> Game:
        outcome = Outcome(termination, winner, ply, article or termination.article)
        return evolve(self, actions=(*self.actions, action), outcome=outcome)

    def __repr__(self) -> str:
        return (
            f"<Game {self.rules.name}/{self.opening.name} ply={self.ply} "
            f"to_move={self.to_move.value} outcome={self.outcome}>"
        )
