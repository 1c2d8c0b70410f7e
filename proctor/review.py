"""The review panel's read side: one game's timeline, a player's history, the incident list's filters and what the
incident report reads (proctor.incident_report builds it), and the exports (game records, a section's standings).

The ``read_*`` functions read rows; everything else is a pure function of what they read, so the same rows always
give the same timeline, table or report.

A game's timeline is rebuilt by replaying its ``game_event`` log through the engine (the log is what the live state
was folded from, so the replay is exact): each applied event gives the moves it played, with both clocks after the
move, and the lines it added to the game's log (clock actions, penalties, verdicts, with who, why and the article).
The feed's liveness per player is the engine's own timeline (``engine.liveness``); the camera's comes from the camera
findings (``camera-lost``, ``camera-frozen``, ``camera-covered`` incidents of that player), which start when the
incident is raised and end at the detector's note "ended after N s".  The two are separate series: a player can be on
camera while the platform has lost them, and the reverse.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from sqlalchemy import Connection, Table, and_, func, or_, select

from engine.actions import AgreeDraw, Choose, ClaimForbidden, Resign, Stone
from engine.adjudication import Adjudication, settings_from_dict
from engine.board import format_point
from engine.openings import Player
from engine.records import GameRecord, record_from_game, write_psq, write_rif
from engine.standings import (
    Entrant,
    ResultKind,
    RoundEntry,
    Scoring,
    Standing,
    System,
    Tournament,
    format_score,
    results_table,
    standings,
    withdraw,
)
from engine.trf import write_trf
from proctor.codec import event_from_dict
from proctor.errors import BadRequestError, ConflictError, NotFoundError
from proctor.events import MEDAL_PLACES, section_scoring
from proctor.game_results import game_results
from proctor.models import (
    MAX_BIGINTEGER,
    MAX_INTEGER,
    Game,
    GameEvent,
    Incident,
    IncidentAction,
    Pairing,
    Platform,
    Section,
    Withdrawal,
)
from proctor.models import Player as PlayerRow
from proctor.models import Tournament as TournamentRow
from proctor.server_words import IncidentFacts, incident_words, line_facts, line_words
from proctor.spreadsheets import spreadsheet_text

CAMERA_GAP_KINDS: Final = ("camera-lost", "camera-frozen", "camera-covered", "analysis-gap")
"""The camera findings that make a gap in a player's camera series (36.4), and the time no analysis worker checked the
camera (the distributed mode)."""
STATUSES: Final = ("open", "confirm", "dismiss", "note", "penalty", "evidence")
"""An incident's status: ``open`` until an arbiter acts, then its last action."""
CLOCK_KINDS: Final = frozenset(
    {"clock-paused", "clock-resumed", "time-adjusted", "shared-time-split", "suspended", "resumed"}
)
PENALTY_KINDS: Final = frozenset({"penalty", "disciplinary-loss"})
VERDICT_KINDS: Final = frozenset(
    {"verdict", "verdict-pending", "verdict-overruled", "result-confirmed", "result-declared"}
)
_ENDED: Final = re.compile(r"^ended after (\d+(?:\.\d+)?) s$")
_SEATS: Final = (Player.FIRST, Player.SECOND)
_ENDINGS: Final = (Resign, AgreeDraw, ClaimForbidden)


def _table(model: Any) -> Table:
    table: Table = model.__table__
    return table


# --- Games as stored ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a game sits in an event: its pairing's section, round and board."""

    event: str
    event_name: str
    section: str
    round_no: int
    board: int
    match_game: int = 1
    """The game's number within its match (regulations 2023 VII(2)); 1 for a single game."""


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game's row: who sits where (the first player holds Black at the start, 10), its settings, its pairing."""

    id: int
    platform: str
    external_id: str
    refs: dict[Player, str]
    names: dict[Player, str]
    settings: dict[str, Any]
    placement: Placement | None = None

    def name(self, seat: Player) -> str:
        return self.names.get(seat) or self.refs[seat]

    def label(self) -> str:
        text = f"game {self.id} ({self.platform} {self.external_id}"
        if self.placement is not None:
            p = self.placement
            text += f"; {p.event}/{p.section} round {p.round_no} board {p.board}"
            text += f" game {p.match_game}" if p.match_game > 1 else ""
        return text + ")"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One applied engine event of a game's log: its position, source (feed, deadline, arbiter), time and data."""

    position: int
    source: str
    at: int
    data: dict[str, Any]


def _game_query() -> Any:
    game, platform, pairing = _table(Game), _table(Platform), _table(Pairing)
    section, tournament = _table(Section), _table(TournamentRow)
    columns = (
        game.c.id, game.c.external_id, game.c.black_ref, game.c.white_ref, game.c.black_name, game.c.white_name,
        game.c.settings, platform.c.name.label("platform"), tournament.c.slug.label("event"),
        tournament.c.name.label("event_name"), section.c.slug.label("section"), pairing.c.round_no, pairing.c.board,
        pairing.c.game_no,
    )  # fmt: skip
    return (
        select(*columns)
        .join(platform, platform.c.id == game.c.platform_id)
        .outerjoin(pairing, pairing.c.id == game.c.pairing_id)
        .outerjoin(section, section.c.id == pairing.c.section_id)
        .outerjoin(tournament, tournament.c.id == section.c.tournament_id)
    )


def _game_info(row: Any) -> GameInfo:
    placement = None
    if row.event is not None:
        placement = Placement(row.event, row.event_name, row.section, row.round_no, row.board, row.game_no)
    return GameInfo(
        row.id, row.platform, row.external_id, {Player.FIRST: row.black_ref, Player.SECOND: row.white_ref},
        {Player.FIRST: row.black_name, Player.SECOND: row.white_name}, dict(row.settings), placement,
    )  # fmt: skip


def read_game(connection: Connection, game_id: int) -> GameInfo:
    row = connection.execute(_game_query().where(_table(Game).c.id == game_id)).first()
    if row is None:
        raise NotFoundError(f"no game {game_id}")
    return _game_info(row)


def read_games(connection: Connection, game_ids: Sequence[int]) -> dict[int, GameInfo]:
    if not game_ids:
        return {}
    rows = connection.execute(_game_query().where(_table(Game).c.id.in_(list(game_ids))))
    return {info.id: info for info in map(_game_info, rows)}


def read_player_games(connection: Connection, player_ref: str) -> list[GameInfo]:
    game = _table(Game)
    query = _game_query().where(or_(game.c.black_ref == player_ref, game.c.white_ref == player_ref))
    return [_game_info(row) for row in connection.execute(query.order_by(game.c.id))]


def read_events(connection: Connection, game_id: int) -> list[StoredEvent]:
    table = _table(GameEvent)
    rows = connection.execute(
        select(table.c.position, table.c.source, table.c.at_ms, table.c.event)
        .where(table.c.game_id == game_id)
        .order_by(table.c.position)
    )
    return [StoredEvent(row.position, row.source, row.at_ms, dict(row.event)) for row in rows]


# --- The replay -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replayed:
    """A game's log folded again: the final state, its moves, and its log lines, each with the event behind it."""

    state: Adjudication
    moves: tuple[dict[str, Any], ...]
    lines: tuple[dict[str, Any], ...]
    entries: tuple[dict[str, Any], ...]
    """The moves and the lines in the order the replay produced them (each event's moves, then its lines)."""


def replay_game(info: GameInfo, events: Sequence[StoredEvent]) -> Replayed:
    """Fold the stored events from the game's settings, noting every action played (its point and colour, who
    played it, the time the mover used on it, both clocks after it) and every line added to the game's log."""
    state = Adjudication.new(settings_from_dict(info.settings))
    moves: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    used_before = {Player.FIRST: 0, Player.SECOND: 0}
    for stored in events:
        before = state
        state = state.apply(event_from_dict(stored.data))
        for offset, action in enumerate(state.game.actions[before.game.ply :]):
            point = action.point if isinstance(action, (Stone, Choose)) else None
            colour = state.game.position.color_at(point) if point is not None else None
            mover: Player | None = before.due_player()
            if isinstance(action, Resign):
                mover = state.player_of(action.color)
            elif isinstance(action, AgreeDraw):
                mover = None
            think = None
            if mover is not None:
                think = state.clock.used_of(mover) - used_before[mover]
                used_before[mover] = state.clock.used_of(mover)
            move = {
                "type": "move", "at": stored.at, "ply": before.game.ply + offset + 1, "token": action.token(),
                "point": format_point(point) if point is not None else None,
                "colour": colour.value if colour is not None else None,
                "player": info.refs[mover] if mover is not None else None, "think_ms": think,
                "clocks": {info.refs[p]: state.remaining(p, stored.at) for p in _SEATS},
            }  # fmt: skip
            moves.append(move)
            entries.append(move)
        for entry in state.log[len(before.log) :]:
            said = line_words(line_facts(entry, before, state, stored.data, {p: info.name(p) for p in _SEATS}))
            line: dict[str, Any] = {
                "type": _line_type(entry.kind), "at": entry.at, "kind": entry.kind, "text": entry.text,
                "text_words": said,
                "article": entry.article, "by": entry.actor if stored.source == "arbiter" else "",
                "why": entry.cause, "source": stored.source,
            }  # fmt: skip
            if stored.source == "arbiter":
                line["why"] = stored.data.get("reason", "") or entry.cause
                line["role"] = stored.data.get("role")
                if stored.data.get("evidence"):
                    line["evidence"] = list(stored.data["evidence"])
            lines.append(line)
            entries.append(line)
    return Replayed(state, tuple(moves), tuple(lines), tuple(entries))


def _line_type(kind: str) -> str:
    if kind in CLOCK_KINDS:
        return "clock"
    if kind in PENALTY_KINDS:
        return "penalty"
    if kind in VERDICT_KINDS:
        return "verdict"
    return "game"


def result_of(info: GameInfo, state: Adjudication) -> dict[str, Any] | None:
    """The game's result with its article, whether it is confirmed, and each player's entry in the results table
    (28.3: "+" and "-" for games not played)."""
    outcome = state.outcome
    if outcome is None:
        return None
    table = state.results()
    return {
        "winner": outcome.winner.value if outcome.winner else None,
        "winner_player": info.refs[state.player_of(outcome.winner)] if outcome.winner else None,
        "reason": outcome.termination.value, "article": outcome.article, "double_loss": outcome.double_loss,
        "at": outcome.at, "ply": outcome.ply, "confirmed": state.confirmed,
        "results": {info.refs[p]: table[state.color_of(p)].value for p in _SEATS},
    }  # fmt: skip


# --- The timeline ---------------------------------------------------------------------------------------------------


def camera_gaps(incidents: Sequence[dict[str, Any]], refs: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each player's camera gaps: a camera finding's incident starts one; the detector's note "ended after N s" ends
    it (none yet: still down)."""
    series: dict[str, list[dict[str, Any]]] = {ref: [] for ref in refs}
    for incident in incidents:
        if incident["kind"] not in CAMERA_GAP_KINDS or incident.get("player") not in series:
            continue
        start, end = incident["at"], None
        for action in incident["actions"]:
            match = _ENDED.match(action["note"]) if action["action"] == "note" else None
            if match:
                end = start + round(float(match.group(1)) * 1000)
                break
        series[incident["player"]].append({
            "kind": incident["kind"], "article": incident["article"], "incident": incident["id"], "start": start,
            "end": end, "duration_ms": None if end is None else end - start,
        })  # fmt: skip
    return series


def game_timeline(info: GameInfo, events: Sequence[StoredEvent], incidents: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One game for the review panel (see the module's docstring).  ``events`` lists, in time order, the moves, the
    game's log lines, the incidents and every arbiter action on them; ``moves`` is the move list a replay slider
    needs (the board after ply n is the stones of the first n moves, each with its colour: stones never leave the
    board)."""
    replayed = replay_game(info, events)
    state = replayed.state
    refs = [info.refs[p] for p in _SEATS]
    items: list[dict[str, Any]] = list(replayed.entries)
    for incident in incidents:
        items.append({
            "type": "incident", "at": incident["at"], "incident": incident["id"], "kind": incident["kind"],
            "article": incident["article"], "source": incident["source"], "player": incident.get("player"),
            "summary": incident["summary"], "status": incident["status"],
            "summary_words": incident["summary_words"],
        })  # fmt: skip
        for action in incident["actions"]:
            items.append({
                "type": "incident-action", "at": action["at"], "incident": incident["id"], "action": action["action"],
                "by": f"{action['arbiter']} ({action['role']})", "why": action["note"], "verdict": action["verdict"],
                "article": (action["verdict"] or {}).get("articles") or incident["article"],
            })  # fmt: skip
    items.sort(key=lambda item: item["at"])  # stable: the engine's order is kept among equal times
    game = state.game
    return {
        "game": {
            "id": info.id, "platform": info.platform, "platform_game_id": info.external_id, "rule": game.rules.name,
            "opening": game.opening.name, "start_at": state.settings.start_at,
            "time_control": state.settings.time_control.describe(),
            "event": None if info.placement is None else {
                "slug": info.placement.event, "name": info.placement.event_name, "section": info.placement.section,
                "round": info.placement.round_no, "board": info.placement.board,
                "match_game": info.placement.match_game,
            },
        },
        "players": {
            info.refs[p]: {"name": info.names.get(p, ""), "seat": p.value,
                           "colour": state.color_of(p).value} for p in _SEATS
        },
        "moves": list(replayed.moves),
        "events": items,
        "liveness": {
            "feed": {
                info.refs[p]: [{"start": gap.start, "end": gap.end,
                                "duration_ms": None if gap.end is None else gap.end - gap.start}
                               for gap in state.feed[index].gaps]
                for index, p in enumerate(_SEATS)
            },
            "camera": camera_gaps(incidents, refs),
        },
        "incidents": list(incidents),
        "result": result_of(info, state),
        "pending_verdict": None if state.pending_verdict is None else {
            "reason": state.pending_verdict.termination.value, "article": state.pending_verdict.article,
        },
    }  # fmt: skip


# --- Game records ---------------------------------------------------------------------------------------------------


def game_record(info: GameInfo, state: Adjudication) -> GameRecord:
    """The record as played, Black and White named as they hold the colours at the end (after any swap); a double
    loss, which RIF cannot express, is left without a result and named in ``result``."""
    game = state.game
    extra = {"game_id": str(info.id), "platform_game_id": info.external_id}
    if info.placement is not None:
        extra |= {"event": info.placement.event, "section": info.placement.section,
                  "round": str(info.placement.round_no), "board": str(info.placement.board)}  # fmt: skip
    if game.outcome is not None:
        extra |= {"termination": game.outcome.termination.value, "article": game.outcome.article}
    record = record_from_game(game, info.name(game.black_player), info.name(game.black_player.other), **extra)
    if record.result == "double-loss":
        record = replace(record, result=None, info={**record.info, "result": "double-loss"})
    return record


def rif_text(info: GameInfo, state: Adjudication) -> str:
    return write_rif([game_record(info, state)])


def psq_text(info: GameInfo, replayed: Replayed) -> str:
    """PSQ with the time each stone took its mover, and an opening protocol's decisions (swaps, candidates, Swap2's
    choice) in info lines after the stones and names (engine.records.write_psq).  How the game ended (a resignation,
    an agreed draw, a claim) is left out; a game with a pass is a RecordError (PSQ colours stones by alternation)."""
    times = [move["think_ms"] or 0 for move in replayed.moves if move["point"] is not None]
    record = game_record(info, replayed.state)
    record = replace(record, actions=tuple(a for a in record.actions if not isinstance(a, _ENDINGS)))
    return write_psq(record, times)


# --- A player's history ---------------------------------------------------------------------------------------------


def player_history(
    player_ref: str, registrations: Sequence[dict[str, Any]], games: Sequence[tuple[GameInfo, Adjudication]],
    incidents: Sequence[dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    """A player's sections, games (colour, opponent, result and its article), incidents and penalties."""
    rows: list[dict[str, Any]] = []
    penalties: list[dict[str, Any]] = []
    for info, state in games:
        seat = Player.FIRST if info.refs[Player.FIRST] == player_ref else Player.SECOND
        result = result_of(info, state)
        rows.append({
            "game": info.id, "platform": info.platform, "platform_game_id": info.external_id,
            "event": None if info.placement is None else {
                "slug": info.placement.event, "section": info.placement.section, "round": info.placement.round_no,
                "board": info.placement.board, "match_game": info.placement.match_game,
            },
            "seat": seat.value, "colour": state.color_of(seat).value,
            "opponent": {"player": info.refs[seat.other], "name": info.names.get(seat.other, "")},
            "status": "over" if state.is_over else ("live" if state.started else "scheduled"),
            "result": None if result is None else result["results"][player_ref],
            "reason": None if result is None else result["reason"],
            "article": None if result is None else result["article"],
            "confirmed": state.confirmed,
        })  # fmt: skip
        for penalty in state.penalties.penalties:
            if penalty.player is seat:
                penalties.append({
                    "game": info.id, "penalty": penalty.kind.value, "offence": penalty.offence,
                    "articles": penalty.articles, "occurrence": penalty.occurrence, "by": penalty.arbiter,
                    "role": penalty.imposed_by.value, "at": penalty.at, "reason": penalty.reason,
                    "evidence": list(penalty.evidence),
                })  # fmt: skip
    names = [r["name"] for r in registrations] + [
        info.names.get(Player.FIRST if info.refs[Player.FIRST] == player_ref else Player.SECOND, "")
        for info, _ in games
    ]
    return {
        "player": player_ref,
        "name": next((name for name in names if name), ""),
        "sections": list(registrations),
        "games": rows,
        "incidents": list(incidents),
        "penalties": penalties,
        "summary": {
            "games": len(rows), "incidents": len(incidents), "penalties": len(penalties),
            "results": "".join(row["result"] or "" for row in rows),
        },
    }  # fmt: skip


def read_registrations(connection: Connection, player_ref: str) -> list[dict[str, Any]]:
    player, section, tournament = _table(PlayerRow), _table(Section), _table(TournamentRow)
    rows = connection.execute(
        select(tournament.c.slug, section.c.slug.label("section"), player.c.start_no, player.c.name, player.c.team)
        .join(section, section.c.id == player.c.section_id)
        .join(tournament, tournament.c.id == section.c.tournament_id)
        .where(player.c.platform_ref == player_ref)
        .order_by(player.c.id)
    )
    return [{"event": r.slug, "section": r.section, "start_no": r.start_no, "name": r.name, "team": r.team}
            for r in rows]  # fmt: skip


# --- Incidents ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IncidentFilter:
    """The incident list's filters (all optional; together they narrow)."""

    game: int | None = None
    kind: str | None = None
    player: str | None = None
    status: str | None = None
    source: str | None = None
    """``feed``, ``rules``, ``service``, ``player``, ``arbiter`` (any arbiter) or ``arbiter:NAME``, ``detector``…"""
    article: str | None = None
    """An article and its sub-articles: ``36.4`` finds ``36.4`` and ``36.4.1``, also inside ``8.1, 19.1.2``."""
    since: int | None = None
    until: int | None = None
    q: str | None = None
    """Text searched in the kind and the summary (case-insensitive)."""
    event: str | None = None
    """An event's slug: its games, and its players' incidents that are about no game."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> IncidentFilter:
        def number(name: str) -> int | None:
            raw = query.get(name)
            if raw is None:
                return None
            high = MAX_INTEGER if name == "game" else MAX_BIGINTEGER
            if not raw.isdigit() or len(raw) > len(str(high)) or int(raw) > high:
                raise BadRequestError(f"query parameter '{name}' must be a whole number from 0 to {high}" +
                                      (" (ms since 1970)" if name in ("since", "until") else ""))  # fmt: skip
            return int(raw)

        status = query.get("status")
        if status is not None and status not in STATUSES:
            raise BadRequestError(f"query parameter 'status' must be one of {', '.join(STATUSES)}")
        texts = {name: query.get(name) or None for name in ("kind", "player", "source", "article", "q", "event")}
        return cls(game=number("game"), status=status, since=number("since"), until=number("until"), **texts)


def _like(text: str) -> str:
    return "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def article_matches(wanted: str, article: str | None) -> bool:
    if not article:
        return False
    parts = [part.strip().split(" ")[0] for part in article.split(",")]
    return any(part == wanted or part.startswith(wanted + ".") for part in parts)


def _incident_query(connection: Connection, where: IncidentFilter, columns: Sequence[Any] | None = None) -> Any:
    """The incidents (or ``columns`` of them) that pass the filter, with their status; unordered, and before the
    article filter (:func:`article_matches`, applied to the rows)."""
    incident, action = _table(Incident), _table(IncidentAction)
    last = (
        select(action.c.incident_id, func.max(action.c.id).label("last_id")).group_by(action.c.incident_id).subquery()
    )
    last_action = action.alias("last_action")
    status = func.coalesce(last_action.c.action, "open")
    query = (
        select(*(columns if columns is not None else [incident]), status.label("status"))
        .select_from(incident.outerjoin(last, last.c.incident_id == incident.c.id).outerjoin(
            last_action, last_action.c.id == last.c.last_id))
    )  # fmt: skip
    conditions: list[Any] = []
    if where.game is not None:
        conditions.append(incident.c.game_id == where.game)
    if where.kind is not None:
        conditions.append(incident.c.kind == where.kind)
    if where.player is not None:
        conditions.append(incident.c.player_ref == where.player)
    if where.status is not None:
        conditions.append(status == where.status)
    if where.source is not None:
        conditions.append(or_(incident.c.source == where.source, incident.c.source.like(where.source + ":%")))
    if where.since is not None:
        conditions.append(incident.c.created_ms >= where.since)
    if where.until is not None:
        conditions.append(incident.c.created_ms <= where.until)
    if where.q is not None:
        pattern = _like(where.q)
        conditions.append(or_(func.lower(incident.c.kind).like(pattern, escape="\\"),
                              func.lower(incident.c.summary).like(pattern, escape="\\")))  # fmt: skip
    if where.article is not None:
        conditions.append(incident.c.article.like(f"%{where.article}%"))
    if where.event is not None:
        conditions.append(_in_event(connection, where.event, incident))
    return query.where(and_(*conditions)) if conditions else query


def read_incidents(connection: Connection, where: IncidentFilter, limit: int | None = 500) -> list[dict[str, Any]]:
    """The incidents that pass the filter, oldest first (the first ``limit``), with their actions (who, role, what,
    note, verdict, when) and status: the reports' and the timelines' read.  The list route pages newest first
    (:func:`incident_page`)."""
    query = _incident_query(connection, where).order_by(_table(Incident).c.id)
    if limit is not None and where.article is None:
        query = query.limit(limit)
    rows = [row for row in connection.execute(query).all()
            if where.article is None or article_matches(where.article, row.article)][:limit]  # fmt: skip
    return _with_actions(connection, rows)


MAX_PAGE: Final = 500
"""The most incidents one page of the list gives."""


@dataclass(frozen=True, slots=True)
class IncidentPage:
    """One page of the incident list, newest first: ``total`` pass the filter; ``next_before`` is the cursor of the
    next (older) page, None on the last."""

    incidents: list[dict[str, Any]]
    total: int
    next_before: int | None


def incident_page(connection: Connection, where: IncidentFilter, limit: int = MAX_PAGE,
                  before: int | None = None) -> IncidentPage:  # fmt: skip
    """The newest ``limit`` incidents that pass the filter and whose id is below ``before`` (the cursor), with how
    many pass it in all and the next page's cursor: never silently cut short."""
    incident = _table(Incident)
    matching = [row.id for row in connection.execute(
        _incident_query(connection, where, [incident.c.id, incident.c.article]).order_by(incident.c.id.desc()))
        if where.article is None or article_matches(where.article, row.article)]  # fmt: skip
    after_cursor = [i for i in matching if before is None or i < before]
    ids = after_cursor[:limit]
    rows = []
    if ids:
        query = _incident_query(connection, IncidentFilter()).where(incident.c.id.in_(ids))
        rows = list(connection.execute(query.order_by(incident.c.id.desc())).all())
    more = len(after_cursor) > len(ids)
    return IncidentPage(_with_actions(connection, rows), len(matching), ids[-1] if more and ids else None)


def _with_actions(connection: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    action = _table(IncidentAction)
    ids = [row.id for row in rows]
    actions: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for row in connection.execute(select(action).where(action.c.incident_id.in_(ids)).order_by(action.c.id)):
            actions[row.incident_id].append({
                "arbiter": row.arbiter, "role": row.role, "action": row.action, "note": row.note,
                "verdict": row.verdict, "at": row.created_ms,
            })  # fmt: skip
    incidents = [
        {
            "id": row.id, "game": row.game_id, "player": row.player_ref, "kind": row.kind, "source": row.source,
            "article": row.article, "confidence": row.confidence, "summary": row.summary, "evidence": row.evidence,
            "at": row.created_ms, "actions": actions[row.id], "status": row.status,
        }
        for row in rows
    ]  # fmt: skip
    for incident in incidents:  # the summary in both languages (proctor.server_words), said from what is stored
        incident["summary_words"] = incident_words(IncidentFacts.of(incident))
    return incidents


def _in_event(connection: Connection, slug: str, incident: Table) -> Any:
    tournament, section, pairing = _table(TournamentRow), _table(Section), _table(Pairing)
    game, player = _table(Game), _table(PlayerRow)
    event_id = connection.execute(select(tournament.c.id).where(tournament.c.slug == slug)).scalar()
    if event_id is None:
        raise NotFoundError(f"no event {slug!r}")
    sections = select(section.c.id).where(section.c.tournament_id == event_id)
    games = select(game.c.id).join(pairing, pairing.c.id == game.c.pairing_id).where(pairing.c.section_id.in_(sections))
    refs = select(player.c.platform_ref).where(player.c.section_id.in_(sections), player.c.platform_ref != "")
    return or_(incident.c.game_id.in_(games), and_(incident.c.game_id.is_(None), incident.c.player_ref.in_(refs)))


# --- The incident report --------------------------------------------------------------------------------------------


def evidence_files(incident: dict[str, Any]) -> list[tuple[str, str]]:
    """Every media file of an incident with its SHA-256: the snapshot it was raised with, then each clip or still
    added as an ``evidence`` action."""
    files: list[tuple[str, str]] = []
    evidence = incident.get("evidence") or {}
    media, digest = evidence.get("media"), evidence.get("sha256")
    if isinstance(media, list):
        if isinstance(digest, list) and len(digest) == len(media):  # several files (a scheduled ear check's)
            files += [(str(name), str(hash_)) for name, hash_ in zip(media, digest, strict=True)]
        else:
            files += [(str(name), digest if isinstance(digest, str) and len(media) == 1 else "") for name in media]
    for action in incident["actions"]:
        added = (action.get("verdict") or {}).get("evidence") if action["action"] == "evidence" else None
        if isinstance(added, dict):
            files += [(str(name), str(added.get("sha256", ""))) for name in added.get("media", [])]
    return files


def read_report_context(
    connection: Connection, where: IncidentFilter, incidents: Sequence[dict[str, Any]]
) -> tuple[str, dict[str, str], dict[int, str]]:
    """The report's heading (the event's name: the one filtered on, else the only one; empty for several), the
    players' names and the games' labels."""
    tournament = _table(TournamentRow)
    events = connection.execute(select(tournament.c.slug, tournament.c.name).order_by(tournament.c.id)).all()
    if where.event is not None:
        title = next((e.name for e in events if e.slug == where.event), where.event)
    else:
        title = events[0].name if len(events) == 1 else ""
    refs = {i["player"] for i in incidents if i.get("player")}
    names: dict[str, str] = {}
    game_ids = sorted({i["game"] for i in incidents if i["game"] is not None})
    labels: dict[int, str] = {}
    if game_ids:
        for row in connection.execute(_game_query().where(_table(Game).c.id.in_(game_ids))):
            info = _game_info(row)
            labels[info.id] = info.label()
            for seat in _SEATS:
                if info.names.get(seat):
                    names.setdefault(info.refs[seat], info.names[seat])
    if refs:
        player = _table(PlayerRow)
        for ref, name in connection.execute(
            select(player.c.platform_ref, player.c.name).where(player.c.platform_ref.in_(refs))
        ):
            names[ref] = name  # the event's own spelling of the name over the platform's
    return title, names, labels


# --- A section's standings ------------------------------------------------------------------------------------------

_PAIRING_RESULTS: Final = {
    "1-0": (ResultKind.WIN, ResultKind.LOSS),
    "0-1": (ResultKind.LOSS, ResultKind.WIN),
    "½-½": (ResultKind.DRAW, ResultKind.DRAW),
    "+/-": (ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS),
    "-/+": (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_WIN),
    "-/-": (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_LOSS),
    "0-0": (ResultKind.LOSS, ResultKind.LOSS),
}
"""A stored pairing result as the two players' kinds; "0-0": both players lose (15.3), a played loss for each."""


@dataclass(frozen=True, slots=True)
class SectionTable:
    """A section as the standings need it."""

    event_name: str
    slug: str
    name: str
    system: str
    scoring: str
    tiebreaks: str
    rounds: int
    players: tuple[Any, ...]
    pairings: tuple[Any, ...]
    games: dict[int, tuple[ResultKind, ResultKind] | None]
    """Each linked pairing's game result (first, second player), by pairing id."""
    games_per_match: int = 1
    """Games per pairing (regulations 2023 VII(2)); each game is a pairing row with its ``game_no``."""
    match_scoring: str = "games"
    """How a match of several games scores (proctor.events.MATCH_SCORINGS)."""
    withdrawals: Mapping[int, int] = field(default_factory=dict)
    """Start number → the round after which the player withdrew (24.4, proctor.withdrawals)."""
    play_off_ties: str = "none"
    """Which ties left after every tie-break a play-off decides (proctor.events.PLAY_OFF_TIES)."""
    cut: int | None = None
    """How many go on to the knockout that qualifies from this section (regulations 2023 VII(3))."""


def read_section(
    connection: Connection, slug: str, section_slug: str, states: Mapping[int, Adjudication]
) -> SectionTable:
    tournament, section = _table(TournamentRow), _table(Section)
    row = connection.execute(
        select(section, tournament.c.name.label("event_name"))
        .join(tournament, tournament.c.id == section.c.tournament_id)
        .where(tournament.c.slug == slug, section.c.slug == section_slug)
    ).first()
    if row is None:
        raise NotFoundError(f"no section {slug}/{section_slug}")
    player, pairing, game = _table(PlayerRow), _table(Pairing), _table(Game)
    players = connection.execute(select(player).where(player.c.section_id == row.id).order_by(player.c.start_no)).all()
    pairings = connection.execute(
        select(pairing)
        .where(pairing.c.section_id == row.id)
        .order_by(pairing.c.round_no, pairing.c.board, pairing.c.game_no)
    ).all()
    linked = connection.execute(
        select(game.c.id, game.c.pairing_id).where(game.c.pairing_id.in_([p.id for p in pairings]))
    ).all()
    games = {p: game_results(states[g]) if g in states else None for g, p in linked}
    rounds = max([int((row.policy or {}).get("rounds") or 1), *(p.round_no for p in pairings)])
    return SectionTable(row.event_name, row.slug, row.name, row.system, row.scoring, row.tiebreaks, rounds,
                        tuple(players), tuple(pairings), games, row.games_per_match,
                        str((row.policy or {}).get("match_scoring") or "games"),
                        _withdrawals(connection, row.id), str((row.policy or {}).get("play_off_ties") or "none"),
                        _cut(connection, row.tournament_id, row.slug))  # fmt: skip


def _cut(connection: Connection, tournament_id: int, slug: str) -> int | None:
    """The qualifiers of the knockout that qualifies from section ``slug``, if any."""
    section = _table(Section)
    for policy in connection.execute(
        select(section.c.policy).where(section.c.tournament_id == tournament_id, section.c.system == "knockout")
    ).scalars():
        knockout = dict((policy or {}).get("knockout") or {})
        if knockout.get("qualify_from") == slug:
            return int(knockout.get("qualifiers") or 0) or None
    return None


def play_offs_needed(table: SectionTable, standing: Sequence[Standing], final: bool) -> list[dict[str, Any]]:
    """The ties that every tie-break leaves level and that a play-off decides (regulations 2023 VII(4)3): across the
    cut to the finals (``qualification``), or touching the medal places 1-3 (``medals``); others are shared."""
    groups: dict[int, list[Standing]] = {}
    for row in standing:
        groups.setdefault(row.rank, []).append(row)
    needed = []
    for rank, tied in sorted(groups.items()):
        last = rank + len(tied) - 1
        if len(tied) < 2:
            continue
        across_cut = table.play_off_ties == "qualification" and table.cut is not None and rank <= table.cut < last
        medals = table.play_off_ties == "medals" and rank <= MEDAL_PLACES
        if across_cut or medals:
            needed.append({
                "places": f"{rank}–{last}", "players": [{"start_no": r.entrant.start_no, "name": r.entrant.name}
                                                        for r in tied],
                "why": "qualification" if across_cut else "medals", "final": final,
                "article": "2023 regulations VII(4)3" if across_cut else "30.4",
            })  # fmt: skip
    return needed


def _withdrawals(connection: Connection, section_id: int) -> dict[int, int]:
    """Start number → the round after which the player withdrew (proctor.withdrawals)."""
    withdrawal = _table(Withdrawal)
    rows = connection.execute(
        select(withdrawal.c.start_no, withdrawal.c.after_round).where(withdrawal.c.section_id == section_id)
    )
    return {int(r.start_no): int(r.after_round) for r in rows}


def pairing_results(table: SectionTable, pairing: Any) -> tuple[ResultKind, ResultKind] | None:
    """A pairing's result: as stored with the pairing, else its game's once over; a bye is a pairing-allocated bye."""
    if pairing.white_start_no is None:
        return ResultKind.PAB, ResultKind.PAB
    if pairing.result:
        return _PAIRING_RESULTS[pairing.result]
    played = table.games.get(pairing.id)
    return played if played is not None else _withdrawn(table, pairing)


def _withdrawn(table: SectionTable, pairing: Any) -> tuple[ResultKind, ResultKind] | None:
    """A game left without a result because a player had withdrawn before its round: a forfeit for the player who
    withdrew (24.4.2; 24.4.3 a Swiss player is not paired again, and one paired anyway forfeits)."""
    gone = [table.withdrawals.get(no, pairing.round_no) < pairing.round_no
            for no in (pairing.black_start_no, pairing.white_start_no)]  # fmt: skip
    if not any(gone):
        return None
    first, second = (ResultKind.FORFEIT_LOSS if out else ResultKind.FORFEIT_WIN for out in gone)
    return first, second


def complete_rounds(table: SectionTable) -> int:
    """How many rounds from the first are complete: every board has a result."""
    done = 0
    for round_no in range(1, table.rounds + 1):
        boards = [p for p in table.pairings if p.round_no == round_no]
        if not boards or any(pairing_results(table, p) is None for p in boards):
            break
        done = round_no
    return done


def _where(table: SectionTable, pairing: Any) -> str:
    game = f" game {pairing.game_no}" if table.games_per_match > 1 else ""
    return f"round {pairing.round_no} board {pairing.board}{game}"


def _complete_pairings(table: SectionTable, through: int | None) -> tuple[int, list[Any]]:
    """The rounds the standings are after and their pairings; a round asked for that is not complete is a
    ConflictError naming its boards (and games) without a result."""
    if table.system == "knockout":
        raise ConflictError(f"section {table.slug} is a knockout: places follow the bracket, not a points table (28.4)",
                            article="28.4")  # fmt: skip
    complete = complete_rounds(table)
    rounds = complete if through is None else through
    if rounds > complete:
        missing = [_where(table, p) for p in table.pairings
                   if p.round_no <= rounds and pairing_results(table, p) is None]  # fmt: skip
        raise ConflictError(f"round {rounds} is not complete: no result yet for {', '.join(missing)}")
    return rounds, [p for p in table.pairings if p.round_no <= rounds]


def _tournament(table: SectionTable, rounds: int, entries: dict[int, list[RoundEntry]]) -> Tournament:
    win, draw, loss = section_scoring(table.scoring)
    entrants = tuple(
        Entrant(
            start_no=p.start_no, name=p.name, rounds=tuple(entries[p.start_no]), rating=p.rating,
            sex={"f": "w"}.get(p.gender, p.gender), birth=p.birth_date.replace("-", "/"), team=p.team,
        )
        for p in table.players
    )  # fmt: skip
    system = System.ROUND_ROBIN if table.system == "round-robin" else System.SWISS
    return Tournament(f"{table.event_name}: {table.name}", entrants, rounds, system, Scoring(win, draw, loss))


def games_tournament(table: SectionTable, through: int | None = None) -> Tournament:
    """Every game of the section as its own round of an engine tournament: round r's game g is round
    (r - 1) × games per match + g (one round a pairing when a match is one game).  A bye is a pairing-allocated bye
    in each of its round's games."""
    rounds, pairings = _complete_pairings(table, through)
    per = table.games_per_match
    entries: dict[int, list[RoundEntry]] = {
        p.start_no: [RoundEntry(None, None, ResultKind.ZPB)] * (rounds * per) for p in table.players
    }
    for pairing in pairings:
        results = pairing_results(table, pairing)
        assert results is not None
        first, second = results
        index = (pairing.round_no - 1) * per + pairing.game_no - 1
        if pairing.white_start_no is None:
            for game in range(per):
                entries[pairing.black_start_no][(pairing.round_no - 1) * per + game] = RoundEntry(None, None, first)
            continue
        # The first player (Black at the start) moves first: TRF's "w" (as proctor.events reads TRF files).
        entries[pairing.black_start_no][index] = RoundEntry(pairing.white_start_no, "w", first)
        entries[pairing.white_start_no][index] = RoundEntry(pairing.black_start_no, "b", second)
    return _tournament(table, rounds * per, entries)


def match_kinds(games: Sequence[tuple[ResultKind, ResultKind]], scoring: Scoring) -> tuple[ResultKind, ResultKind]:
    """A match's result for its two players from its games' (each as the two players', in the match's order), by the
    games' total (regulations 2023 VII(2): the combined result of the two games is the round's result): the higher
    total wins, equal totals draw; a match none of whose games was played is a forfeit; a match whose every game both
    players lost (15.3) is lost by both."""
    totals = [sum((scoring.points(game[side]) for game in games), Fraction(0)) for side in (0, 1)]
    unplayed = all(not game[0].played and not game[1].played for game in games)
    if all(game == (ResultKind.LOSS, ResultKind.LOSS) for game in games):
        return ResultKind.LOSS, ResultKind.LOSS
    if unplayed:
        if totals[0] == totals[1]:
            return ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_LOSS
        return ((ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS) if totals[0] > totals[1]
                else (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_WIN))  # fmt: skip
    if totals[0] == totals[1]:
        return ResultKind.DRAW, ResultKind.DRAW
    return (ResultKind.WIN, ResultKind.LOSS) if totals[0] > totals[1] else (ResultKind.LOSS, ResultKind.WIN)


def matches_tournament(table: SectionTable, through: int | None = None) -> Tournament:
    """Each round's match as one result (``match_scoring = "match"``): the match's first player is game 1's Black."""
    rounds, pairings = _complete_pairings(table, through)
    entries: dict[int, list[RoundEntry]] = {
        p.start_no: [RoundEntry(None, None, ResultKind.ZPB)] * rounds for p in table.players
    }
    matches: dict[tuple[int, int], list[Any]] = {}
    for pairing in pairings:
        matches.setdefault((pairing.round_no, pairing.board), []).append(pairing)
    scoring = _tournament(table, 0, {p.start_no: [] for p in table.players}).scoring
    for (round_no, _), games in matches.items():
        first = min(games, key=lambda p: p.game_no)
        if first.white_start_no is None:
            entries[first.black_start_no][round_no - 1] = RoundEntry(None, None, ResultKind.PAB)
            continue
        ordered = []
        for game in games:
            results = pairing_results(table, game)
            assert results is not None
            ordered.append(results if game.black_start_no == first.black_start_no else (results[1], results[0]))
        mine, theirs = match_kinds(ordered, scoring)
        entries[first.black_start_no][round_no - 1] = RoundEntry(first.white_start_no, "w", mine)
        entries[first.white_start_no][round_no - 1] = RoundEntry(first.black_start_no, "b", theirs)
    return _tournament(table, rounds, entries)


def section_tournament(table: SectionTable, through: int | None = None) -> Tournament:
    """The section as an engine tournament after round ``through`` (by default the last complete round); asking
    for a round that is not complete is a ConflictError naming its boards without a result.  A match of several
    games (regulations 2023 VII(2)) is each game as its own round (``match_scoring = "games"``), or one result a
    round (``"match"``)."""
    by_match = table.games_per_match > 1 and table.match_scoring == "match"
    tournament = matches_tournament(table, through) if by_match else games_tournament(table, through)
    return _annulled(table, tournament, 1 if by_match else table.games_per_match)


def _annulled(table: SectionTable, tournament: Tournament, per: int) -> Tournament:
    """24.4.2: in a round robin, every result of a player who withdrew having played fewer than half of the
    opponents is annulled (and the player leaves the table), once the standings are after the withdrawal."""
    if table.system != "round-robin":
        return tournament
    for start_no, after in sorted(table.withdrawals.items()):
        if after * per > tournament.rounds or start_no not in tournament.by_start_no():
            continue
        entrant = tournament.entrant(start_no)
        played = sum(1 for r in range(1, after * per + 1) if entrant.round(r).opponent is not None)
        if 2 * played < len(tournament.entrants) - 1:
            tournament = withdraw(tournament, start_no, after * per)
    return tournament


def section_standings(table: SectionTable, through: int | None = None) -> tuple[Tournament, list[Standing]]:
    tournament = section_tournament(table, through)
    return tournament, standings(tournament, table.tiebreaks)


def standings_csv(tournament: Tournament, table: list[Standing], section: SectionTable | None = None) -> str:
    """Rank, start number, name, team, rating, points, each tie-break, then each round as in the results table
    ("12w1", "+7", "-3": 28.3).  Names and teams are neutralised (:func:`spreadsheet_text`); the other cells are the
    service's own numbers and result codes.  A section of matches (regulations 2023 VII(2)) has a column per game
    ("round 1 game 2"); scored by match, the round's column is the match and its games follow the rounds."""
    labels = [label for label in (table[0].tiebreaks if table else {}) if label != "PTS"]
    per = section.games_per_match if section is not None else 1
    by_match = section is not None and per > 1 and section.match_scoring == "match"
    games = games_tournament(section, tournament.rounds) if section is not None and by_match else None
    if per > 1 and not by_match:
        columns = [f"round {r} game {g}" for r in range(1, tournament.rounds // per + 1) for g in range(1, per + 1)]
    else:
        columns = [f"round {r}" for r in range(1, tournament.rounds + 1)]
    if games is not None:
        columns += [f"round {r} game {g}" for r in range(1, tournament.rounds + 1) for g in range(1, per + 1)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["rank", "start_no", "name", "team", "rating", "points", *labels, *columns])
    game_rows = games.by_start_no() if games is not None else {}
    for standing, cells in zip(table, results_table(tournament, table), strict=True):
        entrant = standing.entrant
        values = [standing.tiebreaks.get(label) for label in labels]
        played = game_rows.get(entrant.start_no)
        extra = [played.round(r).cell for r in range(1, games.rounds + 1)] if played and games else []
        writer.writerow([
            standing.rank, entrant.start_no, spreadsheet_text(entrant.name), spreadsheet_text(entrant.team),
            entrant.rating or "",
            format_score(standing.points), *("" if v is None else format_score(v) for v in values), *cells[3:-1],
            *extra,
        ])  # fmt: skip
    return out.getvalue()


def standings_trf(tournament: Tournament, table: list[Standing]) -> str:
    """TRF-16: a round's column per game when a match's games score each (one per round when scored by match:
    TRF-16 has no place for a match's games)."""
    return write_trf(tournament, table)


def standings_round(table: SectionTable, tournament: Tournament) -> int:
    """The section's round the tournament is after (its rounds are games when a match's games score each)."""
    if table.games_per_match > 1 and table.match_scoring != "match":
        return tournament.rounds // table.games_per_match
    return tournament.rounds


ENTRY_RESULTS: Final = {
    "1-0": "1-0", "0-1": "0-1", "½-½": "½-½", "+/-": "+-", "-/+": "-+", "-/-": "--", "0-0": "0-0",
}  # fmt: skip
"""A stored pairing result (TRF's notation) as the results-entry route writes it (28.3)."""
_KIND_RESULTS: Final = {kinds: ENTRY_RESULTS[stored] for stored, kinds in _PAIRING_RESULTS.items()}


def result_text(results: tuple[ResultKind, ResultKind] | None) -> str | None:
    """A pairing's (first, second) results as "1-0", "½-½", "+-"… (None: no result, or none the route can write)."""
    return None if results is None else _KIND_RESULTS.get(results)


def section_pairings(table: SectionTable) -> list[dict[str, Any]]:
    """Every pairing of the section with its result, where it comes from (``entered`` with the pairing, ``game``:
    the service's verdict) and the linked game's own result."""
    names = {p.start_no: p.name for p in table.players}
    rows = []
    for pairing in table.pairings:
        game = table.games.get(pairing.id)
        white = pairing.white_start_no
        rows.append({
            "round": pairing.round_no, "board": pairing.board, "match_game": pairing.game_no,
            "black": {"start_no": pairing.black_start_no, "name": names.get(pairing.black_start_no, "")},
            "white": None if white is None else {"start_no": white, "name": names.get(white, "")},
            "result": "bye" if white is None else result_text(pairing_results(table, pairing)),
            "source": "bye" if white is None else "entered" if pairing.result else "game" if game else None,
            "game_result": result_text(game), "linked": pairing.id in table.games,
        })  # fmt: skip
    return rows


def standings_json(table: SectionTable, through: int | None = None) -> dict[str, Any]:
    """The standings as the CSV has them (place, start number, name, team, rating, points, each tie-break by name;
    scores written as in the CSV), with the tie-break names, the round they are after, the last complete round, and
    every pairing with its result (for the results entry, 28)."""
    tournament, standing = section_standings(table, through)
    names = {p.start_no: p.name for p in table.players}
    labels = [label for label in table.tiebreaks.split(",") if label and label != "PTS"]
    if standing:
        labels = [label for label in standing[0].tiebreaks if label != "PTS"]
    rows = []
    for row in standing:
        values = {label: row.tiebreaks.get(label) for label in labels}
        rows.append({
            "place": row.rank, "start_no": row.entrant.start_no, "name": row.entrant.name, "team": row.entrant.team,
            "rating": row.entrant.rating, "points": format_score(row.points),
            "tiebreaks": {label: None if v is None else format_score(v) for label, v in values.items()},
        })  # fmt: skip
    return {
        "event": table.event_name, "section": table.slug, "section_name": table.name, "system": table.system,
        "round": standings_round(table, tournament), "rounds": table.rounds, "games_per_match": table.games_per_match,
        "match_scoring": table.match_scoring, "complete": complete_rounds(table), "tiebreaks": labels,
        "rows": rows, "pairings": section_pairings(table),
        "play_offs": play_offs_needed(table, standing, complete_rounds(table) >= table.rounds),
        "withdrawals": [{"start_no": no, "name": names.get(no, ""), "after_round": after, "article": "24.4"}
                        for no, after in sorted(table.withdrawals.items())],
    }  # fmt: skip


# --- What the routes read -------------------------------------------------------------------------------------------


def read_timeline(connection: Connection, game_id: int) -> dict[str, Any]:
    info = read_game(connection, game_id)
    incidents = read_incidents(connection, IncidentFilter(game=game_id), limit=None)
    return game_timeline(info, read_events(connection, game_id), incidents)


def read_record(connection: Connection, game_id: int, kind: str) -> str:
    """The game's record as RIF or PSQ (``kind``)."""
    info = read_game(connection, game_id)
    replayed = replay_game(info, read_events(connection, game_id))
    return psq_text(info, replayed) if kind == "psq" else rif_text(info, replayed.state)


def read_history(
    connection: Connection, player_ref: str, event: str | None, states: Mapping[int, Adjudication]
) -> dict[str, Any]:
    """A player's history, in one event or across all; NotFoundError for a player the service has never seen."""
    incidents = read_incidents(connection, IncidentFilter(player=player_ref, event=event), limit=None)
    infos = read_player_games(connection, player_ref)
    registrations = read_registrations(connection, player_ref)
    if event is not None:
        infos = [i for i in infos if i.placement is not None and i.placement.event == event]
        registrations = [r for r in registrations if r["event"] == event]
    if not infos and not incidents and not registrations:
        raise NotFoundError(f"no player {player_ref!r}" + (f" in event {event!r}" if event else ""))
    games = [(info, states[info.id]) for info in infos if info.id in states]
    return player_history(player_ref, registrations, games, incidents)
