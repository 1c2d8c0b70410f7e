"""Check-in (24.1.1: "Participating players (teams) shall complete registration and check-in within the prescribed
time limits. Otherwise they may not take part in the competition."): each player of a round's pairings checks in
before the round starts.

In an online event the check-in is the camera setup.  A player is checked in for a round **by the camera setup** when
the arbiter's latest approval of their setup (``camera_action`` ``approval``, proctor.camera) made in the round's
check-in window

- approved the setup, and was given while the player's camera was streaming to the ingest (the approval records
  ``streaming``; an approval stored without it, from before it was recorded, counts as streaming);
- came after a room scan recorded in the window with pictures in it (36.4: a ``room-scan`` prompt's capture with at
  least one frame);
- and, when the section's policy checks earphones (``"earphones"`` in its ``checks``, 36.2), after an ear check
  recorded in the window whose stills show both ears (an ``ear-check`` prompt's capture with ``ear_view`` ``usable``,
  the arbiter's or the service's).  There is no separate approval of an ear check: the arbiter's approval of the setup
  after it is that approval (an arbiter who sees earphones does not approve; they confirm the ear check's case).

The round's check-in window opens at the start of the section's latest earlier round whose start is known (its first
game's ``start_at``; from the first approval ever for the first round, or when no earlier start is known) and at an
undo of the player's check-in for the round, and closes when the round starts (its first game's ``start_at``): an
approval after the start does not check the player in (a late check-in is recorded by hand).

Any arbiter (arbiter, deputy chief, chief) and the organising committee (``committee``, who answers for
registration and check-in) may also check a player in **by hand**, with a reason (the platform's own check-in, a
telephone call); the chief arbiter or a deputy chief may undo a check-in (by hand or by the camera setup) with a
reason, after which the camera setup counts again only with a new approval.  Both are append-only, sealed rows
(``check_in``) with an audit entry (``player.checked-in``, ``player.check-in-undone``) that keeps the reason's hash,
the row the reason; the live stream says ``check-in``.  The review panel and the appeals committee read, and do
nothing else.

The fold (:func:`standing`) is pure; the reads are below it, one query per table for the whole round.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import Connection, insert, select
from sqlmodel import col

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.assignments import Place, require_assigned
from proctor.camera_roster import SectionRef, StreamSnapshot, boards_shown, find_section
from proctor.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from proctor.events import CHECKS
from proctor.models import CameraAction, CheckIn, Game, Pairing, Player, Section, Withdrawal
from proctor.service import Service
from proctor.staging import Batch, Notice

ARTICLE: Final = "24.1.1"
CHECKING_ROLES: Final = (Role.ARBITER, Role.DEPUTY_CHIEF, Role.CHIEF, Role.COMMITTEE)
"""Who may check a player in by hand: any arbiter, and the organising committee."""
UNDOING_ROLES: Final = (Role.CHIEF, Role.DEPUTY_CHIEF)
"""Who may undo a check-in."""
MAX_REASON: Final = 500
PROMPT_MARGIN_MS: Final = 3_600_000
"""How far before a round's window its setup is read: a prompt made before the window whose capture falls in it."""


class Action(enum.Enum):
    CHECK_IN = "check-in"
    """A check-in by hand."""
    UNDO = "undo"
    """The player's check-in for the round (by hand or by the camera setup) undone."""


class How(enum.Enum):
    """How a player is checked in."""

    CAMERA = "camera"
    """By the camera setup: streaming, room scan (and ear check), then approved."""
    MANUAL = "manual"
    """By hand, by an arbiter or the organising committee, with a reason."""


class Missing(enum.Enum):
    """What the camera setup still lacks for a check-in, in the order the arbiter deals with it."""

    NO_PLATFORM_ID = "no-platform-id"
    """The event file gives the player no platform id: no camera link, check in by hand."""
    CAMERA = "camera-not-connected"
    """The camera is not streaming to the ingest now."""
    ROOM_SCAN = "room-scan-not-done"
    """No room scan with pictures in the window (36.4)."""
    EAR_CHECK = "ear-check-not-done"
    """No ear check whose stills show both ears in the window (36.2), where the section checks earphones."""
    NOT_APPROVED = "setup-not-approved"
    """No approval of the setup in the window."""
    REFUSED = "setup-refused"
    """The latest approval in the window said no (its note says why)."""
    APPROVED_WITHOUT_CAMERA = "approved-without-camera"
    """The latest approval was given while the camera was not streaming: approve again while it streams."""
    APPROVED_BEFORE_CHECKS = "approved-before-checks"
    """The latest approval came before the room scan or the ear check was recorded: approve again after them."""


@dataclass(frozen=True, slots=True)
class SetupStep:
    """One step of a player's camera setup as stored: a room scan or an ear check recorded (a prompt's capture), or
    the arbiter's approval."""

    id: int
    kind: str
    """``room-scan``, ``ear-check`` or ``approval``."""
    at: int
    done: bool
    """A recording: usable (a room scan with pictures, an ear check that shows both ears); an approval: approved."""
    streaming: bool = True
    """An approval: the camera was streaming when it was given."""
    by: str = ""
    role: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Record:
    """A ``check_in`` row: a check-in by hand or an undo."""

    id: int
    action: Action
    reason: str
    by: str
    role: str
    at: int


@dataclass(frozen=True, slots=True)
class Window:
    """A round's check-in window and start."""

    opens_ms: int = 0
    """The start of the latest earlier round whose start is known (0: none)."""
    starts_ms: int | None = None
    """The round's start: its first game's ``start_at`` (None: no game of the round is known yet)."""
    started: bool = False
    """The start has passed, or a game of the round is in play or over."""


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's check-in for a round, folded from the rows and the live stream."""

    how: How | None
    at: int | None = None
    by: str = ""
    role: str = ""
    reason: str = ""
    """By hand: the reason given; by the camera setup: the approval's note."""
    missing: tuple[Missing, ...] = ()
    undone: Record | None = None
    approval: SetupStep | None = None
    """The latest approval of the setup in the window."""

    @property
    def checked_in(self) -> bool:
        return self.how is not None

    def describe(self, window: Window) -> dict[str, Any]:
        """As the API gives it: every field a page needs to say it in words."""
        check_in = None
        if self.how is not None:
            late = window.starts_ms is not None and self.at is not None and self.at >= window.starts_ms
            check_in = {"how": self.how.value, "at": self.at, "by": self.by, "role": self.role,
                        "reason": self.reason, "after_start": late}  # fmt: skip
        approval = self.approval
        return {
            "checked_in": self.checked_in,
            "check_in": check_in,
            "missing": [m.value for m in self.missing],
            "approval": None if approval is None else {
                "approved": approval.done, "streaming": approval.streaming, "note": approval.note, "by": approval.by,
                "at": approval.at,
            },
            "undone": None if self.undone is None else {
                "at": self.undone.at, "by": self.undone.by, "role": self.undone.role, "reason": self.undone.reason,
            },
        }  # fmt: skip


def standing(
    records: Sequence[Record], steps: Sequence[SetupStep], window: Window, *, streaming: bool, ear_check: bool,
    has_platform_id: bool = True,
) -> Standing:  # fmt: skip
    """A player's check-in for a round: ``records`` (their ``check_in`` rows for it) and ``steps`` (their camera
    setup), each in the order stored; ``streaming``: their camera streams now; ``ear_check``: the section checks
    earphones (36.2)."""
    manual: Record | None = None
    undone: Record | None = None
    for record in records:
        if record.action is Action.CHECK_IN:
            manual = record
        else:
            manual, undone = None, record
    opens = max(window.opens_ms, undone.at + 1 if undone is not None else 0)
    inside = [s for s in steps if s.at >= opens and (window.starts_ms is None or s.at < window.starts_ms)]
    approvals = [s for s in inside if s.kind == "approval"]
    approval = approvals[-1] if approvals else None
    if manual is not None:
        return Standing(How.MANUAL, manual.at, manual.by, manual.role, manual.reason, (), undone, approval)
    scans = [s.id for s in inside if s.kind == "room-scan" and s.done]
    ears = [s.id for s in inside if s.kind == "ear-check" and s.done]
    if (
        has_platform_id and approval is not None and approval.done and approval.streaming
        and scans and scans[0] < approval.id and (not ear_check or (ears and ears[0] < approval.id))
    ):  # fmt: skip
        return Standing(How.CAMERA, approval.at, approval.by, approval.role, approval.note, (), undone, approval)
    if not has_platform_id:
        return Standing(None, missing=(Missing.NO_PLATFORM_ID,), undone=undone, approval=approval)
    missing = []
    if not streaming:
        missing.append(Missing.CAMERA)
    if not scans:
        missing.append(Missing.ROOM_SCAN)
    if ear_check and not ears:
        missing.append(Missing.EAR_CHECK)
    if approval is None:
        missing.append(Missing.NOT_APPROVED)
    elif not approval.done:
        missing.append(Missing.REFUSED)
    elif not approval.streaming:
        missing.append(Missing.APPROVED_WITHOUT_CAMERA)
    else:
        missing.append(Missing.APPROVED_BEFORE_CHECKS)
    return Standing(None, missing=tuple(missing), undone=undone, approval=approval)


# --- Reads -----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seat:
    """A player of the round's pairings, at their board."""

    start_no: int
    name: str
    team: str
    ref: str
    """Their platform id ("" when the event file gives none)."""
    board: int
    colour: str


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """A round of a section as the check-in needs it: its number, window, players and the section's policy."""

    section: SectionRef
    rounds: int
    round_no: int | None
    """None: the section has no pairings yet."""
    window: Window = field(default_factory=Window)
    seats: tuple[Seat, ...] = ()
    ear_check: bool = True
    withdrawn: Mapping[int, int] = field(default_factory=dict)
    """Start number → the round after which the player withdrew (24.4)."""


def _round_windows(connection: Connection, section_id: int, now: int) -> dict[int, Window]:
    """Each paired round's window: its start from its games (their earliest ``start_at``), started or not."""
    paired = connection.execute(
        select(col(Pairing.round_no)).where(col(Pairing.section_id) == section_id).distinct()
    ).scalars().all()  # fmt: skip
    games = connection.execute(
        select(col(Pairing.round_no), col(Game.settings), col(Game.status))
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .where(col(Pairing.section_id) == section_id)
    ).all()  # fmt: skip
    starts: dict[int, int] = {}
    playing: set[int] = set()
    for round_no, settings, status in games:
        start = (settings or {}).get("start_at")
        if isinstance(start, int):
            starts[round_no] = min(start, starts.get(round_no, start))
        if status != "scheduled":
            playing.add(round_no)
    windows = {}
    for round_no in sorted(paired):
        earlier = [start for number, start in starts.items() if number < round_no]
        start = starts.get(round_no)
        started = round_no in playing or (start is not None and start <= now)
        windows[round_no] = Window(max(earlier, default=0), start, started)
    return windows


def read_round(connection: Connection, section: SectionRef, round_no: int | None, now: int) -> RoundPlan:
    """The round ``round_no`` of the section, or by default the first paired round that has not started (the last
    one once all have).  BadRequestError for a round outside the section's, NotFoundError for one not paired yet."""
    policy = connection.execute(select(col(Section.policy)).where(col(Section.id) == section.section_id)).scalar_one()
    policy = dict(policy or {})
    rounds = int(policy.get("rounds") or 1)
    ear_check = "earphones" in (policy.get("checks") or CHECKS)
    if round_no is not None and not 1 <= round_no <= rounds:
        raise BadRequestError(f"'round' must be a whole number from 1 to {rounds}: section {section.section} has "
                              f"{rounds} rounds (check-in, {ARTICLE})", article=ARTICLE)  # fmt: skip
    windows = _round_windows(connection, section.section_id, now)
    if round_no is None:
        if not windows:
            return RoundPlan(section, rounds, None, ear_check=ear_check)
        waiting = [number for number, window in windows.items() if not window.started]
        round_no = min(waiting) if waiting else max(windows)
    if round_no not in windows:
        raise NotFoundError(f"round {round_no} of {section.event}/{section.section} is not paired yet (check-in, "
                            f"{ARTICLE})", article=ARTICLE)  # fmt: skip
    pairings = connection.execute(
        select(col(Pairing.board), col(Pairing.black_start_no), col(Pairing.white_start_no))
        .where(col(Pairing.section_id) == section.section_id, col(Pairing.round_no) == round_no)
        .order_by(col(Pairing.board), col(Pairing.game_no))
    ).all()  # fmt: skip
    players = {
        row.start_no: row for row in connection.execute(
            select(col(Player.start_no), col(Player.name), col(Player.team), col(Player.platform_ref))
            .where(col(Player.section_id) == section.section_id)
        )
    }  # fmt: skip
    withdrawn: dict[int, int] = {
        start_no: after for start_no, after in connection.execute(
            select(col(Withdrawal.start_no), col(Withdrawal.after_round))
            .where(col(Withdrawal.section_id) == section.section_id)
        )
    }  # fmt: skip
    seats: dict[int, Seat] = {}
    for board, black, white in pairings:
        if white is None:
            continue  # a bye: no game to check in for
        for start_no, colour in ((black, "black"), (white, "white")):
            player = players.get(start_no)
            if start_no in seats or player is None or withdrawn.get(start_no, round_no) < round_no:
                continue
            seats[start_no] = Seat(start_no, player.name, player.team, player.platform_ref, board, colour)
    return RoundPlan(section, rounds, round_no, windows[round_no], tuple(seats.values()), ear_check, withdrawn)


def read_steps(connection: Connection, refs: Sequence[str], since: int = 0) -> dict[str, list[SetupStep]]:
    """Each player's camera setup as stored, in order: room scans and ear checks recorded, and approvals; from
    ``since`` (the prompts from :data:`PROMPT_MARGIN_MS` before it, for the captures after it)."""
    found: dict[str, list[SetupStep]] = {}
    if not refs:
        return found
    rows = connection.execute(
        select(col(CameraAction.id), col(CameraAction.player_ref), col(CameraAction.kind), col(CameraAction.detail),
               col(CameraAction.arbiter), col(CameraAction.role), col(CameraAction.created_ms))
        .where(col(CameraAction.player_ref).in_(list(refs)),
               col(CameraAction.kind).in_(["prompt", "capture", "approval"]),
               col(CameraAction.created_ms) >= since - PROMPT_MARGIN_MS)
        .order_by(col(CameraAction.id))
    ).all()  # fmt: skip
    prompts = {row.id: (row.detail or {}).get("prompt") for row in rows if row.kind == "prompt"}
    for row in rows:
        step = _step(row, prompts)
        if step is not None:
            found.setdefault(row.player_ref, []).append(step)
    return found


def _step(row: Any, prompts: Mapping[Any, Any]) -> SetupStep | None:
    """A camera action as a step of the setup (None: a prompt, or a capture of a pan check)."""
    detail = row.detail or {}
    if row.kind == "approval":
        return SetupStep(row.id, "approval", row.created_ms, bool(detail.get("approved")),
                         bool(detail.get("streaming", True)), row.arbiter, row.role,
                         str(detail.get("note") or ""))  # fmt: skip
    kind = prompts.get(detail.get("prompt"))
    if row.kind != "capture" or kind not in ("room-scan", "ear-check"):
        return None
    usable = detail.get("ear_view") == "usable" if kind == "ear-check" else int(detail.get("frames") or 0) > 0
    return SetupStep(row.id, str(kind), row.created_ms, usable, by=row.arbiter, role=row.role)


def read_records(connection: Connection, section_id: int, round_no: int) -> dict[int, list[Record]]:
    """The round's ``check_in`` rows, by start number, in order."""
    found: dict[int, list[Record]] = {}
    rows = connection.execute(
        select(col(CheckIn.id), col(CheckIn.start_no), col(CheckIn.action), col(CheckIn.reason),
               col(CheckIn.recorded_by), col(CheckIn.recorded_role), col(CheckIn.created_ms))
        .where(col(CheckIn.section_id) == section_id, col(CheckIn.round_no) == round_no)
        .order_by(col(CheckIn.id))
    )  # fmt: skip
    for row in rows:
        found.setdefault(row.start_no, []).append(
            Record(row.id, Action(row.action), row.reason, row.recorded_by, row.recorded_role, row.created_ms)
        )
    return found


def _standings(
    connection: Connection, plan: RoundPlan, seats: Sequence[Seat], streams: Mapping[str, StreamSnapshot]
) -> list[Standing]:
    assert plan.round_no is not None
    steps = read_steps(connection, [seat.ref for seat in seats if seat.ref], plan.window.opens_ms)
    records = read_records(connection, plan.section.section_id, plan.round_no)
    return [
        standing(records.get(seat.start_no, []), steps.get(seat.ref, []) if seat.ref else [], plan.window,
                 streaming=bool(seat.ref and (stream := streams.get(seat.ref)) and stream.live),
                 ear_check=plan.ear_check, has_platform_id=bool(seat.ref))
        for seat in seats
    ]  # fmt: skip


def read_check_ins(
    connection: Connection, who: Identity, event: str, section_slug: str, round_no: int | None,
    streams: Mapping[str, StreamSnapshot], now: int,
) -> dict[str, Any]:  # fmt: skip
    """The round's check-in as this arbiter may see it (the camera roster's boards, proctor.camera_roster): every
    player of its pairings, checked in (how, when, by whom) or not yet (and what is missing), board by board."""
    section = find_section(connection, event, section_slug)
    boards = boards_shown(who, section)
    plan = read_round(connection, section, round_no, now)
    seats = [seat for seat in plan.seats if boards is None or seat.board in boards]
    entries = []
    if plan.round_no is not None:
        for seat, held in zip(seats, _standings(connection, plan, seats, streams), strict=True):
            entries.append({"start_no": seat.start_no, "name": seat.name, "team": seat.team,
                            "player": seat.ref or None, "board": seat.board, "colour": seat.colour,
                            **held.describe(plan.window)})  # fmt: skip
    checked = sum(1 for entry in entries if entry["checked_in"])
    return {
        **section.describe(), "round": plan.round_no, "rounds": plan.rounds, "starts": plan.window.starts_ms,
        "started": plan.window.started, "opens": plan.window.opens_ms or None, "ear_check": plan.ear_check,
        "boards": None if boards is None else sorted(boards), "players": entries,
        "counts": {"checked_in": checked, "not_checked_in": len(entries) - checked}, "article": ARTICLE,
    }  # fmt: skip


# --- Writes ----------------------------------------------------------------------------------------------------------


def action_of(raw: object) -> Action:
    """The body's ``action`` (``check-in`` by default)."""
    if raw is None:
        return Action.CHECK_IN
    try:
        return Action(raw)
    except ValueError:
        raise BadRequestError(f"'action' must be one of {', '.join(a.value for a in Action)} (check-in, {ARTICLE})",
                              article=ARTICLE) from None  # fmt: skip


def record_check_in(
    service: Service, connection: Connection, batch: Batch, who: Identity, event: str, section_slug: str,
    round_no: int, start_no: int, action: Action, reason: str, streams: Mapping[str, StreamSnapshot], at: int,
) -> dict[str, Any]:  # fmt: skip
    """Check a player in by hand, or undo their check-in; checks first (role, reason, section, round, player,
    assignment, the state it changes), writes last."""
    if action is Action.CHECK_IN and who.role not in CHECKING_ROLES:
        raise ForbiddenError(
            f"a check-in is recorded by hand by an arbiter, a deputy chief, the chief arbiter or the organising "
            f"committee, not the {who.role.value} ({ARTICLE})", article=ARTICLE,
        )  # fmt: skip
    if action is Action.UNDO and who.role not in UNDOING_ROLES:
        raise ForbiddenError(f"a check-in is undone by the chief arbiter or a deputy chief, not the {who.role.value} "
                             f"({ARTICLE})", article=ARTICLE)  # fmt: skip
    reason = reason.strip()
    if not reason or len(reason) > MAX_REASON:
        raise BadRequestError(f"'reason' must say why (1 to {MAX_REASON} characters; check-in, {ARTICLE})",
                              article=ARTICLE)  # fmt: skip
    section = find_section(connection, event, section_slug)
    plan = read_round(connection, section, round_no, at)
    where = f"{event}/{section_slug}"
    seat = next((s for s in plan.seats if s.start_no == start_no), None)
    if seat is None:
        if start_no in plan.withdrawn and plan.withdrawn[start_no] < round_no:
            raise ConflictError(f"start number {start_no} withdrew from {where} after round "
                                f"{plan.withdrawn[start_no]} (24.4): no check-in for round {round_no} ({ARTICLE})",
                                article=ARTICLE)  # fmt: skip
        raise NotFoundError(f"no player with start number {start_no} in the pairings of round {round_no} of {where} "
                            f"(a bye has no check-in; {ARTICLE})", article=ARTICLE)  # fmt: skip
    require_assigned(who, [Place(event, section_slug, seat.board)], f"the check-in of {seat.name}")
    (held,) = _standings(connection, plan, [seat], streams)
    who_said = f"{seat.name} (start number {start_no})"
    if action is Action.CHECK_IN and held.how is How.CAMERA:
        raise ConflictError(f"{who_said} is already checked in for round {round_no}, by the camera setup approved by "
                            f"{held.by} ({ARTICLE})", article=ARTICLE)  # fmt: skip
    if action is Action.CHECK_IN and held.how is How.MANUAL:
        raise ConflictError(f"{who_said} is already checked in for round {round_no}, by hand by {held.by} ({ARTICLE})",
                            article=ARTICLE)  # fmt: skip
    if action is Action.UNDO and not held.checked_in:
        raise ConflictError(f"{who_said} is not checked in for round {round_no}: there is nothing to undo ({ARTICLE})",
                            article=ARTICLE)  # fmt: skip
    if action is Action.CHECK_IN:
        detail: dict[str, Any] = {"missing": [m.value for m in held.missing]}
    else:
        detail = {"undid": {"how": held.how.value if held.how else None, "at": held.at, "by": held.by}}
    row_id = connection.execute(
        insert(CheckIn).values(
            section_id=section.section_id, round_no=round_no, start_no=start_no, action=action.value, reason=reason,
            detail=detail, recorded_by=who.name, recorded_role=who.role.value, created_ms=at,
        ).returning(col(CheckIn.id))
    ).scalar_one()  # fmt: skip
    assert row_id is not None
    service.seal(connection, batch, "check_in", row_id)
    how = How.MANUAL.value if action is Action.CHECK_IN else detail["undid"]["how"]
    audited = {"event": event, "section": section_slug, "round": round_no, "start_no": start_no, "how": how,
               "article": ARTICLE, "reason_sha256": hashlib.sha256(reason.encode()).hexdigest()}  # fmt: skip
    name = "player.checked-in" if action is Action.CHECK_IN else "player.check-in-undone"
    service.audit(connection, batch, at, who.label, name, f"check-in:{row_id}", audited)
    batch.notices.append(Notice("check-in", {"event": event, "section": section_slug, "round": round_no,
                                             "start_no": start_no, "action": action.value}))  # fmt: skip
    (after,) = _standings(connection, plan, [seat], streams)
    return {"id": row_id, "event": event, "section": section_slug, "round": round_no, "start_no": start_no,
            "name": seat.name, "board": seat.board, "action": action.value, "reason": reason,
            "recorded_by": who.name, "recorded_role": who.role.value, "at": at, "article": ARTICLE,
            **after.describe(plan.window)}  # fmt: skip
