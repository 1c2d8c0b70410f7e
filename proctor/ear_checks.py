"""Scheduled ear checks (36.2): the service prompts the ear check itself, as a section's policy asks.

A section's ``[sections.policy]`` may ask for an ear check at the start of each game (``ear_check_at_start``) and for
``ear_checks_per_hour`` more at random times (docs/events.md).  The random times of a game are drawn hour by hour of
play, hour *k* being ``[start + k h, start + (k + 1) h)``: in each, N uniformly random times at least
:data:`SPACING_MS` apart, none in the first :data:`START_QUIET_MS` of the game (after the start check) and none in an
hour's last :data:`SPACING_MS` (so the next hour's first is far enough).  The random source is injectable: a seeded
``random.Random`` gives the same times again (the tests), the service's default is the system's.

The service makes a check only while the player's game is in play (started, not over, not paused, suspended or
waiting for an arbiter's verdict) and the player has a live camera stream; otherwise the check is recorded as
skipped, with why (a ``camera_action`` of kind ``skip``, audited as ``camera.skip``).  A check that comes due while
another prompt is on the player's page waits for it to end.  Its recording becomes one ``ear-check`` incident
(source ``service``) with both stills and both ear crops as its evidence (proctor/camera.py).

Nothing of the schedule is stored: when the service (re)starts, every game in play is planned again from the current
state.  Times already past are dropped (no burst of missed checks); the start check is made only within
:data:`START_LATE_MS` of the start and when no ear check of the player (made or skipped) is recorded since; and no
random check comes within :data:`SPACING_MS` after the player's last ear check, an arbiter's included.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from engine.adjudication import Adjudication
from proctor.errors import ConflictError
from proctor.live_games import LiveGame
from proctor.models import CameraAction, Game, Pairing, Player, Section
from proctor.wall_clock import now_ms

if TYPE_CHECKING:
    from proctor.camera import Camera

log = logging.getLogger("proctor.ear_checks")

ARTICLE: Final = "36.2"
HOUR_MS: Final = 3_600_000
SPACING_MS: Final = 5 * 60_000
"""Two scheduled ear checks of a player are at least this far apart (5 minutes)."""
START_QUIET_MS: Final = 5 * 60_000
"""No random ear check in the first 5 minutes of a game (the start check has just been made)."""
START_LATE_MS: Final = 5 * 60_000
"""The start check is made up to 5 minutes late (the game seen late, the service restarted), never later."""
MAX_PER_HOUR: Final = 6
"""A section's ``ear_checks_per_hour`` at most."""
SECONDS: Final = 15
"""A scheduled check's window, as an arbiter's prompt by default."""


@dataclass(frozen=True, slots=True)
class EarCheckPolicy:
    """What a section's policy asks of the service (``ear_check_at_start``, ``ear_checks_per_hour``)."""

    at_start: bool = False
    per_hour: int = 0

    @classmethod
    def of(cls, policy: Mapping[str, Any]) -> EarCheckPolicy:
        """From a section's policy as stored (checked when the event was loaded; missing keys: no checks)."""
        return cls(bool(policy.get("ear_check_at_start", False)), int(policy.get("ear_checks_per_hour") or 0))

    @property
    def active(self) -> bool:
        return self.at_start or self.per_hour > 0

    def describe(self) -> dict[str, Any]:
        return {"at_start": self.at_start, "per_hour": self.per_hour, "article": ARTICLE}


class Occasion(enum.Enum):
    """Why the service prompts an ear check."""

    START = "start"
    """The policy's check at the start of the game."""
    RANDOM = "random"
    """One of the policy's checks an hour, at a random time."""

    @property
    def title(self) -> str:
        return {"start": "at the start of the game", "random": "at a random time"}[self.value]


@dataclass(frozen=True, slots=True)
class DueCheck:
    """A scheduled ear check that has come due."""

    game_id: int
    player_ref: str
    due_ms: int
    occasion: Occasion


def random_times(start_ms: int, hour: int, per_hour: int, rng: random.Random) -> list[int]:
    """The random ear checks of one hour of a game (hour 0 begins at its start), sorted: ``per_hour`` times drawn
    uniformly among those at least :data:`SPACING_MS` apart, from the hour's beginning (after :data:`START_QUIET_MS`
    in the first hour) to :data:`SPACING_MS` before its end."""
    if per_hour <= 0:
        return []
    low = start_ms + hour * HOUR_MS + (START_QUIET_MS if hour == 0 else 0)
    high = start_ms + (hour + 1) * HOUR_MS - SPACING_MS
    slack = high - low - (per_hour - 1) * SPACING_MS
    if slack < 0:
        raise ValueError(f"{per_hour} ear checks an hour cannot be {SPACING_MS // 60_000} minutes apart")
    offsets = sorted(rng.randint(0, slack) for _ in range(per_hour))
    return [low + offset + index * SPACING_MS for index, offset in enumerate(offsets)]


@dataclass
class EarCheckPlan:
    """One player's scheduled ear checks in one game: the start check, then the random times, drawn an hour at a
    time as play reaches each hour."""

    game_id: int
    player_ref: str
    start_ms: int
    policy: EarCheckPolicy
    rng: random.Random
    start_due: int | None = None
    pending: list[int] = field(default_factory=list)
    """Random times drawn and not yet due, sorted."""
    hours: int = 0
    """How many hours of the game have had their times drawn."""
    not_before: int = 0
    """No random check before this (the plan's making, the player's last ear check + SPACING_MS)."""
    waiting: DueCheck | None = None
    """A check that came due and is not made yet (another prompt is on the player's page)."""

    @classmethod
    def make(
        cls, game_id: int, player_ref: str, start_ms: int, policy: EarCheckPolicy, rng: random.Random, now: int,
        last_check_ms: int | None,
    ) -> EarCheckPlan:  # fmt: skip
        """The plan from the current state (``now``; the player's last ear check since the start, if any): the start
        check if it is recent and not made yet, and the random times from now on."""
        plan = cls(game_id, player_ref, start_ms, policy, rng)
        if policy.at_start and last_check_ms is None and now - start_ms <= START_LATE_MS:
            plan.start_due = start_ms
        plan.not_before = now if last_check_ms is None else max(now, last_check_ms + SPACING_MS)
        return plan

    def _draw_until(self, now: int) -> None:
        while self.policy.per_hour and self.start_ms + self.hours * HOUR_MS <= now:
            times = random_times(self.start_ms, self.hours, self.policy.per_hour, self.rng)
            self.pending += [at for at in times if at >= self.not_before]
            self.hours += 1

    def due(self, now: int) -> DueCheck | None:
        """The check to make at ``now``, if any.  Random times that passed together (the clock jumped) are one
        check, the latest; those within SPACING_MS after the last check are dropped."""
        if self.waiting is None:
            self._draw_until(now)
            if self.start_due is not None and self.start_due <= now:
                self.waiting = DueCheck(self.game_id, self.player_ref, self.start_due, Occasion.START)
                self.start_due = None
            else:
                past = [at for at in self.pending if at <= now]
                del self.pending[: len(past)]
                eligible = [at for at in past if at >= self.not_before]
                if eligible:
                    self.waiting = DueCheck(self.game_id, self.player_ref, eligible[-1], Occasion.RANDOM)
        return self.waiting

    def done(self, now: int) -> None:
        """The waiting check was made (or skipped) at ``now``."""
        self.waiting = None
        self.checked(now)

    def checked(self, at: int) -> None:
        """An ear check of the player was made at ``at`` (this one, or an arbiter's): keep the next away from it."""
        self.not_before = max(self.not_before, at + SPACING_MS)

    def upcoming(self) -> list[int]:
        """The times still to come that are already drawn (the current hour's)."""
        start = [] if self.start_due is None else [self.start_due]
        return start + [at for at in self.pending if at >= self.not_before]


def not_in_play(state: Adjudication) -> str | None:
    """Why the game is not in play now (None when it is): the scheduled ear checks are made only in play."""
    if not state.started:
        return "the game has not started"
    if state.is_over:
        return "the game is over"
    if state.pending_verdict is not None:
        return "the game is waiting for the arbiter's verdict"
    if state.suspension is not None:
        return "the game is suspended"
    if state.paused_at is not None:
        return "the game is paused"
    return None


def ear_check_policy(connection: Connection, game_id: int, player_ref: str) -> EarCheckPolicy:
    """The ear checks the game's section asks for (the section of its pairing), or, for a game linked to no pairing,
    the player's section (by ``platform_ref``, the latest loaded: the section their camera follows)."""
    row = connection.execute(
        select(col(Section.policy))
        .select_from(Game)
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .where(col(Game.id) == game_id)
    ).first()
    if row is None and player_ref:
        row = connection.execute(
            select(col(Section.policy))
            .select_from(Section)
            .join(Player, col(Player.section_id) == col(Section.id))
            .where(col(Player.platform_ref) == player_ref)
            .order_by(col(Section.id).desc())
            .limit(1)
        ).first()
    return EarCheckPolicy.of(dict(row[0] or {}) if row is not None else {})


def last_ear_check(connection: Connection, player_ref: str, since: int) -> int | None:
    """When the player's last ear check (any: prompted by an arbiter or the service, or a scheduled one skipped) was
    recorded, since ``since``."""
    rows = connection.execute(
        select(col(CameraAction.created_ms), col(CameraAction.detail)).where(
            col(CameraAction.player_ref) == player_ref,
            col(CameraAction.kind).in_(("prompt", "skip")),
            col(CameraAction.created_ms) >= since,
        )
    )
    times = [at for at, detail in rows if (detail or {}).get("prompt") == "ear-check"]
    return max(times, default=None)


class EarCheckScheduler:
    """Plans each player's scheduled ear checks while their game is in play and makes them through the camera.  The
    clock (ms) and the random source are injectable; :meth:`tick` does one round, :meth:`run` ticks forever."""

    def __init__(self, camera: Camera, rng: random.Random | None = None, clock: Callable[[], int] = now_ms) -> None:
        self.camera = camera
        self.rng = rng if rng is not None else random.SystemRandom()
        self.clock = clock
        self.plans: dict[tuple[int, str], EarCheckPlan | None] = {}
        """By (game, player); None when the policy asks for no ear checks."""
        self.lock = asyncio.Lock()
        self.seconds = SECONDS
        """Each scheduled check's window."""

    async def run(self, period_s: float = 1.0) -> None:
        while True:
            try:
                await self.tick(self.clock())
            except Exception:
                log.exception("the scheduled ear checks failed; trying again")
            await asyncio.sleep(period_s)

    def checked(self, player_ref: str, at: int) -> None:
        """An arbiter prompted an ear check of the player at ``at``: no scheduled one within SPACING_MS after it."""
        for (_, player), plan in self.plans.items():
            if player == player_ref and plan is not None:
                plan.checked(at)

    async def tick(self, now: int) -> list[dict[str, Any]]:
        """Make, or record as skipped, every check due at ``now``; what was done (``player``, ``game``, ``occasion``,
        ``due``, and ``prompt`` or ``skipped`` with why)."""
        async with self.lock:
            outcomes = []
            seen: set[tuple[int, str]] = set()
            for game in list(self.camera.service.games.values()):
                if not game.state.started or game.state.is_over:
                    continue
                for player_ref in game.refs:
                    key = (game.id, player_ref)
                    seen.add(key)
                    if key not in self.plans:
                        self.plans[key] = self._plan(game, player_ref, now)
                    plan = self.plans[key]
                    check = None if plan is None else plan.due(now)
                    if plan is None or check is None:
                        continue
                    outcome = await self._make(check, game, now)
                    if outcome is not None:
                        plan.done(now)
                        outcomes.append(outcome)
            for key in set(self.plans) - seen:  # games over (or gone): their plans go
                del self.plans[key]
            return outcomes

    def _plan(self, game: LiveGame, player_ref: str, now: int) -> EarCheckPlan | None:
        start = game.state.settings.start_at
        with self.camera.writer.engine.connect() as connection:
            policy = ear_check_policy(connection, game.id, player_ref)
            if not policy.active:
                return None
            last = last_ear_check(connection, player_ref, since=start)
        rng = random.Random(self.rng.getrandbits(64))
        return EarCheckPlan.make(game.id, player_ref, start, policy, rng, now, last)

    async def _make(self, check: DueCheck, game: LiveGame, now: int) -> dict[str, Any] | None:
        """Prompt the check, or record it as skipped; None to wait (another prompt is on the player's page)."""
        camera = self.camera
        base = {"player": check.player_ref, "game": check.game_id, "occasion": check.occasion.value,
                "due": check.due_ms}  # fmt: skip
        reason = not_in_play(game.state) or camera.no_live_stream(check.player_ref)
        if reason is None and check.player_ref in camera.prompting:
            return None
        if reason is None:
            try:
                prompted = await camera.scheduled_ear_check(check, self.seconds)
                return {**base, "prompt": prompted["id"]}
            except ConflictError:  # the stream dropped just now
                reason = "no live camera stream"
            except Exception:
                log.exception("prompting a scheduled ear check failed")
                reason = "the service could not prompt it (see its log)"
        try:
            await camera.skip_ear_check(check, reason, now)
        except Exception:
            log.exception("recording a skipped ear check failed")
        return {**base, "skipped": reason}
