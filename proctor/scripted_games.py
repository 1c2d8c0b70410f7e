"""Games scripted for a simulated platform to play through the feed: the section's rule and opening protocol, played
by two small players, with the situations an arbiter meets (a forbidden move, a disconnect and a return, a late
arrival, a draw offer accepted or declined, a resignation).

The game is played here first, by the engine itself (:class:`engine.game.Game`), so that every action is legal and
the script knows how the game ends; the script is the feed a platform would send for it: ``player.joined``, the
opening's decisions (``opening.swap``, ``opening.declare``, ``opening.candidates``…), ``move``, the players' own
events (``draw.offered``, ``resign``…) and ``game.ended``, each at a time counted from the game's start.  The players
are greedy: each takes a five when there is one, blocks the opponent's, and otherwise lengthens its own lines, with a
little chance, so that games are short, decisive and all different.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, field
from typing import Any, Final

from engine.actions import Action, AddTwo, Choose, ClaimForbidden, Declare, Keep, Offer, Pass, Resign, Stone, Swap
from engine.board import SIZE, Color, column_of, format_point, point_at, row_of
from engine.errors import EngineError
from engine.forbidden import forbidden_points
from engine.game import AdjudicationMode, Game, GameSettings, Termination
from engine.openings import Option, Player

MAX_PLIES: Final = 150
"""A game still undecided after this many actions is resigned by the player to move (never seen in practice: the
greedy players decide a game in 20 to 60 moves)."""
FORBIDDEN_TERMINATIONS: Final = frozenset(
    {Termination.FORBIDDEN_33, Termination.FORBIDDEN_44, Termination.FORBIDDEN_OVERLINE}
)
DIRECTIONS: Final = ((1, 0), (0, 1), (1, 1), (1, -1))


class Twist(enum.Enum):
    """What happens in a game besides the moves."""

    NONE = "none"
    FORBIDDEN = "forbidden"
    """Black plays a forbidden point (renju: 8, 35.1), and loses (by White's claim where the section plays by claim,
    19.1.2)."""
    DISCONNECT = "disconnect"
    """The player to move drops off the platform and comes back a few seconds later (37.5, 37.6)."""
    LATE = "late"
    """A player enters the game after its start, within the section's lateness tolerance (14.3)."""
    DRAW_ACCEPTED = "draw-accepted"
    """A draw offered in the offerer's own time and accepted (19.2.1 A, 19.2.2)."""
    DRAW_DECLINED = "draw-declined"
    """A draw offered and declined; the game goes on (19.2.2 B)."""
    RESIGN = "resign"
    """The player who is behind resigns (35.2)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """A player as the platform knows them: their id on the platform and their name."""

    ref: str
    name: str


@dataclass(frozen=True, slots=True)
class ScriptedEvent:
    type: str
    offset_ms: int
    """When the platform sends it, from the game's scheduled start (negative: before it)."""
    data: dict[str, Any]


@dataclass
class ScriptedGame:
    """One game's feed and how the engine says it ends."""

    black: Seat
    white: Seat
    rule: str
    opening: str
    twist: Twist
    events: list[ScriptedEvent] = field(default_factory=list)
    result: str | None = None
    """``black``, ``white`` or ``draw``."""
    reason: str | None = None
    """The engine's termination (``five``, ``forbidden-33``, ``resignation``…)."""


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast the players are: each action takes ``think_ms`` on average (at least ``min_ms``)."""

    think_ms: float = 900.0
    min_ms: int = 150
    late_ms: int = 0
    """How long after the start a late player enters (0: the late twist is not played)."""


class _Board:
    """The stones as a grid of colours, for the players' choice (the engine judges every action)."""

    def __init__(self, game: Game) -> None:
        self.cells = [game.position.color_at(p) for p in range(SIZE * SIZE)]

    def lines(self, point: int, color: Color) -> tuple[int, float]:
        """The longest row of ``color`` through ``point`` (as if it were played), and the point's value for
        ``color``: each direction's row, more with open ends."""
        cells, column, row = self.cells, column_of(point), row_of(point)
        longest, value = 0, 0.0
        for dc, dr in DIRECTIONS:
            length, open_ends = 1, 0
            for sign in (1, -1):
                c, r = column + sign * dc, row + sign * dr
                while 0 <= c < SIZE and 0 <= r < SIZE and cells[r * SIZE + c] is color:
                    length += 1
                    c, r = c + sign * dc, r + sign * dr
                if 0 <= c < SIZE and 0 <= r < SIZE and cells[r * SIZE + c] is None:
                    open_ends += 1
            longest = max(longest, length)
            if open_ends or length >= 5:
                value += 6.0 ** min(length, 5) * (1 + open_ends)
        return longest, value

    def near(self, radius: int = 1) -> list[int]:
        found: set[int] = set()
        for p, cell in enumerate(self.cells):
            if cell is None:
                continue
            for dc in range(-radius, radius + 1):
                for dr in range(-radius, radius + 1):
                    c, r = column_of(p) + dc, row_of(p) + dr
                    if 0 <= c < SIZE and 0 <= r < SIZE and self.cells[point_at(c, r)] is None:
                        found.add(point_at(c, r))
        return sorted(found) or [point_at(7, 7)]


def _try(game: Game, action: Action) -> Game | None:
    try:
        return game.apply(action)
    except EngineError:
        return None


def _loses_by_forbidden(before: Game, after: Game) -> bool:
    """The stone is forbidden: the game lost at once, or (claim mode, 19.1.2) one more forbidden move to claim."""
    if after.outcome is not None:
        return after.outcome.termination in FORBIDDEN_TERMINATIONS
    return len(after.pending) > len(before.pending)


def _stone(game: Game, rng: random.Random, area: frozenset[int] | None, passive: bool = False) -> Game:
    """The mover's stone: a five if there is one, else block the opponent's, else the best-valued point (a few
    good ones drawn at random); never a forbidden point by accident."""
    board = _Board(game)
    me = game.to_move
    points = [p for p in (sorted(area) if area is not None else board.near()) if board.cells[p] is None]
    if not points:
        points = [p for p in range(SIZE * SIZE) if board.cells[p] is None]
    if passive:  # a careless player: anywhere near the stones
        rng.shuffle(points)
        ranked = points
    else:
        wins, scored = [], []
        for p in points:
            mine, attack = board.lines(p, me)
            _, defence = board.lines(p, me.other)
            if mine >= 5:
                wins.append(p)
            scored.append((attack * 1.1 + defence + rng.random(), p))
        scored.sort(reverse=True)
        top = [p for _, p in scored[:3]]
        rng.shuffle(top)
        ranked = wins + [p for p in top if p not in wins] + [p for _, p in scored[3:] if p not in wins]
    for point in ranked:
        after = _try(game, Stone(point))
        if after is not None and not _loses_by_forbidden(game, after):
            return after
    after = _try(game, Pass())
    if after is None:
        raise EngineError("no legal stone and no pass")
    return after


def _offer(game: Game, rng: random.Random, count: int) -> Game:
    """``count`` fifth-move candidates that are not symmetrical, near the centre."""
    board = _Board(game)
    near = [p for p in board.near(2) if board.cells[p] is None]
    for _ in range(200):
        after = _try(game, Offer(tuple(rng.sample(near, count))))
        if after is not None:
            return after
    raise EngineError(f"no {count} non-symmetrical candidates found")


def _opening_step(game: Game, rng: random.Random) -> Game:
    """One decision of the opening protocol, whichever it is (9.7, 11)."""
    due = game.due()
    assert due is not None
    options = due.options
    if Option.DECLARE in options:
        cap = game.settings.max_candidates
        after = _try(game, Declare(min(2, cap) if cap else 2))
        if after is not None:
            return after
    if Option.CHOOSE in options:
        after = _try(game, Choose(rng.choice(due.candidates)))
        if after is not None:
            return after
    if Option.OFFER in options and (Option.STONE not in options or rng.random() < 0.5):
        return _offer(game, rng, due.count or 1)
    if Option.SWAP in options and rng.random() < 0.3:
        after = _try(game, Swap())
        if after is not None:
            return after
    if Option.ADD_TWO in options and rng.random() < 0.15:
        after = _try(game, AddTwo())
        if after is not None:
            return after
    if Option.STONE in options:
        return _stone(game, rng, due.zone)
    after = _try(game, Keep())
    if after is None:
        raise EngineError(f"no opening action found for {due.prompt}")
    return after


FEED_TYPES: Final = {Swap: "opening.swap", Keep: "opening.keep", AddTwo: "opening.add2"}


def feed_event(action: Action) -> tuple[str, dict[str, Any]]:
    """The feed message (type, data) a platform sends for a board action."""
    if isinstance(action, Stone):
        return "move", {"point": format_point(action.point)}
    if isinstance(action, Pass):
        return "move", {"pass": True}
    if isinstance(action, Declare):
        return "opening.declare", {"count": action.count}
    if isinstance(action, Offer):
        return "opening.candidates", {"points": [format_point(p) for p in action.points]}
    if isinstance(action, Choose):
        return "opening.choice", {"point": format_point(action.point)}
    kind = FEED_TYPES.get(type(action))
    if kind is None:
        raise EngineError(f"{action.token()} is not a board action of the feed")
    return kind, {}


def script_game(rng: random.Random, black: Seat, white: Seat, rule: str, opening: str, twist: Twist,
                pace: Pace = Pace(), max_candidates: int | None = None,
                adjudication: str = "automatic") -> ScriptedGame:  # fmt: skip
    """Play one game and write it as the platform's feed, from both players' arrival to ``game.ended``."""
    if twist is Twist.LATE and pace.late_ms <= 0:
        twist = Twist.NONE  # nobody may be late (no tolerance given)
    script = ScriptedGame(black, white, rule, opening, twist)
    return _Scripting(rng, script, pace, max_candidates, AdjudicationMode(adjudication)).play()


class _Scripting:
    """One game being played and written down."""

    def __init__(self, rng: random.Random, script: ScriptedGame, pace: Pace, max_candidates: int | None,
                 adjudication: AdjudicationMode) -> None:  # fmt: skip
        self.rng, self.script, self.pace = rng, script, pace
        self.game = Game.new(GameSettings(rule=script.rule, opening=script.opening, max_candidates=max_candidates,
                                          adjudication=adjudication))  # fmt: skip
        self.seats = {Player.FIRST: script.black, Player.SECOND: script.white}
        self.clock = 0

    def say(self, kind: str, data: dict[str, Any]) -> None:
        self.script.events.append(ScriptedEvent(kind, self.clock, data))

    def think(self) -> None:
        self.clock += max(self.pace.min_ms, int(self.rng.expovariate(1 / self.pace.think_ms)))

    def mover(self) -> Player:
        due = self.game.due()
        return due.actor if due is not None else self.game.player_of(self.game.to_move)

    def play(self) -> ScriptedGame:
        script, twist = self.script, self.script.twist
        late = self.rng.choice(list(self.seats)) if twist is Twist.LATE and self.pace.late_ms > 0 else None
        arrivals = sorted((self.pace.late_ms if player is late else -3_000 + 1_000 * index, player)
                          for index, player in enumerate(self.seats))  # fmt: skip
        for at, player in arrivals:
            script.events.append(ScriptedEvent("player.joined", at, {"player": self.seats[player].ref}))
        self.clock = max(0, arrivals[-1][0])
        twist_at = MAX_PLIES
        while self.game.outcome is None and self.game.ply < MAX_PLIES:
            self.think()
            if not self.game.in_opening and twist_at == MAX_PLIES:
                twist_at = self.game.ply + self.rng.randint(2, 8)  # a few moves after the opening
            if self.game.ply == twist_at and not self.twist():
                break  # a draw agreed, or a resignation
            self.move()
        if self.game.outcome is not None:
            script.result, script.reason = self.game.outcome.result, self.game.outcome.termination.value
        elif script.result is None:  # a resignation: the player to move, who is behind
            mover = self.mover()
            resigned = self.game.apply(Resign(_color_of(self.game, mover)))
            assert resigned.outcome is not None
            self.say("resign", {"player": self.seats[mover].ref})
            script.result, script.reason = resigned.outcome.result, resigned.outcome.termination.value
        self.clock += 300
        self.say("game.ended", {"result": script.result, "reason": script.reason})
        return script

    def twist(self) -> bool:
        """The game's situation, before the mover's move; False when it ends the game."""
        twist, mover = self.script.twist, self.mover()
        ref, other = self.seats[mover].ref, self.seats[mover.other].ref
        if twist is Twist.DISCONNECT:
            self.say("player.disconnected", {"player": ref})
            self.clock += self.rng.randint(2_000, 5_000)
            self.say("player.reconnected", {"player": ref})
            self.think()
        elif twist in (Twist.DRAW_ACCEPTED, Twist.DRAW_DECLINED):
            self.say("draw.offered", {"player": ref})
            self.think()
            if twist is Twist.DRAW_ACCEPTED:
                self.say("draw.accepted", {"player": other})
                self.script.result, self.script.reason = "draw", Termination.AGREED_DRAW.value
                return False
            self.say("draw.declined", {"player": other})
            self.think()
        return twist is not Twist.RESIGN

    def move(self) -> None:
        game, rng, twist = self.game, self.rng, self.script.twist
        if game.in_opening:
            after = _opening_step(game, rng)
        elif twist is Twist.FORBIDDEN and game.to_move is Color.BLACK and game.ply >= 6:
            after = _forbidden_or_stone(game, rng)
        else:
            after = _stone(game, rng, None, passive=twist is Twist.FORBIDDEN and game.to_move is Color.WHITE)
        kind, data = feed_event(after.actions[game.ply])
        self.say(kind, data)
        if after.outcome is None and after.pending:  # claim mode: White points the forbidden move out (19.1.2)
            self.think()
            after = after.apply(ClaimForbidden())
            self.say("forbidden.claimed", {"player": self.seats[after.player_of(Color.WHITE)].ref})
        self.game = after


def _color_of(game: Game, player: Player) -> Color:
    return Color.BLACK if game.black_player is player else Color.WHITE


def _forbidden_or_stone(game: Game, rng: random.Random) -> Game:
    """Black plays a forbidden point when there is one (not one that makes a five); else builds its lines."""
    found = forbidden_points(game.position)
    for point in sorted(found):
        after = _try(game, Stone(point))
        if after is not None and _loses_by_forbidden(game, after):
            return after
    board = _Board(game)
    points = [p for p in board.near() if board.cells[p] is None]
    scored = sorted(((*board.lines(p, Color.BLACK), rng.random(), p) for p in points), key=lambda s: -s[1] - s[2])
    for longest, _, _, point in scored:
        if longest >= 4:
            continue  # no five, no four: Black is after a double three
        after = _try(game, Stone(point))
        if after is not None and after.outcome is None and not after.pending:
            return after
    return _stone(game, rng, None)
