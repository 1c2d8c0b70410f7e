"""Rule sets: which lines win and which moves are forbidden, registered by name.

================  ==========================================  =====================================
name              what ends the game on a stone                article
================  ==========================================  =====================================
``renju``         Black: exact five; 3-3, 4-4, overline lose   8, 11.1, 19.1.2 C
                  White: five or overline wins
``freestyle``     five or overline wins, for both              11.2.1 B
``swap2``         exact five only; an overline neither wins    11.2.2 C
                  nor loses
================  ==========================================  =====================================
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from engine.board import LINE_OF, Color, Position
from engine.errors import UnknownNameError
from engine.forbidden import FiveEye, ForbiddenKind, forbidden_kind, makes_five


class StoneEffect(enum.Enum):
    """What one stone does under a rule set."""

    NOTHING = "nothing"
    FIVE = "five"
    FORBIDDEN = "forbidden"


@dataclass(frozen=True, slots=True)
class StoneVerdict:
    effect: StoneEffect
    forbidden: ForbiddenKind | None = None
    article: str | None = None


_NOTHING = StoneVerdict(StoneEffect.NOTHING)


def run_lengths(position: Position, point: int, color: Color) -> tuple[int, ...]:
    """The run ``color`` would have through the empty ``point`` in each of the four directions, if it played there."""
    stone = color.stone
    runs = []
    for line, index in LINE_OF[point]:
        text = position.lines[line]
        left = index - 1
        while text[left] == stone:
            left -= 1
        right = index + 1
        while text[right] == stone:
            right += 1
        runs.append(right - left - 1)
    return tuple(runs)


class RuleSet:
    """A named rule set.  ``judge`` is asked before a stone is placed, with the position it is placed on."""

    name: ClassVar[str]
    article: ClassVar[str]
    forbidden_moves: ClassVar[bool] = False
    """Black has forbidden moves (professional rules, 11.1)."""
    default_opening: ClassVar[str] = "free"
    description: ClassVar[str]

    def judge(self, position: Position, point: int, color: Color, five_eye: FiveEye) -> StoneVerdict:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"<RuleSet {self.name}>"


class Renju(RuleSet):
    name = "renju"
    article = "11.1"
    forbidden_moves = True
    description = "Black's 3-3, 4-4 and overline are forbidden; an exact five wins first; White's overline wins"

    def judge(self, position: Position, point: int, color: Color, five_eye: FiveEye) -> StoneVerdict:
        if color is Color.BLACK:
            if makes_five(position, point):
                return StoneVerdict(StoneEffect.FIVE, article="19.1.2 C")
            kind = forbidden_kind(position, point, five_eye)
            if kind is not None:
                return StoneVerdict(StoneEffect.FORBIDDEN, kind, kind.article)
            return _NOTHING
        if max(run_lengths(position, point, color)) >= 5:
            return StoneVerdict(StoneEffect.FIVE, article="19.1.1")
        return _NOTHING


class Freestyle(RuleSet):
    name = "freestyle"
    article = "11.2.1"
    description = "no forbidden moves; five or overline wins for both"

    def judge(self, position: Position, point: int, color: Color, five_eye: FiveEye) -> StoneVerdict:
        if max(run_lengths(position, point, color)) >= 5:
            return StoneVerdict(StoneEffect.FIVE, article="11.2.1 B")
        return _NOTHING


class Swap2Rules(RuleSet):
    name = "swap2"
    article = "11.2.2"
    default_opening = "swap2"
    description = "no forbidden moves; only an exact five wins, an overline neither wins nor loses"

    def judge(self, position: Position, point: int, color: Color, five_eye: FiveEye) -> StoneVerdict:
        if 5 in run_lengths(position, point, color):
            return StoneVerdict(StoneEffect.FIVE, article="11.2.2 C")
        return _NOTHING


RULE_SETS: dict[str, type[RuleSet]] = {cls.name: cls for cls in (Renju, Freestyle, Swap2Rules)}


def find_rule_set(name: str) -> RuleSet:
    """The registered rule set called ``name``; :class:`UnknownNameError` names the known ones otherwise."""
    try:
        return RULE_SETS[name.strip().lower()]()
    except (KeyError, AttributeError):
        known = ", ".join(sorted(RULE_SETS))
        raise UnknownNameError(f"unknown rule set {name!r}: expected one of {known}") from None
