"""What players do in a game, as immutable values, and their record tokens.

Tokens are what game records and the command line use: ``h8`` (a stone), ``pass``, ``swap``, ``keep`` (decline a
swap or colour choice), ``declare:3`` (Black states how many fifth-move candidates, 11.1.2 A), ``offer:j10,k11``
(fifth-move candidates, 6.2), ``choose:j10`` (White picks a candidate), ``add2`` (Swap2 option c: the second player
will place one white and one black stone, 11.2.2 B c), ``claim`` (White points out a forbidden move, 19.1.2),
``resign:black`` / ``resign:white`` (35.2) and ``draw`` (a draw agreed by both, 19.2.1 A).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.board import Color, format_point, parse_point
from engine.errors import NotationError


@dataclass(frozen=True, slots=True)
class Stone:
    """Place a stone of the colour whose turn it is (6.1)."""

    point: int

    def token(self) -> str:
        return format_point(self.point)


@dataclass(frozen=True, slots=True)
class Pass:
    """Give up the right to move (9.4)."""

    def token(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Swap:
    """Exercise a right to swap colours (11.1, 11.2.2); counts as a move (6.2)."""

    def token(self) -> str:
        return "swap"


@dataclass(frozen=True, slots=True)
class Keep:
    """Decline a right to swap or a colour choice explicitly (placing the next stone declines it too)."""

    def token(self) -> str:
        return "keep"


@dataclass(frozen=True, slots=True)
class Declare:
    """Black states how many fifth-move candidates he will give (11.1.2 A)."""

    count: int

    def token(self) -> str:
        return f"declare:{self.count}"


@dataclass(frozen=True, slots=True)
class Offer:
    """Black gives fifth-move candidates (打点, 11.1.1 D b, 11.1.2 C, 11.1.3 C); counts as a move (6.2)."""

    points: tuple[int, ...]

    def token(self) -> str:
        return "offer:" + ",".join(format_point(p) for p in self.points)


@dataclass(frozen=True, slots=True)
class Choose:
    """White picks one of the candidates; it becomes Black's fifth stone (11.1.2 D)."""

    point: int

    def token(self) -> str:
        return f"choose:{format_point(self.point)}"


@dataclass(frozen=True, slots=True)
class AddTwo:
    """Swap2 option c: the second player places one white and then one black stone (11.2.2 B c)."""

    def token(self) -> str:
        return "add2"


@dataclass(frozen=True, slots=True)
class ClaimForbidden:
    """White points out Black's forbidden move (19.1.2) under claim-based adjudication."""

    def token(self) -> str:
        return "claim"


@dataclass(frozen=True, slots=True)
class Resign:
    """A player resigns (35.2)."""

    color: Color

    def token(self) -> str:
        return f"resign:{self.color.value}"


@dataclass(frozen=True, slots=True)
class AgreeDraw:
    """Both players agree to a draw (19.2.1 A, 35.4)."""

    def token(self) -> str:
        return "draw"


Action = Stone | Pass | Swap | Keep | Declare | Offer | Choose | AddTwo | ClaimForbidden | Resign | AgreeDraw

_SIMPLE: dict[str, Action] = {
    "pass": Pass(),
    "swap": Swap(),
    "keep": Keep(),
    "add2": AddTwo(),
    "claim": ClaimForbidden(),
    "draw": AgreeDraw(),
}


def parse_action(token: str) -> Action:
    """Read one record token (see the module's doc); :class:`NotationError` says what is wrong."""
    if not isinstance(token, str):
        raise NotationError(f"a move must be a string such as 'h8' or 'pass', not {type(token).__name__}")
    text = token.strip().lower()
    if text in _SIMPLE:
        return _SIMPLE[text]
    verb, colon, argument = text.partition(":")
    if colon:
        if verb == "declare":
            if not argument.isdigit():
                raise NotationError(f"{token!r}: declare takes a number of candidates, e.g. 'declare:3'")
            return Declare(int(argument))
        if verb == "offer":
            parts = [part for part in argument.split(",") if part.strip()]
            if not parts:
                raise NotationError(f"{token!r}: offer takes candidate points, e.g. 'offer:j10,k11'")
            return Offer(tuple(parse_point(part) for part in parts))
        if verb == "choose":
            return Choose(parse_point(argument))
        if verb == "resign":
            try:
                return Resign(Color(argument))
            except ValueError:
                raise NotationError(f"{token!r}: resign takes 'black' or 'white'") from None
        raise NotationError(f"{token!r}: unknown move keyword {verb!r}")
    try:
        return Stone(parse_point(text))
    except NotationError as error:
        raise NotationError(
            f"{token!r} is neither a point (a1–o15) nor a keyword "
            "(pass, swap, keep, add2, claim, draw, declare:N, offer:P,Q, choose:P, resign:COLOUR)"
        ) from error


def format_action(action: Action) -> str:
    return action.token()
