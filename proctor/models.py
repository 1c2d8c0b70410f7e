"""Storage: SQLModel table models (SQLite by default, PostgreSQL by URL, the same code).

Times are integer milliseconds since the Unix epoch, as in the engine.  Rows that record what happened (feed
deliveries, applied game events, incidents and their actions, the audit log) are append-only; a game row holds the
latest snapshot of its adjudication so that a restart does not replay from the first move.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

MAX_INTEGER = 2**31 - 1
"""The largest value of an integer column (ids, ``seq``, rounds, boards) on every database (PostgreSQL's integer;
SQLite's is wider): a client's number beyond it is refused before it reaches a query."""
MAX_BIGINTEGER = 2**63 - 1
"""The largest value of a bigint column (times in milliseconds)."""


def _ms(nullable: bool = False) -> Any:
    return Field(default=None if nullable else 0, sa_column=Column(BigInteger, nullable=nullable))


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(JSON, nullable=nullable))


class Platform(SQLModel, table=True):
    """A playing platform that posts signed webhooks."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True, max_length=64)
    created_ms: int = _ms()


class PlatformSecret(SQLModel, table=True):
    """A Standard Webhooks secret (``whsec_…``); several may be active at once, for rotation."""

    __tablename__ = "platform_secret"

    id: int | None = Field(default=None, primary_key=True)
    platform_id: int = Field(foreign_key="platform.id", index=True)
    secret: str = Field(max_length=200)
    created_ms: int = _ms()
    revoked_ms: int | None = _ms(nullable=True)


class Tournament(SQLModel, table=True):
    """An event (tournament), set up from one TOML file."""

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(index=True, unique=True, max_length=100)
    name: str = Field(max_length=300)
    config: dict[str, Any] | None = _json()
    """The event file as loaded (for export)."""
    created_ms: int = _ms()


class Section(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournament.id", index=True)
    slug: str = Field(max_length=100)
    name: str = Field(max_length=300)
    rule: str = Field(max_length=40)
    opening: str = Field(max_length=40)
    time_control: str = Field(max_length=60)
    system: str = Field(max_length=20)
    tiebreaks: str = Field(max_length=200)
    scoring: str = Field(max_length=40)
    games_per_match: int = 1
    policy: dict[str, Any] | None = _json()
    """The proctoring policy: camera, checks and thresholds, reconnect window, lateness, penalties, retention."""

    __table_args__ = (UniqueConstraint("tournament_id", "slug"),)


class Player(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", index=True)
    start_no: int
    name: str = Field(max_length=200)
    team: str = Field(default="", max_length=200)
    gender: str = Field(default="", max_length=1)
    birth_date: str = Field(default="", max_length=10)
    rating: int = 0
    platform_ref: str = Field(default="", max_length=100, index=True)
    """The player's id on the playing platform."""

    __table_args__ = (UniqueConstraint("section_id", "start_no"),)


class Pairing(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", index=True)
    round_no: int
    board: int
    game_no: int = 1
    """The game's number within its match (1 for a single game; 1 and 2 in a two-game system, regulations 2023
    VII(2)): the games of one match share their round and board."""
    black_start_no: int
    white_start_no: int | None = None
    """None for a bye."""
    platform_game_id: str = Field(default="", max_length=100)
    result: str = Field(default="", max_length=8)
    """As in TRF: "1-0", "0-1", "½-½", "+/-", "-/+", "-/-" once known."""
    time_control: str = Field(default="", max_length=60)
    """The game's own time control (a knockout's play-off games, regulations 2023 VII(4)3); empty: the section's."""

    __table_args__ = (UniqueConstraint("section_id", "round_no", "board", "game_no"),)


class Arbiter(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200, unique=True)
    role: str = Field(max_length=20)
    """arbiter, deputy-chief, chief or committee (16)."""
    token_hash: str = Field(default="", max_length=128)
    password_hash: str = Field(default="", max_length=200)
    """argon2id; empty: the arbiter cannot log in to the dashboard (API token only)."""
    sections: list[str] | None = _json()
    """The sections (``event/section``) or boards (``event/section/board``) the arbiter is assigned to; none: all."""


class ArbiterSession(SQLModel, table=True):
    """A dashboard login: the cookie's token (hashed) and the CSRF token the page must echo on every change."""

    __tablename__ = "arbiter_session"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    arbiter_id: int = Field(foreign_key="arbiter.id", index=True)
    csrf: str = Field(max_length=64)
    created_ms: int = _ms()
    expires_ms: int = _ms()
    ended_ms: int | None = _ms(nullable=True)


class LoginFailure(SQLModel, table=True):
    """A dashboard login tried for a name (case-folded) from an address, counted before its password is checked: the
    login limit's state, shared by every process on the database.  Its rows go when the login succeeds, when they are
    older than the window, or by ``proctor arbiter unlock``."""

    __tablename__ = "login_failure"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    address: str = Field(max_length=100)
    at_ms: int = _ms()

    __table_args__ = (Index("ix_login_failure_name_address", "name", "address"),)


class Game(SQLModel, table=True):
    """A game on a platform, adjudicated by the service."""

    id: int | None = Field(default=None, primary_key=True)
    platform_id: int = Field(foreign_key="platform.id", index=True)
    external_id: str = Field(max_length=100)
    """The platform's game id."""
    pairing_id: int | None = Field(default=None, foreign_key="pairing.id")
    black_ref: str = Field(max_length=100)
    white_ref: str = Field(max_length=100)
    black_name: str = Field(default="", max_length=200)
    white_name: str = Field(default="", max_length=200)
    settings: dict[str, Any] | None = _json(nullable=False)
    """The adjudication settings it was created with."""
    last_seq: int = 0
    """The highest feed sequence number applied (events are applied in seq order)."""
    applied: int = 0
    """How many engine events have been applied (the length of its game_event log)."""
    status: str = Field(default="scheduled", max_length=20)
    winner: str | None = Field(default=None, max_length=10)
    reason: str | None = Field(default=None, max_length=40)
    article: str | None = Field(default=None, max_length=60)
    snapshot: dict[str, Any] | None = _json()
    snapshot_applied: int = 0
    """How many engine events the snapshot includes."""
    next_deadline_ms: int | None = _ms(nullable=True)
    created_ms: int = _ms()
    updated_ms: int = _ms()

    __table_args__ = (UniqueConstraint("platform_id", "external_id"),)


class FeedDelivery(SQLModel, table=True):
    """Every webhook delivery that was accepted (2xx), as received.  Append-only."""

    __tablename__ = "feed_delivery"

    id: int | None = Field(default=None, primary_key=True)
    platform_id: int = Field(foreign_key="platform.id")
    webhook_id: str = Field(max_length=200)
    game_id: int = Field(foreign_key="game.id", index=True)
    seq: int
    kind: str = Field(max_length=40)
    at_ms: int = _ms()
    """The platform's time for the event (RFC 3339 ``at``)."""
    received_ms: int = _ms()
    body: dict[str, Any] | None = _json(nullable=False)

    __table_args__ = (
        UniqueConstraint("platform_id", "webhook_id"),
        UniqueConstraint("game_id", "seq"),
    )


class GameEvent(SQLModel, table=True):
    """The engine events applied to a game, in order: replaying them rebuilds its state exactly.  Append-only."""

    __tablename__ = "game_event"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="game.id")
    position: int
    """0, 1, 2… per game: the order of application."""
    source: str = Field(max_length=20)
    """feed, deadline or arbiter."""
    delivery_id: int | None = Field(default=None, foreign_key="feed_delivery.id")
    at_ms: int = _ms()
    """The effective time used by the engine."""
    event: dict[str, Any] | None = _json(nullable=False)

    __table_args__ = (UniqueConstraint("game_id", "position"), Index("ix_game_event_game", "game_id", "position"))


class Incident(SQLModel, table=True):
    """A flag raised by a detector, a rule or the feed.  Append-only: what happens next are IncidentActions."""

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(default=None, foreign_key="game.id", index=True)
    player_ref: str | None = Field(default=None, max_length=100)
    kind: str = Field(max_length=60, index=True)
    source: str = Field(max_length=60)
    """feed, rules, service, arbiter, or detector:NAME."""
    article: str | None = Field(default=None, max_length=60)
    confidence: float | None = None
    summary: str = Field(sa_column=Column(Text, nullable=False))
    evidence: dict[str, Any] | None = _json()
    created_ms: int = _ms()


class IncidentAction(SQLModel, table=True):
    """An arbiter's action on an incident: confirm, dismiss, note, or a verdict (a penalty with its article)."""

    __tablename__ = "incident_action"

    id: int | None = Field(default=None, primary_key=True)
    incident_id: int = Field(foreign_key="incident.id", index=True)
    arbiter: str = Field(max_length=200)
    role: str = Field(max_length=20)
    action: str = Field(max_length=20)
    note: str = Field(default="", sa_column=Column(Text, nullable=False))
    verdict: dict[str, Any] | None = _json()
    created_ms: int = _ms()


class Case(SQLModel, table=True):
    """A case (proctor.cases): the incidents about one player (or game) of one kind, grouped.  Append-only: its state
    is folded from its occurrences and the actions taken on it, never stored."""

    __tablename__ = "incident_case"

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(max_length=200, index=True)
    """What it is about: ``player:REF/KIND``, ``game:ID/KIND`` or ``incident:ID``."""
    kind: str = Field(max_length=60, index=True)
    player_ref: str | None = Field(default=None, max_length=100)
    game_id: int | None = Field(default=None, foreign_key="game.id")
    """The game of the incident that opened it (later occurrences may be in later games of the player)."""
    follows: int | None = Field(default=None)
    """The key's previous case, resolved before this one opened (a recurrence after a dismissal)."""
    created_ms: int = _ms()


class CaseOccurrence(SQLModel, table=True):
    """An incident of a case.  Append-only."""

    __tablename__ = "case_occurrence"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="incident_case.id", index=True)
    incident_id: int = Field(foreign_key="incident.id", unique=True)
    created_ms: int = _ms()


class CaseAction(SQLModel, table=True):
    """An action on a case: an arbiter's (dismiss, confirm, overrule, decide) or the service's (escalate).
    Append-only."""

    __tablename__ = "case_action"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="incident_case.id", index=True)
    arbiter: str = Field(max_length=200)
    role: str = Field(max_length=20)
    action: str = Field(max_length=20)
    note: str = Field(default="", sa_column=Column(Text, nullable=False))
    detail: dict[str, Any] | None = _json()
    created_ms: int = _ms()


class AuditEntry(SQLModel, table=True):
    """One state change, chained to the previous entry by a SHA-256 hash (``proctor audit verify``)."""

    __tablename__ = "audit_entry"

    id: int | None = Field(default=None, primary_key=True)
    at_ms: int = _ms()
    actor: str = Field(max_length=200)
    action: str = Field(max_length=60)
    subject: str = Field(max_length=200)
    detail: dict[str, Any] | None = _json()
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64, unique=True)


class AccountChange(SQLModel, table=True):
    """A change of an arbiter's account (added, replaced, a new password, removed), hash-chained like the audit log
    but on its own: accounts are changed from the command line, beside a running server (proctor.account_log).
    ``state`` is what the account grants afterwards (role, sections, a hash of its credentials), None once removed."""

    __tablename__ = "account_change"

    id: int | None = Field(default=None, primary_key=True)
    at_ms: int = _ms()
    actor: str = Field(max_length=200)
    arbiter: str = Field(max_length=200, index=True)
    change: str = Field(max_length=20)
    state: dict[str, Any] | None = _json()
    prev_hash: str = Field(max_length=64, unique=True)
    """Unique: two processes that changed accounts at once cannot fork the chain."""
    hash: str = Field(max_length=64, unique=True)


class StreamToken(SQLModel, table=True):
    """A player's token for their camera page and stream (``/play/{token}``); stored hashed."""

    __tablename__ = "stream_token"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    player_ref: str = Field(max_length=100, index=True)
    created_ms: int = _ms()
    revoked_ms: int | None = _ms(nullable=True)
    expires_ms: int | None = _ms(nullable=True)
    """When it stops working: the end of the player's event, else ``STREAM_TOKEN_TTL_S`` after it was issued (NULL:
    expired)."""


class LoadedResult(SQLModel, table=True):
    """A pairing's result as an event file gave it (``proctor event load``), hash-chained like the account changes and
    for the same reason: event files are loaded from the command line beside a running server, whose writer alone
    appends to the audit log.  ``proctor audit verify`` checks each pairing's result against the last result loaded
    or entered (``pairing.result``) for it."""

    __tablename__ = "loaded_result"

    id: int | None = Field(default=None, primary_key=True)
    at_ms: int = _ms()
    actor: str = Field(max_length=200)
    pairing_id: int = Field(index=True)
    result: str = Field(max_length=10)
    prev_hash: str = Field(max_length=64, unique=True)
    hash: str = Field(max_length=64, unique=True)


class CameraAction(SQLModel, table=True):
    """An arbiter's action on a player's camera (36): a message, a prompt (ear check, room scan, pan check) and the
    capture it produced, a leave of the area (36.4.1), or the approval of the player's setup.  Append-only; the audit
    entry for it names this row (``camera-action:ID``), so the free text stays out of the audit log."""

    __tablename__ = "camera_action"

    id: int | None = Field(default=None, primary_key=True)
    player_ref: str = Field(max_length=100, index=True)
    kind: str = Field(max_length=20)
    """message, prompt, capture, leave or approval."""
    arbiter: str = Field(max_length=200)
    role: str = Field(max_length=20)
    incident_id: int | None = Field(default=None)
    """The incident it was recorded on, if any (not a foreign key: the incident may be staged in the same batch)."""
    detail: dict[str, Any] | None = _json()
    created_ms: int = _ms()


class Appeal(SQLModel, table=True):
    """A technical appeal (22) against an arbiter's decision on a game or an incident: lodged in writing by a team
    leader or coach (22.1) with the deposit (22.1, 22.2), recorded by an arbiter.  Append-only: the committee's votes
    and its decision are rows of their own."""

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(default=None, foreign_key="game.id", index=True)
    incident_id: int | None = Field(default=None, foreign_key="incident.id", index=True)
    filed_by: str = Field(max_length=200)
    capacity: str = Field(max_length=20)
    """team-leader or coach (22.1: nobody else may lodge an appeal)."""
    team: str = Field(default="", max_length=200)
    grounds: str = Field(sa_column=Column(Text, nullable=False))
    deposit_amount: str = Field(max_length=24)
    """A decimal amount as text (``"500"``, ``"200.50"``): exact, whatever the database."""
    deposit_currency: str = Field(max_length=3)
    """ISO 4217 (``CNY``)."""
    recorded_by: str = Field(max_length=200)
    recorded_role: str = Field(max_length=20)
    created_ms: int = _ms()


class Withdrawal(SQLModel, table=True):
    """A player's withdrawal from a section (24.4) after ``after_round`` rounds, with its written reason (24.1.2),
    recorded by the chief arbiter, a deputy or the organising committee.  Append-only; the standings apply it (24.4.2
    round robin, 24.4.3 Swiss: proctor.review)."""

    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", index=True)
    start_no: int
    after_round: int
    reason: str = Field(sa_column=Column(Text, nullable=False))
    recorded_by: str = Field(max_length=200)
    recorded_role: str = Field(max_length=20)
    created_ms: int = _ms()

    __table_args__ = (UniqueConstraint("section_id", "start_no"),)


class BracketDraw(SQLModel, table=True):
    """A knockout section's draw (27.1): its players by seed (their start numbers in the section), made once, by the
    event file or by the chief arbiter or a deputy from the preliminaries' final standings (regulations 2023 VII(3)).
    Append-only; the bracket follows from it and the games' results (proctor.brackets)."""

    __tablename__ = "bracket_draw"

    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", unique=True)
    seeds: list[int] = Field(sa_column=Column(JSON, nullable=False))
    source: dict[str, Any] | None = _json()
    """Where the seeds came from: the qualifying section and each seed's place and start number there."""
    reason: str = Field(sa_column=Column(Text, nullable=False))
    recorded_by: str = Field(max_length=200)
    recorded_role: str = Field(max_length=20)
    created_ms: int = _ms()


class AppealVote(SQLModel, table=True):
    """One technical appeals committee member's vote on an appeal (22.2: each member has one vote).  Append-only."""

    __tablename__ = "appeal_vote"

    id: int | None = Field(default=None, primary_key=True)
    appeal_id: int = Field(foreign_key="appeal.id", index=True)
    member: str = Field(max_length=200)
    vote: str = Field(max_length=10)
    """uphold or reject."""
    note: str = Field(default="", sa_column=Column(Text, nullable=False))
    created_ms: int = _ms()

    __table_args__ = (UniqueConstraint("appeal_id", "member"),)


class AppealDecision(SQLModel, table=True):
    """The committee's final decision on an appeal, by majority (22.2), and what becomes of the deposit (22.1, 22.2:
    returned if the appeal succeeds; if it fails, forfeited, or half returned when it had some reasonable basis)."""

    __tablename__ = "appeal_decision"

    id: int | None = Field(default=None, primary_key=True)
    appeal_id: int = Field(foreign_key="appeal.id", unique=True)
    outcome: str = Field(max_length=10)
    """upheld or rejected."""
    uphold: int
    reject: int
    committee: int
    """How many members the committee had when it decided."""
    deposit_outcome: str = Field(max_length=20)
    """returned, half-returned or forfeited."""
    deposit_returned: str = Field(max_length=24)
    decided_by: str = Field(max_length=200)
    decided_role: str = Field(max_length=20)
    note: str = Field(default="", sa_column=Column(Text, nullable=False))
    created_ms: int = _ms()


class CheckIn(SQLModel, table=True):
    """A player's check-in for a round of their section (24.1.1) recorded by hand, or one undone; append-only.  A
    check-in by the camera setup is not a row of its own: it is the arbiter's approval of the setup (a
    ``camera_action``, with whether the camera was streaming then), folded at read time (proctor.check_ins)."""

    __tablename__ = "check_in"

    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", index=True)
    round_no: int
    start_no: int
    action: str = Field(max_length=20)
    """check-in (by hand) or undo."""
    reason: str = Field(sa_column=Column(Text, nullable=False))
    detail: dict[str, Any] | None = _json()
    """What the check-in stood on: for a check-in, what the camera setup still lacked then; for an undo, the check-in
    it undid (how, when, by whom)."""
    recorded_by: str = Field(max_length=200)
    recorded_role: str = Field(max_length=20)
    created_ms: int = _ms()
