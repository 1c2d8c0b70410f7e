"""Live adjudication of one game: the online clock, arrival, disconnects, draw offers, arbiter actions, penalties.

Everything is a pure fold over timestamped events: :meth:`Adjudication.apply` takes an event and returns the next
state (or raises :class:`AdjudicationError`, leaving the state unchanged), and :func:`replay` folds a whole log.  The
same events always give the same state, so the service can rebuild any game after a crash, insert an arbiter's
back-dated suspension and replay, and show why each verdict was reached (:attr:`Adjudication.log`).

Times are integer milliseconds (e.g. since the Unix epoch), passed in by the caller; events must come in time order.
Before an event is applied, every deadline that falls before it fires in time order: the scheduled start (14.2),
the lateness limit (14.3, 35.3), flag fall (34.4, 19.2.1 D) and the reconnect window (37.7).  :meth:`advance`
fires them without an event (the service calls it on a timer).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Final

from engine.actions import Action, Resign, parse_action
from engine.board import Color
from engine.clock import Clock, TimeControl
from engine.errors import EngineError, IllegalActionError
from engine.forbidden import FiveEye
from engine.game import AdjudicationMode, Game, GameSettings, Outcome, Termination
from engine.liveness import Gap, Source, Timeline
from engine.openings import Player
from engine.penalties import AuthorityError, Ladder, Penalty, PenaltyBook, PenaltyKind, PenaltyPolicy, Role
from engine.values import evolve


class AdjudicationError(IllegalActionError):
    """An event the rules or the game's state do not allow; nothing is changed."""


class AuthorityRefusedError(AdjudicationError):
    """An arbiter action or penalty beyond the requester's role (16)."""


# --- Settings --------------------------------------------------------------------------------------------------------


class BothDisconnected(enum.Enum):
    """What happens when a reconnect window or a flag runs out while both players are disconnected (37.7: "unless
    the competition rules provide otherwise"; the section chooses)."""

    ARBITER = "arbiter"
    """No automatic loss: the game stops and the arbiter decides (both down at once is most likely an outage)."""
    WINDOW = "window"
    """Each player's own window and clock count as if the other were connected: the first to run out loses."""


@dataclass(frozen=True, slots=True)
class AdjudicationSettings:
    """One game's settings, from its event and section."""

    time_control: TimeControl
    start_at: int
    """The scheduled start (ms): Black's clock starts then, present or not (14.2, 14.3)."""
    game: GameSettings = field(default_factory=GameSettings)
    lateness_tolerance_ms: int = 0
    """How late a player may arrive (14.3: zero unless the event says otherwise)."""
    reconnect_window_ms: int | None = None
    """How long a disconnected player has to come back, even with time left (37.7); None: only the clock counts."""
    confirm_time_verdicts: bool = False
    """Leave time forfeits, reconnect-deadline losses and no-shows to the arbiter's confirmation."""
    both_disconnected: BothDisconnected = BothDisconnected.ARBITER
    """With both players disconnected, an expiring window or flag goes to the arbiter (37.7), or counts as usual."""
    draw_offer_grace_ms: int = 5_000
    """An offer made with one's move may reach the service this long after the move (19.2.2 A: move, offer, press
    the clock; online the press is automatic, so the offer arrives just after the move)."""
    penalty_policy: PenaltyPolicy = field(default_factory=PenaltyPolicy)


# --- Events ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerJoined:
    """The player entered the game's room on the platform (35.3)."""

    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class PlayerDisconnected:
    """The platform lost the player (34.3: the clock runs on)."""

    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class PlayerReconnected:
    """The player is back (37.6: play on with the time left)."""

    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class Played:
    """A game action from the platform's feed, by the player whose decision is due."""

    at: int
    action: Action


@dataclass(frozen=True, slots=True)
class Resigned:
    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class DrawOffered:
    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class DrawAccepted:
    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class DrawDeclined:
    at: int
    player: Player


@dataclass(frozen=True, slots=True)
class Tick:
    """Only time passes (fires the deadlines up to ``at``)."""

    at: int


@dataclass(frozen=True, slots=True)
class ArbiterAction:
    """Base of the arbiter's actions: who, in which role, and why."""

    at: int
    arbiter: str
    role: Role
    reason: str


@dataclass(frozen=True, slots=True)
class ClockPaused(ArbiterAction):
    """The arbiter stops the clocks (14.6, 14.8, 20)."""


@dataclass(frozen=True, slots=True)
class ClockResumed(ArbiterAction):
    pass


@dataclass(frozen=True, slots=True)
class TimeAdjusted(ArbiterAction):
    """Add (positive) or remove (negative) time (14.5, 14.8)."""

    player: Player = Player.FIRST
    delta_ms: int = 0


@dataclass(frozen=True, slots=True)
class SharedTimeSplit(ArbiterAction):
    """Put a clock on a shared-time game: each side gets half of what remains (14.1.3)."""


@dataclass(frozen=True, slots=True)
class GameSuspended(ArbiterAction):
    """Interrupt play with the position and clocks sealed (20.1); ``round_wide`` for a whole round's outage."""

    sealed_move: Action | None = None
    round_wide: bool = False


@dataclass(frozen=True, slots=True)
class GameResumed(ArbiterAction):
    """Resume a suspended game exactly; a sealed move is played first (20.2.4)."""


@dataclass(frozen=True, slots=True)
class VerdictConfirmed(ArbiterAction):
    """Confirm a time or connection verdict that waits for the arbiter."""


@dataclass(frozen=True, slots=True)
class VerdictOverruled(ArbiterAction):
    """Set aside a time, connection or no-show verdict (pending or automatic) and play on; ``add_ms`` is given to
    the player who lost on time, so that play can continue (14.5, 14.8)."""

    add_ms: int = 0


@dataclass(frozen=True, slots=True)
class PenaltyImposed(ArbiterAction):
    """An offence reported by an arbiter; the ladder decides the penalty (17, 18)."""

    player: Player = Player.FIRST
    offence: str = ""
    evidence: tuple[str, ...] = ()
    disqualify: bool = False
    """The committee's disqualification (15.4, 16.4) instead of a ladder step."""


@dataclass(frozen=True, slots=True)
class ResultConfirmed(ArbiterAction):
    """The arbiter confirms the result (19)."""


@dataclass(frozen=True, slots=True)
class ResultDeclared(ArbiterAction):
    """The chief arbiter decides the result (19.1.4, 21.1.2, 21.2): ``winner`` None is a draw; ``both_lose``
    declares both players lost (15.3, 16.3), scored 0 to each."""

    winner: Player | None = None
    both_lose: bool = False


@dataclass(frozen=True, slots=True)
class Revised:
    """A platform's event stamped before a deadline that was already applied, delivered late (platforms retry for
    minutes): the game ruled again from its start on ``events``, the late event in its place by its stamp and the
    deadlines after it left to fire again if they still fall.  The game's log keeps what was ruled before, then says
    what the revision changed (``cause``: which delivery, stamped when), then what the revised game ruled since."""

    at: int
    events: tuple[Event, ...]
    cause: str


Event = (
    PlayerJoined
    | PlayerDisconnected
    | PlayerReconnected
    | Played
    | Resigned
    | DrawOffered
    | DrawAccepted
    | DrawDeclined
    | Tick
    | ClockPaused
    | ClockResumed
    | TimeAdjusted
    | SharedTimeSplit
    | GameSuspended
    | GameResumed
    | VerdictConfirmed
    | VerdictOverruled
    | PenaltyImposed
    | ResultConfirmed
    | ResultDeclared
    | Revised
)

#: Who may take each arbiter action.
_ARBITERS: Final = frozenset({Role.ARBITER, Role.DEPUTY_CHIEF, Role.CHIEF})
_SENIOR: Final = frozenset({Role.DEPUTY_CHIEF, Role.CHIEF})
_ACTION_ROLES: Final[dict[type, tuple[frozenset[Role], str]]] = {
    ClockPaused: (_ARBITERS, "14.6"),
    ClockResumed: (_ARBITERS, "14.6"),
    TimeAdjusted: (_ARBITERS, "14.8"),
    SharedTimeSplit: (_ARBITERS, "14.1.3"),
    GameSuspended: (_ARBITERS, "20.1"),
    GameResumed: (_ARBITERS, "20.2"),
    VerdictConfirmed: (_ARBITERS, "19"),
    VerdictOverruled: (_SENIOR, "22.1"),
    ResultConfirmed: (_ARBITERS, "19"),
    ResultDeclared: (frozenset({Role.CHIEF}), "16.3"),
}

#: Endings that come from the clock or the connection, which an event may leave to the arbiter.
_TIME_TERMINATIONS: Final = frozenset(
    {Termination.TIME_FORFEIT, Termination.BOTH_OUT_OF_TIME, Termination.NO_SHOW, Termination.RECONNECT_DEADLINE}
)


# --- State -----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One line of the game's record of verdicts, penalties and arbiter actions: what, by whom, why, which article."""

    at: int
    kind: str
    text: str
    article: str = ""
    actor: str = ""
    cause: str = ""


class PlayerResult(enum.Enum):
    """A player's result in the results table (28.1, 28.3)."""

    WIN = "1"
    DRAW = "½"
    LOSS = "0"
    FORFEIT_WIN = "+"
    FORFEIT_LOSS = "-"


@dataclass(frozen=True, slots=True)
class DrawOffer:
    by: Player
    at: int


@dataclass(frozen=True, slots=True)
class Suspension:
    at: int
    sealed_move: Action | None
    sealed_by: Player | None
    round_wide: bool


@dataclass(frozen=True, slots=True)
class Adjudication:
    """The adjudicated state of one game.  Start with :meth:`Adjudication.new`; advance with :meth:`apply`."""

    settings: AdjudicationSettings
    game: Game
    clock: Clock
    now: int
    started: bool = False
    joined: frozenset[Player] = frozenset()
    excused: frozenset[Player] = frozenset()
    """Players the arbiter allowed to arrive late (14.3: "unless the arbiter decides otherwise")."""
    arrival_deadline: int = 0
    feed: tuple[Timeline, Timeline] = (Timeline(Source.FEED), Timeline(Source.FEED))
    reconnect_from: tuple[int | None, int | None] = (None, None)
    """When each disconnected player's reconnect window started (moved on by pauses)."""
    paused_at: int | None = None
    suspension: Suspension | None = None
    pending_verdict: Outcome | None = None
    draw_offer: DrawOffer | None = None
    draw_barred: frozenset[Player] = frozenset()
    """Players who may not offer a draw until the opponent has offered one (19.2.2 C)."""
    last_mover: Player | None = None
    last_move_at: int = 0
    penalties: PenaltyBook = field(default_factory=PenaltyBook)
    confirmed: bool = False
    disciplinary_losses: frozenset[Player] = frozenset()
    """Players declared lost after the result was confirmed: the opponent's result stands (15.3)."""
    disqualified: frozenset[Player] = frozenset()
    log: tuple[LogEntry, ...] = ()

    @classmethod
    def new(cls, settings: AdjudicationSettings) -> Adjudication:
        return cls(
            settings=settings,
            game=Game.new(settings.game),
            clock=Clock.start(settings.time_control),
            now=0,
            arrival_deadline=settings.start_at + settings.lateness_tolerance_ms,
        )

    # --- Queries ------------------------------------------------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        return self.game.outcome

    @property
    def is_over(self) -> bool:
        return self.game.outcome is not None

    @property
    def running(self) -> bool:
        return not self.clock.stopped

    def color_of(self, player: Player) -> Color:
        return Color.BLACK if self.game.black_player is player else Color.WHITE

    def player_of(self, color: Color) -> Player:
        return self.game.player_of(color)

    def due_player(self) -> Player:
        """Whose decision or move is due (34.2: whose clock runs once both are present)."""
        return _due_player(self.game)

    def remaining(self, player: Player, now: int | None = None) -> int:
        """The time ``player`` has left at ``now`` (ms), without changing the state."""
        clock = self.clock.elapse(max(now if now is not None else self.now, self.clock.since))
        return clock.remaining_of(player)

    def is_connected(self, player: Player) -> bool:
        return player in self.joined and not self.feed[_i(player)].is_down

    def results(self) -> dict[Color, PlayerResult]:
        """Each colour's entry in the results table (28.3: "+" and "-" for games not played)."""
        outcome = self.game.outcome
        if outcome is None:
            return {}
        forfeit = outcome.termination is Termination.NO_SHOW
        table: dict[Color, PlayerResult] = {}
        for color in (Color.BLACK, Color.WHITE):
            if outcome.double_loss:
                table[color] = PlayerResult.FORFEIT_LOSS if forfeit else PlayerResult.LOSS
            elif outcome.winner is None:
                table[color] = PlayerResult.DRAW
            elif outcome.winner is color:
                table[color] = PlayerResult.FORFEIT_WIN if forfeit else PlayerResult.WIN
            else:
                table[color] = PlayerResult.FORFEIT_LOSS if forfeit else PlayerResult.LOSS
        for player in self.disciplinary_losses:
            table[self.color_of(player)] = PlayerResult.LOSS
        return table

    # --- Events -------------------------------------------------------------------------------------------------

    def apply(self, event: Event) -> Adjudication:
        """The state after ``event``; :class:`AdjudicationError` (and no change) if it is not allowed."""
        if event.at < self.now:
            raise AdjudicationError(f"events must come in time order: {event.at} ms is before {self.now} ms")
        state = self._fire_deadlines(event.at)
        if isinstance(event, ArbiterAction):
            roles, article = _ACTION_ROLES.get(type(event), (_ARBITERS | {Role.COMMITTEE}, "16"))
            if event.role not in roles:
                who = ", ".join(sorted(role.value for role in roles))
                raise AuthorityRefusedError(
                    f"{type(event).__name__} is for the {who}, not the {event.role.value}", article
                )
        handler = _HANDLERS[type(event)]
        result: Adjudication = handler(state, event)
        return result if result.now == event.at else evolve(result, now=event.at)

    def advance(self, now: int) -> Adjudication:
        """Fire every deadline up to ``now`` in time order, then charge the clock up to ``now``."""
        if now < self.now:
            raise AdjudicationError(f"time went backwards: {now} ms is before {self.now} ms")
        state = self._fire_deadlines(now)
        clock = state.clock.elapse(max(now, state.clock.since))
        if clock is state.clock and now == state.now:
            return state
        return evolve(state, clock=clock, now=now)

    def _fire_deadlines(self, now: int) -> Adjudication:
        state = self
        while True:
            deadline = state.next_deadline()
            if deadline is None or deadline[0] > now or (deadline[0] == now and deadline[1] == "arrival"):
                break  # arriving exactly at the limit is in time; a flag falls when the time reaches zero
            state = state._fire(deadline[1], deadline[0])
        return state

    # --- Deadlines ----------------------------------------------------------------------------------------------

    def next_deadline(self) -> tuple[int, str] | None:
        """The next deadline that would fire without an event: (time in ms, "start" | "arrival" | "flag" |
        "reconnect"), or None."""
        if self.is_over or self.pending_verdict is not None:
            return None
        if not self.started:
            return self.settings.start_at, "start"
        if self.paused_at is not None or self.suspension is not None:
            return None
        flag = self.clock.flag_time()
        window = self.settings.reconnect_window_ms
        if len(self.joined) == 2 and (window is None or self.reconnect_from == (None, None)):
            return None if flag is None else (flag, "flag")  # the usual case, kept cheap
        candidates: list[tuple[int, int, str]] = []
        if flag is not None:
            candidates.append((flag, 0, "flag"))
        if {Player.FIRST, Player.SECOND} - self.joined - self.excused:
            candidates.append((self.arrival_deadline, 1, "arrival"))
        if window is not None:
            for start in self.reconnect_from:
                if start is not None:
                    candidates.append((start + window, 2, "reconnect"))
        if not candidates:
            return None
        at, _, kind = min(candidates)
        return at, kind

    def _fire(self, kind: str, at: int) -> Adjudication:
        if kind == "start":
            state = evolve(self, started=True, now=at, clock=evolve(self.clock, since=at))
            state = state._log(at, "start", "the game starts; the first player's clock runs", "14.2")
            return state._recharge(at)
        state = evolve(self, clock=self.clock.elapse(at), now=at)
        if kind == "flag":
            return state._flag(at)
        if kind == "arrival":
            return state._no_show(at)
        return state._reconnect_deadline(at)

    def _flag(self, at: int) -> Adjudication:
        flagged = self.clock.flagged()
        if flagged & ({Player.FIRST, Player.SECOND} - self.joined - self.excused):
            return self._no_show(at)  # absent until their time ran out: a forfeit for absence (14.3, 28.3)
        if self._both_down():
            return self._to_the_arbiter(at, "a player's time ran out while both players were disconnected")
        if len(flagged) == 2:
            outcome = Outcome(Termination.BOTH_OUT_OF_TIME, None, self.game.ply, "19.2.1 D", at)
            return self._end(outcome, "both players' time ran out at the same moment", automatic=True)
        (player,) = flagged
        disconnected = self.feed[_i(player)].is_down
        article = "34.4, 37.7" if disconnected else "34.4"
        why = f"the {player.value} player's time ran out" + (" while disconnected" if disconnected else "")
        outcome = Outcome(Termination.TIME_FORFEIT, self.color_of(player).other, self.game.ply, article, at)
        return self._end(outcome, why, automatic=True)

    def _no_show(self, at: int) -> Adjudication:
        absent = sorted({Player.FIRST, Player.SECOND} - self.joined - self.excused, key=_i)
        names = " and ".join(f"the {p.value} player" for p in absent)
        why = f"{names} did not enter the game within the lateness limit"
        if len(absent) == 2:
            outcome = Outcome(Termination.NO_SHOW, None, self.game.ply, "14.3, 35.3", at, double_loss=True)
        else:
            winner = self.color_of(absent[0]).other
            outcome = Outcome(Termination.NO_SHOW, winner, self.game.ply, "14.3, 35.3", at)
        return self._end(outcome, why, automatic=True)

    def _reconnect_deadline(self, at: int) -> Adjudication:
        window = self.settings.reconnect_window_ms
        assert window is not None
        expired = [
            p
            for p in (Player.FIRST, Player.SECOND)
            if (s := self.reconnect_from[_i(p)]) is not None and s + window <= at
        ]
        if len(expired) == 2:
            # Both lost the platform at once: most likely an outage, never an automatic loss.
            return self._to_the_arbiter(at, "both players stayed disconnected past the reconnect window")
        if self._both_down():
            return self._to_the_arbiter(at, f"the {expired[0].value} player's reconnect window ran out while both "
                                        "players were disconnected")  # fmt: skip
        player = expired[0]
        outcome = Outcome(Termination.RECONNECT_DEADLINE, self.color_of(player).other, self.game.ply, "37.7", at)
        return self._end(
            outcome, f"the {player.value} player did not reconnect within the event's window", automatic=True
        )

    def _both_down(self) -> bool:
        """Both players are disconnected and the section leaves that case to the arbiter (37.7)."""
        if self.settings.both_disconnected is not BothDisconnected.ARBITER:
            return False
        return all(
            self.reconnect_from[_i(p)] is not None and self.feed[_i(p)].is_down for p in (Player.FIRST, Player.SECOND)
        )

    def _to_the_arbiter(self, at: int, what: str) -> Adjudication:
        """No automatic loss: the clocks stop and a verdict with no winner awaits the arbiter, who overrules it (play
        on) or declares the result (37.7)."""
        outcome = Outcome(Termination.RECONNECT_DEADLINE, None, self.game.ply, "37.7", at)
        state = evolve(self, pending_verdict=outcome, clock=self.clock.stop(max(at, self.clock.since)))
        return state._log(at, "verdict-pending", f"{what}: the arbiter decides (a platform outage is never an "
                          "automatic loss)", "37.7")  # fmt: skip

    # --- Endings ------------------------------------------------------------------------------------------------

    def _end(self, outcome: Outcome, why: str, *, automatic: bool, actor: str = "", cause: str = "") -> Adjudication:
        if automatic and self.settings.confirm_time_verdicts and outcome.termination in _TIME_TERMINATIONS:
            stop_at = outcome.at if outcome.at is not None else self.now
            state = evolve(self, pending_verdict=outcome, clock=self.clock.stop(max(stop_at, self.clock.since)))
            return state._log(stop_at, "verdict-pending", f"{why}: {_describe(outcome)}, awaiting the arbiter",
                              outcome.article, actor, cause)  # fmt: skip
        state = evolve(
            self,
            game=evolve(self.game, outcome=outcome),
            clock=self.clock.stop(max(outcome.at if outcome.at is not None else self.now, self.clock.since)),
            pending_verdict=None,
            draw_offer=None,
        )
        at = outcome.at if outcome.at is not None else self.now
        return state._log(at, "verdict", f"{why}: {_describe(outcome)}", outcome.article, actor, cause)

    def _log(self, at: int, kind: str, text: str, article: str = "", actor: str = "", cause: str = "") -> Adjudication:
        return evolve(self, log=(*self.log, LogEntry(at, kind, text, article, actor, cause)))

    # --- Clock charging -----------------------------------------------------------------------------------------

    def _charged(self, game: Game | None = None) -> frozenset[Player] | None:
        """Whose time runs now (with ``game`` in place of the current one), or None when no time runs."""
        game = game or self.game
        if not self.started or game.outcome is not None or self.pending_verdict is not None:
            return None
        if self.paused_at is not None or self.suspension is not None:
            return None
        if len(self.joined) < 2:
            # 14.3: an absent player's clock runs from the start, even when the other is to move
            return frozenset({Player.FIRST, Player.SECOND} - self.joined)
        return _ONLY[_due_player(game)]

    def _recharge(self, at: int) -> Adjudication:
        charged = self._charged()
        if charged is None:
            return evolve(self, clock=self.clock.stop(at))
        if not self.clock.stopped and charged == self.clock.charged:
            return self
        return evolve(self, clock=self.clock.run(charged, at))

    def _require_live(self, what: str | Action) -> None:
        interrupted = self.pending_verdict is not None or self.suspension is not None or self.paused_at is not None
        if self.started and self.game.outcome is None and not interrupted:
            return
        what = what if isinstance(what, str) else f"'{what.token()}'"
        if self.is_over:
            assert self.outcome is not None
            raise AdjudicationError(f"{what}: the game is over ({_describe(self.outcome)})", self.outcome.article)
        if self.pending_verdict is not None:
            raise AdjudicationError(f"{what}: a verdict awaits the arbiter ({_describe(self.pending_verdict)})")
        if not self.started:
            raise AdjudicationError(
                f"{what}: the game has not started (scheduled start {self.settings.start_at})", "14.2"
            )
        if self.suspension is not None:
            raise AdjudicationError(f"{what}: the game is suspended", "20.1")
        if self.paused_at is not None:
            raise AdjudicationError(f"{what}: the arbiter has paused the clocks", "14.6")

    # --- Snapshots ----------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot; :func:`restore` continues from it exactly."""
        snapshot: dict[str, Any] = _snapshot(self)
        return snapshot


_ONLY: Final = {Player.FIRST: frozenset({Player.FIRST}), Player.SECOND: frozenset({Player.SECOND})}


def _due_player(game: Game) -> Player:
    if game.opening_state.phase != "done" and game.outcome is None:
        due = game.due()
        if due is not None:
            return due.actor
    return game.player_of(game.to_move)


def _i(player: Player) -> int:
    return 0 if player is Player.FIRST else 1


def _with(pair: tuple[int | None, int | None], index: int, value: int | None) -> tuple[int | None, int | None]:
    return (value, pair[1]) if index == 0 else (pair[0], value)


def _describe(outcome: Outcome) -> str:
    if outcome.double_loss:
        return f"{outcome.termination.value}, both players lose"
    if outcome.winner is None:
        return f"{outcome.termination.value}, a draw"
    return f"{outcome.termination.value}, {outcome.winner.value} wins"


# --- Handlers --------------------------------------------------------------------------------------------------------


def _on_joined(state: Adjudication, event: PlayerJoined | PlayerReconnected) -> Adjudication:
    player = event.player
    i = _i(player)
    first_time = player not in state.joined
    feed = list(state.feed)
    feed[i] = feed[i].up(event.at) if feed[i].is_down else feed[i]
    state = evolve(
        state,
        joined=state.joined | {player},
        feed=(feed[0], feed[1]),
        reconnect_from=_with(state.reconnect_from, i, None),
    )
    if first_time:
        late = max(0, event.at - state.settings.start_at) if state.started else 0
        text = f"the {player.value} player entered the game" + (f", {late} ms late (deducted, 14.3)" if late else "")
        state = state._log(event.at, "arrival", text, "14.3" if late else "35.3", player.value)
    else:
        state = state._log(event.at, "reconnected", f"the {player.value} player reconnected", "37.6", player.value)
    return state._recharge(event.at)


def _on_disconnected(state: Adjudication, event: PlayerDisconnected) -> Adjudication:
    i = _i(event.player)
    if event.player not in state.joined or state.feed[i].is_down:
        return state
    feed = list(state.feed)
    feed[i] = feed[i].down(event.at)
    window_start = max(event.at, state.settings.start_at) if not state.is_over else None
    state = evolve(state, feed=(feed[0], feed[1]), reconnect_from=_with(state.reconnect_from, i, window_start))
    return state._log(
        event.at, "disconnected", f"the {event.player.value} player lost the platform; the clock runs on",
        "34.3, 37.5", event.player.value,
    )  # fmt: skip


def _on_played(state: Adjudication, event: Played) -> Adjudication:
    state._require_live(event.action)
    mover = state.due_player()
    if not state.is_connected(mover):
        # The platform took a move from a player it had reported absent or gone: the move shows they are back.
        state = _on_joined(state, PlayerReconnected(event.at, mover))
        state = state._log(event.at, "feed-anomaly", f"a move came from the {mover.value} player while the feed "
                           "reported them absent or disconnected; taken as a reconnection", "34.3")  # fmt: skip
    return _play(state, event.action, event.at, mover)


def _play(state: Adjudication, action: Action, at: int, mover: Player) -> Adjudication:
    try:
        game = state.game.apply(action)
    except IllegalActionError as error:
        raise AdjudicationError(error.why, error.article) from None
    offer = state.draw_offer
    if game.outcome is not None:
        after = evolve(state, game=evolve(game, outcome=None), last_mover=mover, last_move_at=at)
        return after._end(evolve(game.outcome, at=at), f"'{action.token()}'", automatic=False, actor=mover.value)
    # 14.1.2, 34.2: the mover's increment as the turn passes, and the opponent's clock starts.
    passes_turn = _due_player(game) is not mover
    clock = state.clock.press(at, mover if passes_turn else None, state._charged(game))
    if offer is None or offer.by is mover:
        return evolve(state, game=game, clock=clock, last_mover=mover, last_move_at=at, now=at)
    # 19.2.2 B: the opponent declines an offer by completing a move.
    after = evolve(
        state,
        game=game,
        clock=clock,
        last_mover=mover,
        last_move_at=at,
        now=at,
        draw_offer=None,
        draw_barred=state.draw_barred | {offer.by},
    )
    return after._log(at, "draw-declined", f"the {mover.value} player declined the draw by moving", "19.2.2 B")


def _on_resigned(state: Adjudication, event: Resigned) -> Adjudication:
    state._require_live("resignation")
    color = state.color_of(event.player)
    return _play(state, Resign(color), event.at, event.player)


def _on_draw_offered(state: Adjudication, event: DrawOffered) -> Adjudication:
    state._require_live("draw offer")
    player = event.player
    if state.draw_offer is not None:
        raise AdjudicationError(f"a draw offer by the {state.draw_offer.by.value} player is still open", "19.2.2 A")
    if player in state.draw_barred:
        raise AdjudicationError(
            "after a declined offer, a player may not offer again until the opponent has offered", "19.2.2 C"
        )
    own_turn = state.due_player() is player
    with_the_move = state.last_mover is player and event.at - state.last_move_at <= state.settings.draw_offer_grace_ms
    if not (own_turn or with_the_move):
        raise AdjudicationError("a draw may only be offered in one's own time, with one's move", "19.2.2 A")
    state = evolve(state, draw_offer=DrawOffer(player, event.at), draw_barred=state.draw_barred - {player.other})
    return state._log(
        event.at, "draw-offered", f"the {player.value} player offered a draw", "19.2.2 A, 35.4", player.value
    )


def _answer_draw(state: Adjudication, player: Player, at: int, verb: str) -> DrawOffer:
    state._require_live(f"draw {verb}")
    offer = state.draw_offer
    if offer is None:
        raise AdjudicationError(f"there is no draw offer to {verb}", "19.2.2 B")
    if offer.by is player:
        raise AdjudicationError(
            f"the {player.value} player cannot {verb} their own offer (it cannot be withdrawn)", "19.2.2 A"
        )
    return offer


def _on_draw_accepted(state: Adjudication, event: DrawAccepted) -> Adjudication:
    _answer_draw(state, event.player, event.at, "accept")
    outcome = Outcome(Termination.AGREED_DRAW, None, state.game.ply, "19.2.1 A, 35.4", event.at)
    return state._end(outcome, f"the {event.player.value} player accepted the draw", automatic=False)


def _on_draw_declined(state: Adjudication, event: DrawDeclined) -> Adjudication:
    offer = _answer_draw(state, event.player, event.at, "decline")
    state = evolve(state, draw_offer=None, draw_barred=state.draw_barred | {offer.by})
    return state._log(event.at, "draw-declined", f"the {event.player.value} player declined the draw", "19.2.2 B")


def _on_tick(state: Adjudication, event: Tick) -> Adjudication:
    return state.advance(event.at)


def _arbiter_log(state: Adjudication, event: ArbiterAction, kind: str, text: str, article: str) -> Adjudication:
    return state._log(event.at, kind, text, article, f"{event.arbiter} ({event.role.value})", event.reason)


def _on_paused(state: Adjudication, event: ClockPaused) -> Adjudication:
    state._require_live("pause")
    state = evolve(state, paused_at=event.at)._recharge(event.at)
    return _arbiter_log(state, event, "clock-paused", "the arbiter stopped the clocks", "14.6")


def _shift_windows(state: Adjudication, since: int, at: int) -> Adjudication:
    """Time stopped by the arbiter does not count towards the lateness limit or a reconnect window."""
    gap = at - since
    first, second = (None if s is None else s + gap for s in state.reconnect_from)
    arrival = state.arrival_deadline + gap if state.arrival_deadline > since else state.arrival_deadline
    return evolve(state, reconnect_from=(first, second), arrival_deadline=arrival)


def _on_resumed(state: Adjudication, event: ClockResumed) -> Adjudication:
    if state.paused_at is None:
        raise AdjudicationError("the clocks are not paused", "14.6")
    state = _shift_windows(state, state.paused_at, event.at)
    state = evolve(state, paused_at=None)._recharge(event.at)
    return _arbiter_log(state, event, "clock-resumed", "the arbiter restarted the clocks", "14.6")


def _on_time_adjusted(state: Adjudication, event: TimeAdjusted) -> Adjudication:
    if state.is_over:
        raise AdjudicationError("the game is over: its clocks can no longer change", "14.8")
    if event.delta_ms == 0:
        raise AdjudicationError("a time adjustment must add or remove some time", "14.8")
    try:
        clock = state.clock.adjust(event.player, event.delta_ms, event.at)
    except IllegalActionError as error:
        raise AdjudicationError(error.why, error.article) from None
    verb = "added" if event.delta_ms > 0 else "removed"
    state = evolve(state, clock=clock)
    return _arbiter_log(
        state, event, "time-adjusted", f"{abs(event.delta_ms)} ms {verb} to the {event.player.value} player's clock",
        "14.5, 14.8",
    )  # fmt: skip


def _on_split(state: Adjudication, event: SharedTimeSplit) -> Adjudication:
    state._require_live("splitting the shared time")
    try:
        clock = state.clock.split_pool(event.at)
    except IllegalActionError as error:
        raise AdjudicationError(error.why, error.article) from None
    state = evolve(state, clock=clock)
    half = clock.remaining[0]
    return _arbiter_log(state, event, "shared-time-split", f"shared time split: {half} ms each, sudden death", "14.1.3")


def _on_suspended(state: Adjudication, event: GameSuspended) -> Adjudication:
    if state.is_over:
        raise AdjudicationError("the game is over", "20.1")
    if state.suspension is not None:
        raise AdjudicationError("the game is already suspended", "20.1")
    sealed_by = None
    if event.sealed_move is not None:
        sealed_by = state.due_player()
        try:
            state.game.apply(event.sealed_move)
        except IllegalActionError as error:
            # 20.1.6: an illegal sealed move loses.
            outcome = Outcome(Termination.ARBITER_DECISION, state.color_of(sealed_by).other, state.game.ply, "20.1.6",
                              event.at)  # fmt: skip
            return state._end(outcome, f"the sealed move is illegal ({error.why})", automatic=False,
                              actor=event.arbiter, cause=event.reason)  # fmt: skip
    suspension = Suspension(event.at, event.sealed_move, sealed_by, event.round_wide)
    state = evolve(state, suspension=suspension)._recharge(event.at)
    scope = "the round is suspended" if event.round_wide else "the game is suspended"
    text = f"{scope}: position and clocks sealed" + (", sealed move recorded" if event.sealed_move else "")
    return _arbiter_log(state, event, "suspended", text, "20.1")


def _on_game_resumed(state: Adjudication, event: GameResumed) -> Adjudication:
    suspension = state.suspension
    if suspension is None:
        raise AdjudicationError("the game is not suspended", "20.2")
    state = _shift_windows(state, suspension.at, event.at)
    state = evolve(state, suspension=None)
    state = _arbiter_log(state, event, "resumed", "play resumes with the sealed position and clocks", "20.2")
    state = state._recharge(event.at)
    if suspension.sealed_move is not None and suspension.sealed_by is not None:
        state = _play(state, suspension.sealed_move, event.at, suspension.sealed_by)  # 20.2.4
    return state


def _on_verdict_confirmed(state: Adjudication, event: VerdictConfirmed) -> Adjudication:
    outcome = state.pending_verdict
    if outcome is None:
        raise AdjudicationError("no verdict awaits confirmation")
    if outcome.winner is None and not outcome.double_loss and outcome.termination is Termination.RECONNECT_DEADLINE:
        raise AdjudicationError("both players lost the connection: overrule, or declare the result (chief arbiter)")
    state = evolve(state, pending_verdict=None)
    return state._end(outcome, "confirmed by the arbiter", automatic=False, actor=event.arbiter, cause=event.reason)


def _on_verdict_overruled(state: Adjudication, event: VerdictOverruled) -> Adjudication:
    outcome = state.pending_verdict or state.game.outcome
    if outcome is None or outcome.termination not in _TIME_TERMINATIONS:
        raise AdjudicationError("only a time, connection or no-show verdict can be overruled")
    if state.confirmed:
        raise AdjudicationError("the result is already confirmed", "19")
    state = evolve(state, pending_verdict=None, game=evolve(state.game, outcome=None))
    if outcome.termination is Termination.NO_SHOW:
        state = evolve(state, excused=state.excused | ({Player.FIRST, Player.SECOND} - state.joined))
    if outcome.termination is Termination.RECONNECT_DEADLINE:
        first, second = (None if s is None else event.at for s in state.reconnect_from)
        state = evolve(state, reconnect_from=(first, second))
    flagged = [p for p in (Player.FIRST, Player.SECOND) if state.clock.remaining_of(p) == 0 and not state.clock.pool]
    if flagged and event.add_ms <= 0:
        raise AdjudicationError("a player's time is at zero: give time (add_ms) to play on", "14.8")
    clock = state.clock
    for player in flagged:
        clock = clock.adjust(player, event.add_ms, clock.since)
    state = evolve(state, clock=evolve(clock, since=event.at))
    state = _arbiter_log(state, event, "verdict-overruled", f"{_describe(outcome)} set aside; play on", "22.1")
    return state._recharge(event.at)


def _on_penalty(state: Adjudication, event: PenaltyImposed) -> Adjudication:
    try:
        book, decision = state.penalties.decide(
            player=event.player,
            offence=event.offence,
            role=event.role,
            arbiter=event.arbiter,
            at=event.at,
            policy=state.settings.penalty_policy,
            evidence=event.evidence,
            kind=PenaltyKind.DISQUALIFICATION if event.disqualify else None,
        )
    except AuthorityError as error:
        raise AuthorityRefusedError(error.why, error.article) from None
    except EngineError as error:
        why = error.why if isinstance(error, IllegalActionError) else str(error)
        raise AdjudicationError(why, getattr(error, "article", None)) from None
    penalty = decision.penalty
    state = evolve(state, penalties=book)
    evidence = ", ".join(event.evidence)
    state = state._log(
        event.at, "penalty", f"{penalty.kind.value} for the {event.player.value} player: {penalty.reason}",
        penalty.articles, f"{event.arbiter} ({event.role.value})", evidence or event.reason,
    )  # fmt: skip
    if penalty.kind is PenaltyKind.DISQUALIFICATION:
        state = evolve(state, disqualified=state.disqualified | {event.player})
    if not decision.loses_game:
        return state
    article = "15.3, 18.14" if penalty.kind is PenaltyKind.VIOLATION else f"{penalty.offence}, 15.3, 19.1.4"
    if state.is_over:
        if state.confirmed:
            # 15.3: a disciplinary loss after a confirmed result does not change the opponent's result.
            state = evolve(state, disciplinary_losses=state.disciplinary_losses | {event.player})
            return state._log(event.at, "disciplinary-loss", f"the {event.player.value} player is declared lost; the "
                              "opponent's confirmed result stands", article)  # fmt: skip
        previous = state.game.outcome
        assert previous is not None
        if previous.double_loss or previous.winner is state.color_of(event.player):
            # 15.3: "both players being declared lost": the opponent has already lost this game, so a loss for this
            # player too makes both lose; it never turns the opponent's loss into a win.
            return _both_lose(state, event, previous, article)
        state = evolve(state, game=evolve(state.game, outcome=None))
    winner = state.color_of(event.player).other
    outcome = Outcome(Termination.PENALTY, winner, state.game.ply, article, event.at)
    why = "two violations in one game" if penalty.kind is PenaltyKind.VIOLATION else f"a {penalty.kind.value}"
    return state._end(outcome, why, automatic=False, actor=event.arbiter, cause=evidence)


def _both_lose(state: Adjudication, event: PenaltyImposed, previous: Outcome, article: str) -> Adjudication:
    """The game the opponent already lost (``previous``) becomes a loss for both players (15.3)."""
    if previous.double_loss:
        return state._log(event.at, "both-lose", f"the {event.player.value} player is declared lost; both players "
                          "have already lost this game", article)  # fmt: skip
    outcome = Outcome(Termination.PENALTY, None, state.game.ply, article, event.at, double_loss=True)
    state = evolve(state, game=evolve(state.game, outcome=None))
    why = (f"the {event.player.value} player is declared lost too, after the {event.player.other.value} player's "
           f"loss ({_describe(previous)})")  # fmt: skip
    return state._end(outcome, why, automatic=False, actor=event.arbiter, cause=", ".join(event.evidence))


def _on_result_confirmed(state: Adjudication, event: ResultConfirmed) -> Adjudication:
    if not state.is_over:
        raise AdjudicationError("the game has no result to confirm yet", "19")
    if state.confirmed:
        raise AdjudicationError("the result is already confirmed", "19")
    state = evolve(state, confirmed=True)
    assert state.outcome is not None
    return _arbiter_log(state, event, "result-confirmed", f"result confirmed: {_describe(state.outcome)}", "19")


def _on_result_declared(state: Adjudication, event: ResultDeclared) -> Adjudication:
    if state.confirmed:
        raise AdjudicationError("the result is already confirmed", "19")
    if event.both_lose:
        if event.winner is not None:
            raise AdjudicationError("a result where both players lose has no winner", "15.3")
        outcome = Outcome(Termination.ARBITER_DECISION, None, state.game.ply, "15.3, 16.3", event.at, double_loss=True)
    else:
        winner = state.color_of(event.winner) if event.winner is not None else None
        outcome = Outcome(Termination.ARBITER_DECISION, winner, state.game.ply, "19.1.4", event.at)
    state = evolve(state, game=evolve(state.game, outcome=None), pending_verdict=None)
    return state._end(
        outcome, "declared by the chief arbiter", automatic=False, actor=event.arbiter, cause=event.reason
    )


def _on_revised(state: Adjudication, event: Revised) -> Adjudication:
    if any(e.at > event.at for e in event.events):
        raise AdjudicationError("a revision replays events up to its own time, not after it")
    revised = replay(state.settings, event.events)._fire_deadlines(event.at)
    common = 0
    while common < min(len(state.log), len(revised.log)) and state.log[common] == revised.log[common]:
        common += 1
    before = state.pending_verdict or state.outcome
    after = revised.pending_verdict or revised.outcome
    withdrawn = f"the verdict ({_describe(before)}) is withdrawn" if before is not None else "the game is ruled again"
    now = f"; now {_describe(after)}" if after is not None else "; the game goes on"
    article = before.article if before is not None else (after.article if after is not None else "")
    entry = LogEntry(event.at, "revision", f"{event.cause}: {withdrawn}{now}", article, "", event.cause)
    return evolve(revised, log=(*state.log, entry, *revised.log[common:]))


_HANDLERS: Final[dict[type, Any]] = {
    PlayerJoined: _on_joined,
    PlayerReconnected: _on_joined,
    PlayerDisconnected: _on_disconnected,
    Played: _on_played,
    Resigned: _on_resigned,
    DrawOffered: _on_draw_offered,
    DrawAccepted: _on_draw_accepted,
    DrawDeclined: _on_draw_declined,
    Tick: _on_tick,
    ClockPaused: _on_paused,
    ClockResumed: _on_resumed,
    TimeAdjusted: _on_time_adjusted,
    SharedTimeSplit: _on_split,
    GameSuspended: _on_suspended,
    GameResumed: _on_game_resumed,
    VerdictConfirmed: _on_verdict_confirmed,
    VerdictOverruled: _on_verdict_overruled,
    PenaltyImposed: _on_penalty,
    ResultConfirmed: _on_result_confirmed,
    ResultDeclared: _on_result_declared,
    Revised: _on_revised,
}


def replay(settings: AdjudicationSettings, events: list[Event] | tuple[Event, ...]) -> Adjudication:
    """Fold ``events`` from the start.  The same events always give the same state."""
    state = Adjudication.new(settings)
    for event in events:
        state = state.apply(event)
    return state


# --- Snapshots -------------------------------------------------------------------------------------------------------


def _outcome_dict(outcome: Outcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "termination": outcome.termination.value,
        "winner": outcome.winner.value if outcome.winner else None,
        "ply": outcome.ply,
        "article": outcome.article,
        "at": outcome.at,
        "double_loss": outcome.double_loss,
    }


def _outcome_from(data: dict[str, Any] | None) -> Outcome | None:
    if data is None:
        return None
    winner = Color(data["winner"]) if data["winner"] else None
    return Outcome(
        Termination(data["termination"]), winner, data["ply"], data["article"], data["at"], data["double_loss"]
    )


def _players(players: frozenset[Player]) -> list[str]:
    return sorted(p.value for p in players)


def _player_set(values: list[str]) -> frozenset[Player]:
    return frozenset(Player(v) for v in values)


def settings_to_dict(settings: AdjudicationSettings) -> dict[str, Any]:
    """The JSON form of a game's settings (inverse: :func:`settings_from_dict`)."""
    game_settings = settings.game
    return {
        "time_control": settings.time_control.to_dict(),
        "start_at": settings.start_at,
        "game": {
            "rule": game_settings.rule,
            "opening": game_settings.opening,
            "adjudication": game_settings.adjudication.value,
            "five_eye": game_settings.five_eye.value,
            "max_candidates": game_settings.max_candidates,
            "min_stones_before_pass": game_settings.min_stones_before_pass,
        },
        "lateness_tolerance_ms": settings.lateness_tolerance_ms,
        "reconnect_window_ms": settings.reconnect_window_ms,
        "confirm_time_verdicts": settings.confirm_time_verdicts,
        "both_disconnected": settings.both_disconnected.value,
        "draw_offer_grace_ms": settings.draw_offer_grace_ms,
        "penalty_ladders": {k: v.value for k, v in sorted(settings.penalty_policy.ladders.items())},
    }


def settings_from_dict(raw: dict[str, Any]) -> AdjudicationSettings:
    game_raw = raw["game"]
    return AdjudicationSettings(
        time_control=TimeControl.from_dict(raw["time_control"]),
        start_at=raw["start_at"],
        game=GameSettings(
            rule=game_raw["rule"],
            opening=game_raw["opening"],
            adjudication=AdjudicationMode(game_raw["adjudication"]),
            five_eye=FiveEye(game_raw["five_eye"]),
            max_candidates=game_raw["max_candidates"],
            min_stones_before_pass=game_raw["min_stones_before_pass"],
        ),
        lateness_tolerance_ms=raw["lateness_tolerance_ms"],
        reconnect_window_ms=raw["reconnect_window_ms"],
        confirm_time_verdicts=raw["confirm_time_verdicts"],
        # Games stored before the setting keep the reading they were ruled under (each player's own window).
        both_disconnected=BothDisconnected(raw.get("both_disconnected", BothDisconnected.WINDOW.value)),
        draw_offer_grace_ms=raw["draw_offer_grace_ms"],
        penalty_policy=PenaltyPolicy({k: Ladder(v) for k, v in raw["penalty_ladders"].items()}),
    )


def _snapshot(state: Adjudication) -> dict[str, Any]:
    return {
        "settings": settings_to_dict(state.settings),
        "actions": [action.token() for action in state.game.actions],
        "outcome": _outcome_dict(state.game.outcome),
        "clock": state.clock.to_dict(),
        "now": state.now,
        "started": state.started,
        "joined": _players(state.joined),
        "excused": _players(state.excused),
        "arrival_deadline": state.arrival_deadline,
        "feed": [[[gap.start, gap.end] for gap in timeline.gaps] for timeline in state.feed],
        "reconnect_from": list(state.reconnect_from),
        "paused_at": state.paused_at,
        "suspension": None
        if state.suspension is None
        else {
            "at": state.suspension.at,
            "sealed_move": state.suspension.sealed_move.token() if state.suspension.sealed_move else None,
            "sealed_by": state.suspension.sealed_by.value if state.suspension.sealed_by else None,
            "round_wide": state.suspension.round_wide,
        },
        "pending_verdict": _outcome_dict(state.pending_verdict),
        "draw_offer": None if state.draw_offer is None else [state.draw_offer.by.value, state.draw_offer.at],
        "draw_barred": _players(state.draw_barred),
        "last_mover": state.last_mover.value if state.last_mover else None,
        "last_move_at": state.last_move_at,
        "penalties": [
            {
                "player": p.player.value,
                "kind": p.kind.value,
                "offence": p.offence,
                "occurrence": p.occurrence,
                "imposed_by": p.imposed_by.value,
                "arbiter": p.arbiter,
                "at": p.at,
                "reason": p.reason,
                "evidence": list(p.evidence),
            }
            for p in state.penalties.penalties
        ],
        "confirmed": state.confirmed,
        "disciplinary_losses": _players(state.disciplinary_losses),
        "disqualified": _players(state.disqualified),
        "log": [[e.at, e.kind, e.text, e.article, e.actor, e.cause] for e in state.log],
    }


def restore(data: dict[str, Any]) -> Adjudication:
    """The state a :meth:`Adjudication.to_dict` snapshot was taken of; it continues exactly as the original would."""
    settings = settings_from_dict(data["settings"])
    game = Game.new(settings.game)
    for token in data["actions"]:
        game = evolve(game, outcome=None).apply(parse_action(token))
    game = evolve(game, outcome=_outcome_from(data["outcome"]))
    suspension_raw = data["suspension"]
    feed_first, feed_second = (
        Timeline(Source.FEED, tuple(Gap(start, end) for start, end in gaps)) for gaps in data["feed"]
    )
    reconnect_first, reconnect_second = data["reconnect_from"]
    return Adjudication(
        settings=settings,
        game=game,
        clock=Clock.from_dict(data["clock"]),
        now=data["now"],
        started=data["started"],
        joined=_player_set(data["joined"]),
        excused=_player_set(data["excused"]),
        arrival_deadline=data["arrival_deadline"],
        feed=(feed_first, feed_second),
        reconnect_from=(reconnect_first, reconnect_second),
        paused_at=data["paused_at"],
        suspension=None
        if suspension_raw is None
        else Suspension(
            suspension_raw["at"],
            parse_action(suspension_raw["sealed_move"]) if suspension_raw["sealed_move"] else None,
            Player(suspension_raw["sealed_by"]) if suspension_raw["sealed_by"] else None,
            suspension_raw["round_wide"],
        ),
        pending_verdict=_outcome_from(data["pending_verdict"]),
        draw_offer=None
        if data["draw_offer"] is None
        else DrawOffer(Player(data["draw_offer"][0]), data["draw_offer"][1]),
        draw_barred=_player_set(data["draw_barred"]),
        last_mover=Player(data["last_mover"]) if data["last_mover"] else None,
        last_move_at=data["last_move_at"],
        penalties=PenaltyBook(
            tuple(
                Penalty(
                    Player(p["player"]),
                    PenaltyKind(p["kind"]),
                    p["offence"],
                    p["occurrence"],
                    Role(p["imposed_by"]),
                    p["arbiter"],
                    p["at"],
                    p["reason"],
                    tuple(p["evidence"]),
                )
                for p in data["penalties"]
            )
        ),
        confirmed=data["confirmed"],
        disciplinary_losses=_player_set(data["disciplinary_losses"]),
        disqualified=_player_set(data["disqualified"]),
        log=tuple(LogEntry(*entry) for entry in data["log"]),
    )
