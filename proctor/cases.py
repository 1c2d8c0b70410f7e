"""Cases: the findings about one player (or one game) of one kind, grouped, so that the desk sees one case with its
occurrences instead of a flood of incidents.  Pure: no I/O, the time is passed in.

A case is keyed by its kind and what it is about (:func:`case_key`): the player when the incident names one, else
its game (rule incidents of one cause in a game, such as ``clock-mismatch`` per move, collapse into one case), else
the incident alone.  A new incident joins the open case of its key.  A case's state is never stored: it is folded
from its occurrences (the incidents) and the actions taken on it, both append-only (:class:`CaseFile`).

When the desk is alerted (``alert`` on the stream), by rule:

- a case opens (its first occurrence); when the key's previous case was dismissed (or confirmed) and the finding
  happens again, a **new** case opens that ``follows`` the old one, and its alert says so: a resolved case never
  changes again;
- a case escalates: its total duration (the detector's "ended after N s" notes) crosses a step of
  :data:`DURATION_STEPS_MS`, or a pending verdict passes its event's confirmation deadline (escalated to the chief
  arbiter: nothing is ruled automatically).

Any other occurrence joins the open case quietly (a ``case`` event on the stream, without ``alert``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from engine.adjudication import Adjudication
from engine.game import Termination
from engine.openings import Player

VERDICT_KIND: Final = "verdict-pending"
"""The kind of the incident (and case) a time verdict that waits for the arbiter raises (``confirm_time_verdicts``)."""
DURATION_STEPS_MS: Final = (60_000, 300_000, 900_000)
"""A case re-alerts when the total duration of its occurrences crosses one of these (1, 5 and 15 minutes)."""
LEAVE_KIND: Final = "leave-request"
"""The kind of a player's request to leave the competition area (36.4.1), answered on its case."""
RESOLUTIONS: Final = {
    "dismiss": "dismissed", "confirm": "confirmed", "overrule": "overruled", "decide": "decided",
    "penalty": "penalised", "grant-leave": "granted", "refuse": "refused",
}  # fmt: skip
"""The actions that close a case, and the status each leaves (``decide``: the game's result was declared otherwise;
``penalty``: the ladder's penalty given for it; ``grant-leave`` and ``refuse``: a leave request answered)."""
STATUSES: Final = ("open", *RESOLUTIONS.values())
ESCALATE: Final = "escalate"
"""The service's action on a case that re-alerts it (``detail.reason``: ``duration`` or ``confirmation-deadline``)."""
_ENDED: Final = re.compile(r"^ended after (\d+(?:\.\d+)?) s$")


def case_key(kind: str, game_id: int | None, player_ref: str | None, incident_id: int, device: object = None) -> str:
    """What a case is about: a player and kind (and the device, for a player's second camera or screen: its side
    camera lost is another case than its front camera lost), else a game and kind, else the incident alone."""
    if player_ref:
        return f"player:{player_ref}/{kind}" + (f"/{device}" if device in ("side", "screen") else "")
    if game_id is not None:
        return f"game:{game_id}/{kind}"
    return f"incident:{incident_id}"


def ended_after_ms(arbiter: str, note: str) -> int | None:
    """The duration a detector's note gives a finding ("ended after 40 s"), in ms; None for any other note."""
    match = _ENDED.match(note) if arbiter.startswith("detector") else None
    return None if match is None else round(float(match.group(1)) * 1000)


def steps_crossed(before_ms: int, after_ms: int) -> tuple[int, ...]:
    """The duration steps a case's total crosses when it grows from ``before_ms`` to ``after_ms``."""
    return tuple(step for step in DURATION_STEPS_MS if before_ms < step <= after_ms)


@dataclass(frozen=True, slots=True)
class CaseHead:
    """What the writer keeps in memory of a case to group the next incident and to escalate: replaced, never
    mutated."""

    id: int
    key: str
    kind: str
    game_id: int | None
    """The game of its latest occurrence that has one."""
    opened_ms: int
    occurrences: int = 1
    total_ms: int = 0
    status: str = "open"
    escalated: frozenset[str] = frozenset()
    """The escalations given (``duration:60000``, ``confirmation-deadline``), each once."""

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @property
    def is_verdict(self) -> bool:
        return self.kind == VERDICT_KIND

    @property
    def player_ref(self) -> str | None:
        """The player the case is about (its key's), None for a game's or an incident's case."""
        return self.key.removeprefix("player:").rsplit("/", 1)[0] if self.key.startswith("player:") else None


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One incident of a case."""

    incident: int
    at: int
    summary: str
    source: str
    article: str | None
    confidence: float | None
    evidence: dict[str, Any]
    game_id: int | None
    duration_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ActionTaken:
    """One action on a case: an arbiter's (dismiss, confirm, overrule, decide) or the service's (escalate)."""

    id: int
    at: int
    arbiter: str
    role: str
    action: str
    note: str
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Alert:
    """Why the desk should sound for a case, and for whom (None: every arbiter of its section)."""

    reason: str
    at: int
    for_role: str | None = None


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A case folded from its rows: its occurrences and the actions taken, in order."""

    id: int
    key: str
    kind: str
    player_ref: str | None
    opened_ms: int
    follows: int | None
    follows_status: str | None
    occurrences: tuple[Occurrence, ...]
    actions: tuple[ActionTaken, ...] = field(default=())

    @property
    def status(self) -> str:
        for action in reversed(self.actions):
            if action.action in RESOLUTIONS:
                return RESOLUTIONS[action.action]
        return "open"

    @property
    def first_ms(self) -> int:
        return min((o.at for o in self.occurrences), default=self.opened_ms)

    @property
    def last_ms(self) -> int:
        return max((o.at for o in self.occurrences), default=self.opened_ms)

    @property
    def latest(self) -> Occurrence | None:
        return max(self.occurrences, key=lambda o: (o.at, o.incident), default=None)

    @property
    def game_id(self) -> int | None:
        """The game of its latest occurrence that has one."""
        games = [o for o in self.occurrences if o.game_id is not None]
        return max(games, key=lambda o: (o.at, o.incident)).game_id if games else None

    @property
    def total_duration_ms(self) -> int | None:
        """The sum of the known durations (None: no occurrence has one yet)."""
        known = [o.duration_ms for o in self.occurrences if o.duration_ms is not None]
        return sum(known) if known else None

    @property
    def best_evidence(self) -> Occurrence | None:
        """The occurrence whose evidence best shows the case: of those with media, the longest, then the latest;
        else the latest."""
        with_media = [o for o in self.occurrences if o.evidence.get("media")]
        pool = with_media or list(self.occurrences)
        return max(pool, key=lambda o: (o.duration_ms or 0, o.at, o.incident), default=None)

    @property
    def alert(self) -> Alert | None:
        """The case's latest alert: an escalation, else a recurrence after the case it follows was resolved."""
        for action in reversed(self.actions):
            if action.action == ESCALATE:
                return Alert(str(action.detail.get("reason", "")), action.at, action.detail.get("for"))
        if self.follows is not None:
            return Alert(f"again after {self.follows_status or 'resolved'}", self.opened_ms)
        return None

    @property
    def urgency(self) -> int:
        """0 most urgent: a verdict escalated to the chief, a verdict pending, an open case re-alerted, an open case;
        4, a closed case."""
        if self.status != "open":
            return 4
        alert = self.alert
        if self.kind == VERDICT_KIND:
            return 0 if alert is not None and alert.for_role == "chief" else 1
        return 2 if alert is not None else 3

    def sort_key(self) -> tuple[int, int, int]:
        """Urgency first, then the newest (last occurrence), then the newest case."""
        return (self.urgency, -self.last_ms, -self.id)


def verdict_facts(state: Adjudication, refs: dict[str, Player]) -> dict[str, Any]:
    """What a pending verdict rests on, for the arbiter who confirms or overrules it: the termination, its article,
    who would win, and for each player concerned why (not arrived, disconnected, out of time) and for how long."""
    outcome = state.pending_verdict
    assert outcome is not None
    ref_of = {seat: ref for ref, seat in refs.items()}
    at = outcome.at if outcome.at is not None else state.now
    players: list[dict[str, Any]] = []
    for index, seat in enumerate((Player.FIRST, Player.SECOND)):
        entry = {"player": ref_of.get(seat), "colour": state.color_of(seat).value}
        if outcome.termination is Termination.NO_SHOW:
            if seat not in state.joined and seat not in state.excused:
                since = state.settings.start_at
                players.append({**entry, "why": "not-arrived", "since_ms": since, "absent_ms": max(0, at - since)})
        elif outcome.termination is Termination.RECONNECT_DEADLINE:
            gone = state.reconnect_from[index]
            if gone is not None:
                players.append({**entry, "why": "disconnected", "since_ms": gone, "absent_ms": max(0, at - gone)})
        elif state.clock.remaining_of(seat) == 0:
            players.append({**entry, "why": "out-of-time"})
    return {
        "termination": outcome.termination.value, "article": outcome.article,
        "winner": outcome.winner.value if outcome.winner else None, "double_loss": outcome.double_loss, "at": at,
        "players": players,
    }  # fmt: skip
