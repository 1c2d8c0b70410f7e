"""Opening protocols as state machines (9.7, 11.1, 11.2).

A protocol says, for each state, whose decision is due and what is legal next (:class:`Due`), and checks each action
against it.  Stones still alternate Black, White, Black… by stone number (13.2); what the protocols change is who
places them, where, and the colour swaps.  Players are named by :class:`Player`: the first player is the one who
held Black at the start (art. 10).

Decisions the rules leave open, and how they are read here (docs/rules-engine.md):

- Placing the next stone declines a pending right to swap; ``keep`` declines it explicitly.
- Fifth-move candidates "must not be symmetrical": two candidates are symmetric when one of the 8 symmetries of the
  board (about h8) maps the four-stone position onto itself and one candidate onto the other.
- In Taraguchi-10 the player who may swap after the 4th stone chooses between branch a (swap or not, then a single
  5th stone in the 9x9 area) and branch b (10 candidates, without a swap).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Final, NoReturn, Protocol

from engine.actions import Action, AddTwo, Choose, Declare, Keep, Offer, Stone, Swap
from engine.board import CENTER, SYMMETRIES, Position, column_of, format_point, parse_point, row_of
from engine.errors import IllegalActionError, UnknownNameError


class Player(enum.Enum):
    FIRST = "first"
    """The player who held Black at the start of the game (art. 10)."""
    SECOND = "second"

    @property
    def other(self) -> Player:
        return Player.SECOND if self is Player.FIRST else Player.FIRST


class Option(enum.Enum):
    """The kinds of action a protocol can be waiting for."""

    STONE = "stone"
    SWAP = "swap"
    KEEP = "keep"
    DECLARE = "declare"
    OFFER = "offer"
    CHOOSE = "choose"
    ADD_TWO = "add2"


def zone(size: int) -> frozenset[int]:
    """The ``size`` x ``size`` area centred on h8 (3x3 = g7–i9, 5x5 = f6–j10, 7x7 = e5–k11, 9x9 = d4–l12)."""
    radius = size // 2
    return frozenset(p for p in range(225) if abs(column_of(p) - 7) <= radius and abs(row_of(p) - 7) <= radius)


@dataclass(frozen=True, slots=True)
class Due:
    """The decision the opening is waiting for."""

    actor: Player
    options: frozenset[Option]
    article: str
    prompt: str
    zone: frozenset[int] | None = None
    """Where the next stone may go, when a stone is an option (None: any empty point)."""
    count: int | None = None
    """How many candidates to offer, when an offer is an option."""
    candidates: tuple[int, ...] = ()
    """The candidates to choose from, when a choice is due."""


@dataclass(frozen=True, slots=True)
class OpeningState:
    phase: str
    declared: int | None = None
    candidates: tuple[int, ...] = ()
    swaps: int = 0


DONE: Final = "done"


@dataclass(frozen=True, slots=True)
class Step:
    """The result of one opening action: the new state, whether colours swap, and which stone to place."""

    state: OpeningState
    swap: bool = False
    place: int | None = None


@dataclass(frozen=True, slots=True)
class OpeningContext:
    """What a protocol needs to know of the game."""

    position: Position
    black_player: Player


# --- The 26 designated openings (Appendix; 9.7) ------------------------------------------------------------------

#: (Chinese name, romaji name, kind, third stone); the first two stones are h8 and h9 (direct) or i9 (diagonal).
_OPENING_TABLE: Final = (
    ("寒星", "Kansei", "direct", "h10"),
    ("溪月", "Keigetsu", "direct", "i10"),
    ("疏星", "Sosei", "direct", "j10"),
    ("花月", "Kagetsu", "direct", "i9"),
    ("残月", "Zangetsu", "direct", "j9"),
    ("雨月", "Ugetsu", "direct", "i8"),
    ("金星", "Kinsei", "direct", "j8"),
    ("松月", "Shogetsu", "direct", "h7"),
    ("丘月", "Kyugetsu", "direct", "i7"),
    ("新月", "Shingetsu", "direct", "j7"),
    ("瑞星", "Zuisei", "direct", "h6"),
    ("山月", "Sangetsu", "direct", "i6"),
    ("游星", "Yusei", "direct", "j6"),
    ("长星", "Chosei", "diagonal", "j10"),
    ("峡月", "Kyogetsu", "diagonal", "j9"),
    ("恒星", "Kosei", "diagonal", "j8"),
    ("水月", "Suigetsu", "diagonal", "j7"),
    ("流星", "Ryusei", "diagonal", "j6"),
    ("云月", "Ungetsu", "diagonal", "i8"),
    ("浦月", "Hogetsu", "diagonal", "i7"),
    ("岚月", "Rangetsu", "diagonal", "i6"),
    ("银月", "Gingetsu", "diagonal", "h7"),
    ("明星", "Meisei", "diagonal", "h6"),
    ("斜月", "Shagetsu", "diagonal", "g7"),
    ("名月", "Meigetsu", "diagonal", "g6"),
    ("彗星", "Suisei", "diagonal", "f6"),
)


@dataclass(frozen=True, slots=True)
class DesignatedOpening:
    name_zh: str
    name_romaji: str
    kind: str
    moves: tuple[str, str, str]


def _designated_openings() -> tuple[DesignatedOpening, ...]:
    return tuple(
        DesignatedOpening(zh, romaji, kind, ("h8", "h9" if kind == "direct" else "i9", third))
        for zh, romaji, kind, third in _OPENING_TABLE
    )


DESIGNATED_OPENINGS: Final = _designated_openings()


def _build_opening_index() -> dict[tuple[int, int], DesignatedOpening]:
    index: dict[tuple[int, int], DesignatedOpening] = {}
    for opening in DESIGNATED_OPENINGS:
        white, black = parse_point(opening.moves[1]), parse_point(opening.moves[2])
        for table in SYMMETRIES:
            index.setdefault((table[white], table[black]), opening)
    return index


_OPENING_INDEX: Final = _build_opening_index()


def recognise_opening(first: int, second: int, third: int) -> DesignatedOpening | None:
    """Which of the 26 openings Black 1, White 2, Black 3 form, under the board's 8 symmetries (9.7)."""
    if first != CENTER:
        return None
    return _OPENING_INDEX.get((second, third))


def symmetric_pair(position: Position, candidates: tuple[int, ...]) -> tuple[int, int] | None:
    """Two candidates that a symmetry of the board keeping ``position`` unchanged maps onto each other, if any."""
    cells = position.cells
    chosen = set(candidates)
    for table in SYMMETRIES[1:]:
        if any(cells[table[p]] != cells[p] for p in range(225)):
            continue
        for point in candidates:
            image = table[point]
            if image != point and image in chosen:
                return point, image
    return None


# --- Protocols -----------------------------------------------------------------------------------------------------


class Refuse(Protocol):
    def __call__(self, why: str) -> NoReturn: ...


@dataclass(frozen=True, slots=True)
class Phase:
    """One state of a protocol: who acts, what they may do, where a stone may go, and the phase after each action."""

    actor: str
    """"black" or "white" (whoever holds that colour now), or "first" or "second" (a fixed player)."""
    options: frozenset[Option]
    article: str
    prompt: str
    zone: frozenset[int] | None = None
    on_stone: str = DONE
    on_swap: str = DONE
    on_keep: str = DONE
    on_declare: str = DONE


def _options(*names: Option) -> frozenset[Option]:
    return frozenset(names)


STONE_ONLY: Final = _options(Option.STONE)
SWAP_OR_STONE: Final = _options(Option.SWAP, Option.KEEP, Option.STONE)


class OpeningProtocol:
    """A named opening protocol; subclasses build their phases in ``__init__``."""

    name: str
    article: str
    description: str
    phases: dict[str, Phase]
    start: str = DONE
    sets_out_designated_opening: bool = False
    """Black sets out one of the 26 openings: its three stones count as one move (6.2)."""

    def __init__(self) -> None:
        self.phases = {}

    def initial(self) -> OpeningState:
        return OpeningState(self.start)

    def candidate_count(self, state: OpeningState) -> int:
        """How many fifth-move candidates Black must give."""
        return state.declared or 0

    def due(self, state: OpeningState, context: OpeningContext) -> Due | None:
        """The decision the opening is waiting for, or None once the opening is complete."""
        if state.phase == DONE:
            return None
        phase = self.phases[state.phase]
        count = self.candidate_count(state)
        return Due(
            actor=self._actor(phase, context),
            options=phase.options,
            article=phase.article,
            prompt=phase.prompt.format(n=count),
            zone=phase.zone,
            count=count if Option.OFFER in phase.options else None,
            candidates=state.candidates if Option.CHOOSE in phase.options else (),
        )

    @staticmethod
    def _actor(phase: Phase, context: OpeningContext) -> Player:
        if phase.actor == "black":
            return context.black_player
        if phase.actor == "white":
            return context.black_player.other
        return Player(phase.actor)

    def apply(self, state: OpeningState, action: Action, context: OpeningContext) -> Step:
        """Check ``action`` against the phase and return the step; raise :class:`IllegalActionError` otherwise."""
        phase = self.phases[state.phase]
        count = self.candidate_count(state)

        def refuse(why: str) -> NoReturn:
            raise IllegalActionError(f"{why}; due now: {phase.prompt.format(n=count)}", phase.article)

        if isinstance(action, Stone):
            if Option.STONE not in phase.options:
                if Option.OFFER in phase.options and count == 1:  # one candidate is simply the fifth stone
                    return Step(replace(state, phase=DONE, candidates=(action.point,)))
                refuse(f"a stone ({action.token()}) is not allowed here")
            if phase.zone is not None and action.point not in phase.zone:
                refuse(f"{action.token()} is outside the area allowed for this stone")
            return Step(replace(state, phase=phase.on_stone))
        if isinstance(action, Swap):
            if Option.SWAP not in phase.options:
                refuse("no swap is due here")
            return Step(replace(state, phase=phase.on_swap, swaps=state.swaps + 1), swap=True)
        if isinstance(action, Keep):
            if Option.KEEP not in phase.options:
                refuse("there is no swap or colour choice to decline here")
            return Step(replace(state, phase=phase.on_keep))
        if isinstance(action, Declare):
            if Option.DECLARE not in phase.options:
                refuse("no declaration of the number of candidates is due here")
            self.check_declaration(action.count, refuse)
            return Step(replace(state, phase=phase.on_declare, declared=action.count))
        if isinstance(action, Offer):
            if Option.OFFER not in phase.options:
                refuse("no fifth-move candidates are due here")
            self._check_offer(count, action.points, context, refuse)
            return Step(replace(state, phase="choose", candidates=action.points))
        if isinstance(action, Choose):
            if Option.CHOOSE not in phase.options:
                refuse("no choice of candidate is due here")
            if action.point not in state.candidates:
                offered = ", ".join(format_point(p) for p in state.candidates)
                refuse(f"{action.token()} is not one of the candidates offered ({offered})")
            return Step(replace(state, phase=DONE), place=action.point)
        if isinstance(action, AddTwo):
            if Option.ADD_TWO not in phase.options:
                refuse("Swap2's option c is not available here")
            return Step(replace(state, phase="add-white"))
        refuse(f"'{action.token()}' is not allowed during the opening")

    def check_declaration(self, count: int, refuse: Refuse) -> None:
        refuse("this opening takes no declaration")

    @staticmethod
    def _check_offer(wanted: int, points: tuple[int, ...], context: OpeningContext, refuse: Refuse) -> None:
        if len(points) != wanted:
            refuse(f"{wanted} fifth-move candidates are due, {len(points)} were given")
        if len(set(points)) != len(points):
            refuse("the candidates must be different points")
        for point in points:
            if not context.position.is_empty(point):
                refuse(f"candidate {format_point(point)} is not an empty point")
        pair = symmetric_pair(context.position, points)
        if pair is not None:
            a, b = (format_point(p) for p in pair)
            refuse(f"candidates {a} and {b} are symmetrical")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), self.name))

    def __repr__(self) -> str:
        return f"<OpeningProtocol {self.name}>"


def _designated_phases(article: str, last: str) -> dict[str, Phase]:
    """Black sets out one of the 26 openings: Black 1 on h8, White 2 in 3x3, Black 3 in 5x5 (9.7)."""
    return {
        "black-1": Phase("black", STONE_ONLY, f"{article}", "Black places the 1st stone on h8", frozenset({CENTER}),
                         on_stone="white-2"),
        "white-2": Phase("black", STONE_ONLY, f"{article}", "Black places White's 2nd stone within g7–i9", zone(3),
                         on_stone="black-3"),
        "black-3": Phase("black", STONE_ONLY, f"{article}", "Black places the 3rd stone within f6–j10", zone(5),
                         on_stone=last),
    }  # fmt: skip


class FreeOpening(OpeningProtocol):
    name = "free"
    article = "11.2.1"
    description = "no opening protocol: the players alternate from the first stone"


class Designated(OpeningProtocol):
    name = "designated"
    article = "9.7"
    description = "Black sets out one of the 26 designated openings, then play alternates from White's 4th stone"
    start = "black-1"
    sets_out_designated_opening = True

    def __init__(self) -> None:
        super().__init__()
        self.phases = _designated_phases("9.7", DONE)


class Soosorv(OpeningProtocol):
    """Five-move N-dot (11.1.2): Black sets out an opening and declares N; White may swap; White plays the 4th stone
    anywhere; Black gives N non-symmetrical fifth stones; White picks one and plays the 6th.

    ``fixed`` sets N in advance (``soosorv-2``); ``cap`` bounds what Black may declare (an event setting).
    """

    name = "soosorv"
    article = "11.1.2"
    description = "five-move N-dot: designated opening, N declared by Black, swap, N fifth-move candidates"
    start = "black-1"
    sets_out_designated_opening = True

    def __init__(self, fixed: int | None = None, cap: int | None = None) -> None:
        super().__init__()
        self.fixed = fixed
        self.cap = cap
        if fixed is not None:
            self.name = f"soosorv-{fixed}"
        a = self.article
        self.phases = _designated_phases(f"9.7, {a} A", "declare" if fixed is None else "swap")
        self.phases.update({
            "declare": Phase("black", _options(Option.DECLARE), f"{a} A",
                             "Black states how many fifth-move candidates he will give", on_declare="swap"),
            "swap": Phase("white", SWAP_OR_STONE, f"{a} A",
                          "White may swap, or places the 4th stone anywhere", on_stone="offer", on_swap="white-4",
                          on_keep="white-4"),
            "white-4": Phase("white", STONE_ONLY, f"{a} B", "White places the 4th stone anywhere", on_stone="offer"),
            "offer": Phase("black", _options(Option.OFFER), f"{a} C",
                           "Black gives {n} fifth-move candidates that are not symmetrical"),
            "choose": Phase("white", _options(Option.CHOOSE), f"{a} D",
                            "White chooses one of the fifth-move candidates, then plays the 6th stone"),
        })  # fmt: skip

    def candidate_count(self, state: OpeningState) -> int:
        return self.fixed if self.fixed is not None else state.declared or 0

    def check_declaration(self, count: int, refuse: Refuse) -> None:
        if count < 1:
            refuse("Black must give at least one fifth-move candidate")
        if self.cap is not None and count > self.cap:
            refuse(f"this event allows at most {self.cap} fifth-move candidates")


class FiveMoveTwo(Soosorv):
    """Five-move two-dot (11.1.3): five-move N-dot with N fixed at 2."""

    article = "11.1.3"
    description = "five-move two-dot: designated opening, swap, 2 fifth-move candidates"

    def __init__(self) -> None:
        super().__init__(fixed=2)
        self.name = "five-move-two"


class Taraguchi(OpeningProtocol):
    """Taraguchi-10 (11.1.1): stones in growing areas around h8 with a swap after each; after the 4th stone the
    player holding Black either may swap and plays one 5th stone in the 9x9 area (branch a), or gives 10 fifth-move
    candidates (branch b)."""

    name = "taraguchi-10"
    article = "11.1.1"
    description = "Taraguchi-10: swaps after each of the first stones, then one 5th stone or 10 candidates"
    start = "black-1"

    def __init__(self, candidates: int = 10) -> None:
        super().__init__()
        self.candidates = candidates
        branch = _options(Option.SWAP, Option.KEEP, Option.STONE, Option.OFFER)
        self.phases = {
            "black-1": Phase("black", STONE_ONLY, "11.1.1 A", "Black places the 1st stone on h8",
                             frozenset({CENTER}), on_stone="swap-1"),
            "swap-1": Phase("white", SWAP_OR_STONE, "11.1.1 A",
                            "White may swap, or places the 2nd stone within g7–i9", zone(3),
                            on_stone="swap-2", on_swap="white-2", on_keep="white-2"),
            "white-2": Phase("white", STONE_ONLY, "11.1.1 B", "White places the 2nd stone within g7–i9", zone(3),
                             on_stone="swap-2"),
            "swap-2": Phase("black", SWAP_OR_STONE, "11.1.1 B",
                            "Black may swap, or places the 3rd stone within f6–j10", zone(5),
                            on_stone="swap-3", on_swap="black-3", on_keep="black-3"),
            "black-3": Phase("black", STONE_ONLY, "11.1.1 C", "Black places the 3rd stone within f6–j10", zone(5),
                             on_stone="swap-3"),
            "swap-3": Phase("white", SWAP_OR_STONE, "11.1.1 C",
                            "White may swap, or places the 4th stone within e5–k11", zone(7),
                            on_stone="branch", on_swap="white-4", on_keep="white-4"),
            "white-4": Phase("white", STONE_ONLY, "11.1.1 D", "White places the 4th stone within e5–k11", zone(7),
                             on_stone="branch"),
            "branch": Phase("black", branch, "11.1.1 D",
                            "Black may swap and then a 5th stone is placed within d4–l12 (a), or gives {n} "
                            "fifth-move candidates (b)", zone(9),
                            on_stone="swap-5", on_swap="black-5", on_keep="branch-kept"),
            "branch-kept": Phase("black", _options(Option.STONE, Option.OFFER), "11.1.1 D",
                                 "Black places the 5th stone within d4–l12 (a) or gives {n} fifth-move candidates (b)",
                                 zone(9), on_stone="swap-5"),
            "black-5": Phase("black", STONE_ONLY, "11.1.1 D a", "Black places the 5th stone within d4–l12", zone(9),
                             on_stone="swap-5"),
            "swap-5": Phase("white", SWAP_OR_STONE, "11.1.1 D a", "White may swap, or places the 6th stone anywhere",
                            on_stone=DONE, on_swap="white-6", on_keep="white-6"),
            "white-6": Phase("white", STONE_ONLY, "11.1.1 D a", "White places the 6th stone anywhere"),
            "choose": Phase("white", _options(Option.CHOOSE), "11.1.1 D b",
                            "White chooses one of the fifth-move candidates, then plays the 6th stone"),
        }  # fmt: skip

    def candidate_count(self, state: OpeningState) -> int:
        return self.candidates


class Swap2(OpeningProtocol):
    """Swap2 (11.2.2): the first player places 2 black and 1 white stones; the second player takes White and plays
    (a), swaps (b), or adds a white and a black stone (c), after which the first player chooses the colour."""

    name = "swap2"
    article = "11.2.2"
    description = "Swap2: three stones, then play as White, swap, or add two stones and let the first player choose"
    start = "stone-1"

    def __init__(self) -> None:
        super().__init__()
        self.phases = {
            "stone-1": Phase("first", STONE_ONLY, "11.2.2 A", "The first player places the 1st (black) stone anywhere",
                             on_stone="stone-2"),
            "stone-2": Phase("first", STONE_ONLY, "11.2.2 A", "The first player places the 2nd (white) stone anywhere",
                             on_stone="stone-3"),
            "stone-3": Phase("first", STONE_ONLY, "11.2.2 A", "The first player places the 3rd (black) stone anywhere",
                             on_stone="decide"),
            "decide": Phase("second", _options(Option.STONE, Option.SWAP, Option.ADD_TWO), "11.2.2 B",
                            "The second player takes White and plays the 4th stone (a), swaps to Black (b), "
                            "or adds a white and a black stone (c)"),
            "add-white": Phase("second", STONE_ONLY, "11.2.2 B c", "The second player places a white stone",
                               on_stone="add-black"),
            "add-black": Phase("second", STONE_ONLY, "11.2.2 B c", "The second player places a black stone",
                               on_stone="colour"),
            "colour": Phase("first", SWAP_OR_STONE, "11.2.2 B c",
                            "The first player may swap (take White); White then plays the 6th stone"),
        }  # fmt: skip


def find_opening(name: str, max_candidates: int | None = None) -> OpeningProtocol:
    """The opening protocol registered as ``name``: ``free``, ``designated``, ``soosorv`` (N declared),
    ``soosorv-N``, ``five-move-two``, ``taraguchi-10`` or ``swap2``.  ``max_candidates`` caps a declared N."""
    key = name.strip().lower() if isinstance(name, str) else ""
    if key == "free":
        return FreeOpening()
    if key == "designated":
        return Designated()
    if key == "soosorv":
        return Soosorv(cap=max_candidates)
    match = re.fullmatch(r"soosorv-(\d{1,2})", key)
    if match and int(match.group(1)) >= 1:
        return Soosorv(fixed=int(match.group(1)))
    if key == "five-move-two":
        return FiveMoveTwo()
    if key == "taraguchi-10":
        return Taraguchi()
    if key == "swap2":
        return Swap2()
    raise UnknownNameError(
        f"unknown opening {name!r}: expected free, designated, soosorv, soosorv-N, five-move-two, taraguchi-10 or swap2"
    )


OPENING_NAMES: Final = ("free", "designated", "soosorv", "soosorv-N", "five-move-two", "taraguchi-10", "swap2")
