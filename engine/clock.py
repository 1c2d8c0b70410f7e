"""Time controls and the online clock (14, 30.3, 34, 37), in integer milliseconds.

Time is always passed in (``now``, milliseconds since any fixed origin, e.g. the Unix epoch); nothing here reads a
clock.  A :class:`Clock` is immutable: every operation returns a new one.

Clocks belong to players, not colours (:class:`engine.openings.Player`): swaps in the opening change who holds Black,
and the time a person has used stays theirs.  While time runs it is *charged* to one player (the one whose decision
is due, 34.2) or, while both are absent at the start, to each absent player (14.3).

Shared time (14.1.3): one pool for the game that runs while either player thinks; the arbiter may split it at any
moment into halves of what remains, and when it runs out each player continues under a sudden-death limit
(``after_pool_ms``, an event setting because the rules give no figure).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

from engine.errors import EngineError, IllegalActionError
from engine.openings import Player
from engine.values import evolve

MINUTE: Final = 60_000
SECOND: Final = 1_000


class TimeControlKind(enum.Enum):
    SUDDEN_DEATH = "sudden-death"
    """Each player has a fixed time (14.1.1)."""
    INCREMENT = "increment"
    """A fixed time plus an increment for every move (14.1.2)."""
    SHARED = "shared"
    """One pool for both players, then sudden death (14.1.3)."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    kind: TimeControlKind
    initial_ms: int
    """Each player's initial time; for shared time, the pool."""
    increment_ms: int = 0
    after_pool_ms: int = 0
    """Shared time only: each player's sudden-death time once the pool has run out."""
    name: str = ""

    def __post_init__(self) -> None:
        if self.initial_ms <= 0 or self.increment_ms < 0 or self.after_pool_ms < 0:
            raise EngineError("a time control needs a positive initial time and no negative increment")
        if self.kind is not TimeControlKind.INCREMENT and self.increment_ms:
            raise EngineError(f"a {self.kind.value} time control has no increment")

    @property
    def article(self) -> str:
        return {"sudden-death": "14.1.1", "increment": "14.1.2", "shared": "14.1.3"}[self.kind.value]

    @property
    def is_rapid(self) -> bool:
        """Rapid games: 15 minutes or less for each side (30.1)."""
        return self.kind is not TimeControlKind.SHARED and self.initial_ms <= 15 * MINUTE

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "initial_ms": self.initial_ms,
            "increment_ms": self.increment_ms,
            "after_pool_ms": self.after_pool_ms,
            "name": self.name,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TimeControl:
        return cls(
            TimeControlKind(data["kind"]),
            int(str(data["initial_ms"])),
            int(str(data["increment_ms"])),
            int(str(data["after_pool_ms"])),
            str(data["name"]),
        )

    def describe(self) -> str:
        if self.kind is TimeControlKind.SHARED:
            return f"shared {_minutes(self.initial_ms)}, then {_minutes(self.after_pool_ms)} each"
        if self.kind is TimeControlKind.INCREMENT:
            return f"{_minutes(self.initial_ms)} + {self.increment_ms // SECOND} s"
        return f"{_minutes(self.initial_ms)} sudden death"


def _minutes(ms: int) -> str:
    return f"{ms // MINUTE} min" if ms % MINUTE == 0 else f"{ms / MINUTE:g} min"


def sudden_death(minutes: float, name: str = "") -> TimeControl:
    return TimeControl(TimeControlKind.SUDDEN_DEATH, round(minutes * MINUTE), name=name)


def increment(minutes: float, seconds: float, name: str = "") -> TimeControl:
    return TimeControl(TimeControlKind.INCREMENT, round(minutes * MINUTE), round(seconds * SECOND), name=name)


def shared(minutes: float, after_minutes: float, name: str = "") -> TimeControl:
    return TimeControl(
        TimeControlKind.SHARED, round(minutes * MINUTE), after_pool_ms=round(after_minutes * MINUTE), name=name
    )


#: Named time controls: the rapid controls of 30.3 and the national events' controls (regulations).
PRESETS: Final[dict[str, TimeControl]] = {
    "rapid-15": sudden_death(15, "rapid-15"),  # 30.3.1 A
    "rapid-10+10": increment(10, 10, "rapid-10+10"),  # 30.3.1 B
    "super-rapid-5+3": increment(5, 3, "super-rapid-5+3"),  # 30.3.2
    "blitz-3+2": increment(3, 2, "blitz-3+2"),  # 30.3.3
    "youth-60": sudden_death(60, "youth-60"),  # regulations 003 VIII(5): youth group, 60 min sudden death
    # Regulations 003 VIII(5), juvenile and children groups: "shared 60 minutes, each side 30 minutes sudden death".
    # Read as a true shared pool of 60 minutes that the arbiter may split; 5 minutes each once it runs out (the
    # regulation gives no figure: an event setting).
    "youth-shared-60": shared(60, 5, "youth-shared-60"),
    "playoff-5+3": increment(5, 3, "playoff-5+3"),  # regulations: two-game play-off
    "playoff-3+2": increment(3, 2, "playoff-3+2"),  # regulations: single-game play-offs until someone wins
}


def find_time_control(text: str) -> TimeControl:
    """A preset name, or ``"M+S"`` (minutes + seconds increment), or ``"M"`` (sudden death)."""
    key = text.strip().lower() if isinstance(text, str) else ""
    if key in PRESETS:
        return PRESETS[key]
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(?:\s*\+\s*(\d+(?:\.\d+)?))?", key)
    if match:
        minutes = float(match.group(1))
        if match.group(2) is not None and float(match.group(2)) > 0:
            return increment(minutes, float(match.group(2)), key)
        return sudden_death(minutes, key)
    raise EngineError(f"unknown time control {text!r}: expected one of {', '.join(PRESETS)}, or 'M+S' like '10+5'")


@dataclass(frozen=True, slots=True)
class PlayOff:
    """The play-off chain of the national events' regulations: two games at 5 min + 3 s with colours swapped, then
    single games at 3 min + 2 s until one player wins."""

    first_pair: TimeControl = PRESETS["playoff-5+3"]
    sudden: TimeControl = PRESETS["playoff-3+2"]

    def game(self, index: int) -> TimeControl:
        """The time control of play-off game ``index`` (0-based)."""
        return self.first_pair if index < 2 else self.sudden

    def first_player_is_original_first(self, index: int) -> bool:
        """Colours alternate game by game (10.1.3); game 0 as the pairing says."""
        return index % 2 == 0

    def decided(self, scores: list[float]) -> bool:
        """Whether the play-off has a winner after the games scored so far (the first player's points per game)."""
        if len(scores) < 2:
            return False
        if len(scores) == 2:
            return sum(scores) != 1
        return scores[-1] != 0.5


# --- The clock -------------------------------------------------------------------------------------------------------


def _index(player: Player) -> int:
    return 0 if player is Player.FIRST else 1


@dataclass(frozen=True, slots=True)
class Clock:
    """Both players' clocks.  ``remaining`` and ``used`` are (first player, second player) in ms."""

    control: TimeControl
    remaining: tuple[int, int]
    used: tuple[int, int] = (0, 0)
    pool: int = 0
    """Shared time left (0 once split or spent, or for other controls)."""
    charged: frozenset[Player] = frozenset()
    """Whose time runs now."""
    since: int = 0
    """When the current charging began (ms)."""
    stopped: bool = True
    """No time runs: before the start, paused, suspended, or after the end."""

    @classmethod
    def start(cls, control: TimeControl) -> Clock:
        if control.kind is TimeControlKind.SHARED:
            return cls(control, (control.after_pool_ms, control.after_pool_ms), pool=control.initial_ms)
        return cls(control, (control.initial_ms, control.initial_ms))

    def remaining_of(self, player: Player) -> int:
        return self.remaining[_index(player)]

    def used_of(self, player: Player) -> int:
        return self.used[_index(player)]

    @property
    def pool_active(self) -> bool:
        return self.pool > 0

    def _charge(self, now: int) -> tuple[tuple[int, int], tuple[int, int], int]:
        """(remaining, used, pool) once the time since ``since`` up to ``now`` is charged."""
        if now < self.since:
            raise IllegalActionError(f"time went backwards: {now} ms is before {self.since} ms")
        spent = now - self.since
        if spent == 0 or self.stopped or not self.charged:
            return self.remaining, self.used, self.pool
        remaining = list(self.remaining)
        used = list(self.used)
        pool = self.pool
        for player in self.charged:
            used[_index(player)] += spent
        from_players = spent
        if pool > 0:
            taken = min(pool, spent)
            pool -= taken
            from_players = spent - taken
        if from_players:
            for player in self.charged:
                i = _index(player)
                remaining[i] = max(0, remaining[i] - from_players)
        return (remaining[0], remaining[1]), (used[0], used[1]), pool

    def elapse(self, now: int) -> Clock:
        """Charge the time since ``since`` up to ``now``; never below zero (a flag falls at zero)."""
        if now == self.since:
            return self
        remaining, used, pool = self._charge(now)
        return evolve(self, remaining=remaining, used=used, pool=pool, since=now)

    def press(self, now: int, increment_for: Player | None, charged: frozenset[Player] | None) -> Clock:
        """A completed move at ``now``: charge the time, give ``increment_for`` the increment (14.1.2), and charge
        ``charged`` from now on (34.2), or stop when None; in one step."""
        remaining, used, pool = self._charge(now)
        if increment_for is not None and self.control.kind is TimeControlKind.INCREMENT:
            i = _index(increment_for)
            bonus = self.control.increment_ms
            remaining = (remaining[0] + bonus, remaining[1]) if i == 0 else (remaining[0], remaining[1] + bonus)
        if charged is None:
            return evolve(self, remaining=remaining, used=used, pool=pool, since=now, stopped=True)
        return evolve(self, remaining=remaining, used=used, pool=pool, since=now, charged=charged, stopped=False)

    def flag_time(self) -> int | None:
        """When the first charged player's time will reach zero if nothing changes (None if no time runs)."""
        if self.stopped or not self.charged:
            return None
        lowest = min(self.remaining[_index(p)] for p in self.charged)
        return self.since + self.pool + lowest

    def flagged(self) -> frozenset[Player]:
        """The charged players whose time is at zero (after :meth:`elapse`)."""
        if self.pool > 0:
            return frozenset()
        return frozenset(p for p in self.charged if self.remaining[_index(p)] == 0)

    def run(self, charged: frozenset[Player], now: int) -> Clock:
        """Charge ``charged`` from ``now`` on (34.2: the mover's clock stops, the opponent's starts)."""
        clock = self.elapse(now)
        if not clock.stopped and clock.charged == charged:
            return clock
        return evolve(clock, charged=charged, stopped=False)

    def stop(self, now: int) -> Clock:
        return evolve(self.elapse(now), stopped=True)

    def resume(self, now: int) -> Clock:
        return evolve(self, since=now, stopped=False)

    def adjust(self, player: Player, delta_ms: int, now: int) -> Clock:
        """Add (or, negative, remove) time by an arbiter's decision (14.5, 14.8); never below zero."""
        clock = self.elapse(now)
        i = _index(player)
        if clock.remaining[i] + delta_ms < 0:
            raise IllegalActionError(f"cannot remove {-delta_ms} ms: only {clock.remaining[i]} ms remain", "14.8")
        remaining = list(clock.remaining)
        remaining[i] += delta_ms
        return evolve(clock, remaining=(remaining[0], remaining[1]))

    def split_pool(self, now: int) -> Clock:
        """Put a clock on a shared-time game: each side gets half of the shared time remaining (14.1.3)."""
        if self.control.kind is not TimeControlKind.SHARED:
            raise IllegalActionError("only a shared-time game can be split", "14.1.3")
        clock = self.elapse(now)
        if clock.pool == 0:
            raise IllegalActionError("the shared time has already been split or has run out", "14.1.3")
        half = clock.pool // 2
        return evolve(clock, remaining=(half, half), pool=0)

    def to_dict(self) -> dict[str, object]:
        return {
            "control": self.control.to_dict(),
            "remaining": list(self.remaining),
            "used": list(self.used),
            "pool": self.pool,
            "charged": sorted(p.value for p in self.charged),
            "since": self.since,
            "stopped": self.stopped,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Clock:
        control = data["control"]
        remaining = data["remaining"]
        used = data["used"]
        charged = data["charged"]
        assert isinstance(control, dict) and isinstance(remaining, list) and isinstance(used, list)
        assert isinstance(charged, list)
        return cls(
            control=TimeControl.from_dict(control),
            remaining=(int(remaining[0]), int(remaining[1])),
            used=(int(used[0]), int(used[1])),
            pool=int(str(data["pool"])),
            charged=frozenset(Player(p) for p in charged),
            since=int(str(data["since"])),
            stopped=bool(data["stopped"]),
        )
