"""The camera roster of an event section (issue 13, 36): for each of its players, by name, whether they have a
working stream link, whether their camera has connected and how it is now (connected, frozen, lost,
analysis-degraded), and whether their setup was checked (room scan, ear check) and approved; and the links issued
for the whole section at once, as rows for a CSV or a printed sheet.

The fold (:func:`roster_state`, :func:`roster_entry`, :func:`links_csv`) is pure: it takes what was read (the
section's players and boards, their stream-link rows and camera actions) and the live streams' snapshots (held in the
process's memory by the camera ingest, proctor.camera) as arguments.  The reads are below it, one query per table for
the whole section.  Only a link's hash is stored (proctor.camera.issue_stream_token): a link can be shown only when
it is issued, so a sheet of links is the answer of the issue, never of a read.
"""

from __future__ import annotations

import csv
import enum
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import segno
from sqlalchemy import Connection, exists, select
from sqlmodel import col

from proctor.accounts import Identity
from proctor.assignments import Place, require_assigned, restricted
from proctor.errors import BadRequestError, NotFoundError
from proctor.models import CameraAction, Game, Pairing, Player, Section, StreamToken, Tournament
from proctor.spreadsheets import spreadsheet_text
from proctor.time_zones import config_zone, local_time

ARTICLE: Final = "36"
"""The players' cameras and their environment check (36.2 ear check, 36.4 room)."""


class RosterState(enum.Enum):
    """Where a player's camera stands, as the roster shows it (the most useful first: what needs an arbiter)."""

    NO_LINK = "no-link"
    """No stream link works: never issued, expired or replaced without a new one."""
    NOT_CONNECTED = "not-connected"
    """A working link, but the camera never connected (in this process's life)."""
    LOST = "lost"
    """The camera connected, and its stream has ended."""
    FROZEN = "frozen"
    """The stream is up, but its picture does not change (the ``camera-frozen`` check, 36.4)."""
    DEGRADED = "analysis-degraded"
    """The stream is up, but the service cannot analyse it at its set rate: findings may come late."""
    CONNECTED = "connected"


class Which(enum.Enum):
    """Whose links a section's issue makes."""

    ALL = "all"
    """Every player of the section with a platform id; their earlier links stop working."""
    MISSING = "missing"
    """Only those without a working link (a link that works is left alone)."""


@dataclass(frozen=True, slots=True)
class StreamSnapshot:
    """A player's camera stream as the ingest holds it now (times in ms)."""

    live: bool
    opened_ms: int
    closed_ms: int | None = None
    frozen: bool = False
    degraded: bool = False
    moved: bool = False
    """The camera no longer shows its approved view (``camera-moved``: a side camera)."""


@dataclass(frozen=True, slots=True)
class LinkRow:
    """One stream link as stored (its token only as a hash)."""

    created_ms: int
    revoked_ms: int | None
    expires_ms: int | None

    def works(self, now: int) -> bool:
        return self.revoked_ms is None and self.expires_ms is not None and self.expires_ms > now


@dataclass(frozen=True, slots=True)
class Setup:
    """The pre-game environment check of a player (36.2, 36.4): the latest room scan and ear check recorded, and
    the arbiter's latest approval (None: none given yet)."""

    room_scan_ms: int | None = None
    ear_check_ms: int | None = None
    approved: bool | None = None
    note: str = ""
    by: str = ""
    approved_ms: int | None = None

    def describe(self) -> dict[str, Any]:
        approval = None if self.approved is None else {
            "approved": self.approved, "note": self.note, "by": self.by, "at": self.approved_ms}  # fmt: skip
        return {"room_scan": self.room_scan_ms, "ear_check": self.ear_check_ms, "approval": approval}


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player of the section, as the roster names them."""

    ref: str
    """Their id on the platform ("" when the event file gives none: no link can be issued)."""
    name: str
    start_no: int
    team: str = ""
    round: int | None = None
    board: int | None = None


def roster_state(links: Sequence[LinkRow], stream: StreamSnapshot | None, now: int) -> RosterState:
    """The player's state: the live stream's first, then whether it ever connected, then the link's."""
    if stream is not None and stream.live:
        if stream.frozen:
            return RosterState.FROZEN
        return RosterState.DEGRADED if stream.degraded else RosterState.CONNECTED
    if stream is not None:
        return RosterState.LOST
    return RosterState.NOT_CONNECTED if any(link.works(now) for link in links) else RosterState.NO_LINK


def link_status(links: Sequence[LinkRow], now: int) -> dict[str, Any]:
    """The player's link: ``working`` (issued, expires), ``expired``, ``replaced`` (revoked: never by itself) or
    ``none``; with the count of links ever issued."""
    working = [link for link in links if link.works(now)]
    if working:
        latest = max(working, key=lambda link: link.created_ms)
        return {"status": "working", "issued": latest.created_ms, "expires": latest.expires_ms, "count": len(links)}
    if not links:
        return {"status": "none", "issued": None, "expires": None, "count": 0}
    latest = max(links, key=lambda link: link.created_ms)
    status = "replaced" if latest.revoked_ms is not None else "expired"
    return {"status": status, "issued": latest.created_ms, "expires": latest.expires_ms, "count": len(links)}


NOT_HEARD: Final = {"state": "not-connected", "since": None}
"""A microphone the section requires that nothing has heard (no front camera seen)."""


def device_entry(stream: StreamSnapshot | None) -> dict[str, Any]:
    """One of a player's devices (issue 15) as the roster shows it: ``connected``, ``frozen``, ``moved`` (a side
    camera no longer showing its approved view), ``analysis-degraded``, ``lost`` or ``not-connected``, since when."""
    if stream is None:
        return {"state": "not-connected", "since": None}
    if not stream.live:
        return {"state": "lost", "since": stream.closed_ms}
    flags = (("frozen", stream.frozen), ("moved", stream.moved), ("analysis-degraded", stream.degraded))
    return {"state": next((state for state, on in flags if on), "connected"), "since": stream.opened_ms}


def roster_entry(
    entrant: Entrant, links: Sequence[LinkRow], stream: StreamSnapshot | None, setup: Setup, now: int,
    devices: Mapping[str, StreamSnapshot | dict[str, Any] | None] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One player's row of the roster; with the section's devices beyond the front camera (``devices``: each one's
    stream, by device; the microphone's state as proctor.microphone_states gives it), each device's state too."""
    state = roster_state(links, stream, now)
    since = None
    if stream is not None:
        since = stream.opened_ms if stream.live else stream.closed_ms
    entry = {
        "player": entrant.ref or None, "name": entrant.name, "start_no": entrant.start_no, "team": entrant.team,
        "round": entrant.round, "board": entrant.board, "state": state.value, "since": since,
        "link": link_status(links, now), "setup": setup.describe(),
    }  # fmt: skip
    if devices:
        entry["devices"] = {"front": {"state": state.value, "since": since}} | {
            device: dict(snapshot) if isinstance(snapshot, dict) else device_entry(snapshot)
            for device, snapshot in devices.items()
        }
    return entry


def counts(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many players are in each state (every state named, zeros too)."""
    tally = {state.value: 0 for state in RosterState}
    for entry in entries:
        tally[entry["state"]] += 1
    return tally


def to_issue(entrants: Sequence[Entrant], links: Mapping[str, Sequence[LinkRow]], which: Which,
             now: int) -> tuple[list[Entrant], list[dict[str, Any]]]:  # fmt: skip
    """Whose links an issue makes, in start-number order, and who is left out and why (no platform id; for
    ``missing``, a link that still works)."""
    chosen, skipped = [], []
    for entrant in sorted(entrants, key=lambda e: e.start_no):
        if not entrant.ref:
            skipped.append({"name": entrant.name, "start_no": entrant.start_no, "reason": "no-platform-id"})
        elif which is Which.MISSING and any(link.works(now) for link in links.get(entrant.ref, ())):
            skipped.append({"name": entrant.name, "start_no": entrant.start_no, "reason": "has-working-link"})
        else:
            chosen.append(entrant)
    return chosen, skipped


CSV_HEADER: Final = ("start_no", "name", "team", "round", "board", "player_id", "link", "expires")


def links_csv(issued: Sequence[Mapping[str, Any]], time_zone: str) -> str:
    """The issued links as CSV, one row a player in start-number order: start number, name, team, round, board, the
    platform id, the link and when it expires (24-hour, in the event's zone, named in the column's header).  Names and
    teams that a spreadsheet would run as a formula are neutralised (proctor.spreadsheets)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([*CSV_HEADER[:-1], f"expires ({time_zone})"])
    for row in issued:
        writer.writerow([
            row["start_no"], spreadsheet_text(row["name"]), spreadsheet_text(row.get("team") or ""),
            row.get("round") or "", row.get("board") or "", spreadsheet_text(row["player"]), row["link"],
            local_time(row["expires"], time_zone),
        ])  # fmt: skip
    return out.getvalue()


def qr_image(link: str) -> str:
    """The link as a QR code, an SVG ``data:`` URI (the pages' Content-Security-Policy allows ``data:`` images) that a
    phone's camera opens: error correction M, 3 px a module, the quiet zone of 2 modules."""
    return str(segno.make(link, error="m").svg_data_uri(scale=3, border=2))


# --- Reads -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SectionRef:
    """An event's section as the roster names it."""

    section_id: int
    event: str
    event_name: str
    section: str
    section_name: str
    time_zone: str
    devices: tuple[str, ...] = ("front",)
    """The devices the section's policy requires (``devices``: front, side, screen; and the microphone where it sets
    ``microphone_required``)."""

    @property
    def place(self) -> Place:
        return Place(self.event, self.section)

    def describe(self) -> dict[str, Any]:
        return {"event": {"slug": self.event, "name": self.event_name},
                "section": {"slug": self.section, "name": self.section_name}, "time_zone": self.time_zone,
                "devices": list(self.devices)}  # fmt: skip


def find_section(connection: Connection, event: str, section: str) -> SectionRef:
    """The section ``event/section``; NotFoundError when there is none."""
    row = connection.execute(
        select(col(Section.id), col(Section.name), col(Tournament.name).label("event_name"),
               col(Tournament.config), col(Section.policy))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Tournament.slug) == event, col(Section.slug) == section)
    ).first()  # fmt: skip
    if row is None:
        raise NotFoundError(f"no section {section!r} in an event {event!r}")
    policy = row.policy or {}
    devices = tuple(str(d) for d in (policy.get("devices") or ["front"]))
    devices += ("microphone",) if policy.get("microphone_required") else ()
    return SectionRef(row.id, event, row.event_name, section, row.name, config_zone(row.config), devices)


def boards_shown(who: Identity, section: SectionRef) -> frozenset[int] | None:
    """Which boards of the section this arbiter sees on the roster (16): None for all of them (the chief and deputy
    chief, an arbiter with no assignment or assigned the section), else the boards they are assigned to; refused
    (ForbiddenError, 16) with neither."""
    if not restricted(who):
        return None
    whole = f"{section.event}/{section.section}"
    if whole in who.sections:
        return None
    boards = frozenset(
        int(board) for assignment in who.sections
        if assignment.startswith(whole + "/") and (board := assignment.removeprefix(whole + "/")).isdigit()
    )  # fmt: skip
    if not boards:
        require_assigned(who, [section.place], f"the camera roster of {whole}")
    return boards


def require_whole_section(who: Identity, section: SectionRef) -> None:
    """Issuing the links of a whole section: the arbiter's assignment must cover the section (16)."""
    require_assigned(who, [section.place], f"the stream links of {section.event}/{section.section}")


def read_entrants(connection: Connection, section: SectionRef) -> list[Entrant]:
    """The section's players in start-number order, each with the round and board of their current pairing: the first
    round with neither a result nor a finished game (as the player's page, proctor.player_view)."""
    players = connection.execute(
        select(col(Player.start_no), col(Player.name), col(Player.team), col(Player.platform_ref))
        .where(col(Player.section_id) == section.section_id)
        .order_by(col(Player.start_no))
    ).all()  # fmt: skip
    pairings = connection.execute(
        select(col(Pairing.round_no), col(Pairing.board), col(Pairing.black_start_no), col(Pairing.white_start_no))
        .where(col(Pairing.section_id) == section.section_id, col(Pairing.result) == "")
        .where(~exists().where(col(Game.pairing_id) == col(Pairing.id), col(Game.status) == "over"))
        .order_by(col(Pairing.round_no).desc())
    ).all()  # fmt: skip
    place: dict[int, tuple[int, int]] = {}
    for pairing in pairings:  # the latest rounds first, so that the earliest stays
        for start_no in (pairing.black_start_no, pairing.white_start_no):
            if start_no is not None:
                place[start_no] = (pairing.round_no, pairing.board)
    return [
        Entrant(p.platform_ref, p.name, p.start_no, p.team, *place.get(p.start_no, (None, None)))
        for p in players
    ]  # fmt: skip


def read_links(connection: Connection, refs: Sequence[str]) -> dict[str, list[LinkRow]]:
    """Every stream link issued to these players, by player."""
    found: dict[str, list[LinkRow]] = {}
    if not refs:
        return found
    rows = connection.execute(
        select(col(StreamToken.player_ref), col(StreamToken.created_ms), col(StreamToken.revoked_ms),
               col(StreamToken.expires_ms))
        .where(col(StreamToken.player_ref).in_(list(refs)))
        .order_by(col(StreamToken.id))
    )  # fmt: skip
    for ref, created, revoked, expires in rows:
        found.setdefault(ref, []).append(LinkRow(created, revoked, expires))
    return found


def read_setups(connection: Connection, refs: Sequence[str]) -> dict[str, Setup]:
    """Each player's environment check: the latest recorded room scan and ear check (a prompt's capture), and the
    latest approval."""
    if not refs:
        return {}
    rows = connection.execute(
        select(col(CameraAction.id), col(CameraAction.player_ref), col(CameraAction.kind), col(CameraAction.detail),
               col(CameraAction.arbiter), col(CameraAction.created_ms))
        .where(col(CameraAction.player_ref).in_(list(refs)),
               col(CameraAction.kind).in_(["prompt", "capture", "approval"]))
        .order_by(col(CameraAction.id))
    ).all()  # fmt: skip
    prompt_kind = {row.id: (row.detail or {}).get("prompt") for row in rows if row.kind == "prompt"}
    fields: dict[str, dict[str, Any]] = {}
    for row in rows:
        detail, mine = row.detail or {}, fields.setdefault(row.player_ref, {})
        if row.kind == "capture":
            kind = prompt_kind.get(detail.get("prompt"))
            if kind == "room-scan":
                mine["room_scan_ms"] = row.created_ms
            elif kind == "ear-check":
                mine["ear_check_ms"] = row.created_ms
        elif row.kind == "approval":
            mine |= {"approved": bool(detail.get("approved")), "note": str(detail.get("note") or ""),
                     "by": row.arbiter, "approved_ms": row.created_ms}  # fmt: skip
    return {ref: Setup(**values) for ref, values in fields.items()}


def read_roster(
    connection: Connection,
    who: Identity,
    event: str,
    section_slug: str,
    streams: Mapping[str, StreamSnapshot],
    now: int,
    others: Mapping[str, Mapping[str, StreamSnapshot | dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The roster of ``event/section`` as this arbiter may see it (:func:`boards_shown`); ``others``: the streams of
    the players' other devices (side, screen), by device, for a section that requires them, and their microphones'
    states (``microphone``: proctor.microphone_states) for one that listens to them."""
    section = find_section(connection, event, section_slug)
    boards = boards_shown(who, section)
    entrants = [e for e in read_entrants(connection, section) if boards is None or e.board in boards]
    refs = [e.ref for e in entrants if e.ref]
    links, setups = read_links(connection, refs), read_setups(connection, refs)
    extra = [device for device in section.devices if device != "front"]
    entries = [
        roster_entry(e, links.get(e.ref, []) if e.ref else [], streams.get(e.ref) if e.ref else None,
                     setups.get(e.ref, Setup()), now,
                     {device: (others or {}).get(device, {}).get(e.ref, NOT_HEARD if device == "microphone" else None)
                      for device in extra} if e.ref else None)
        for e in entrants
    ]  # fmt: skip
    return {**section.describe(), "boards": None if boards is None else sorted(boards), "players": entries,
            "counts": counts(entries), "article": ARTICLE}  # fmt: skip


def which_of(raw: object) -> Which:
    """The body's ``which`` (``all`` by default)."""
    if raw is None:
        return Which.ALL
    try:
        return Which(raw)
    except ValueError:
        raise BadRequestError(f"'which' must be one of {', '.join(w.value for w in Which)}") from None
