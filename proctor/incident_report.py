"""The incident report as a model: what it says, in one language, built from what the service stored; rendered as
HTML and PDF by proctor.report_rendering.

The report reads like one: a summary table first (per player, or game, and kind: cases, occurrences, total duration,
first and last time, outcome), then one section per case (proctor.cases) with its facts, each occurrence, its
evidence (stills shown, every file with its SHA-256 checked against the file as kept), the actions taken (who, when,
what, in words) and the verdict with its article; then a signature block for the chief arbiter.  Every time is in
the event's zone, which the report names (on every page of the PDF, and of the printed HTML).

:func:`read_report_source` reads; :func:`build_report` is pure: the same source, language and time always give the
same report.  The incidents are those the filter passes (as the incident list's); a case is shown with the
occurrences among them (a report on one game shows a player's case with that game's occurrences only).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from proctor.case_views import read_case_files
from proctor.cases import ActionTaken, CaseFile, ended_after_ms
from proctor.models import Tournament
from proctor.report_words import DEFAULT_LANGUAGE, LANGUAGES, Words
from proctor.review import GameInfo, IncidentFilter, evidence_files, read_games, read_incidents, read_report_context
from proctor.server_words import KINDS as SERVICE_WORDS_KINDS
from proctor.server_words import IncidentFacts, incident_words
from proctor.time_zones import event_zone, local_time, zone_label

STILL_TYPES: Final = (".jpg", ".jpeg")
MAX_STILL_BYTES: Final = 2_000_000
"""A still larger than this is listed with its hash but not shown."""
MAX_STILLS_PER_CASE: Final = 6
MAX_STILLS: Final = 150
"""The most stills one report shows (a whole event's report stays printable); the others are listed with their
hash."""
PROMPT_KINDS: Final = frozenset({"ear-check", "room-scan", "pan-check"})
"""The incidents a camera prompt raises (proctor.camera.Prompt): their summary is the service's words, not the
arbiter's who prompted."""
_RESOLVED: Final = {"confirm": "confirmed", "dismiss": "dismissed"}
"""An incident's last action as the status of a case of its own (an incident that joined no case)."""


# --- The model ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryRow:
    who: str
    kind: str
    cases: int
    occurrences: int
    duration: str
    first: str
    last: str
    outcome: str


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    name: str
    sha256: str
    check: str
    """Whether the hash matches the file as kept, in words."""
    incident: int
    still: bytes | None = None
    """The still itself (a JPEG), shown in the report."""


@dataclass(frozen=True, slots=True)
class ActionLine:
    when: str
    who: str
    what: str


@dataclass(frozen=True, slots=True)
class CaseSection:
    heading: str
    facts: tuple[tuple[str, str], ...]
    occurrences: tuple[tuple[str, str], ...]
    """(when, what)."""
    evidence: tuple[EvidenceItem, ...]
    actions: tuple[ActionLine, ...]
    verdict: str


@dataclass(frozen=True, slots=True)
class SignatureBlock:
    heading: str
    name_label: str
    name: str
    """The event's chief arbiter (its file's ``[[arbiters]]`` with role ``chief``), or empty: written in by hand."""
    date_label: str
    sign_label: str


@dataclass(frozen=True, slots=True)
class IncidentReport:
    lang: str
    words: Words
    title: str
    """The event's name (user data), or the words for all events."""
    heading: str
    generated: str
    zone_line: str
    """The time zone of every time in the report, named: "时间：Asia/Shanghai（UTC+08:00），24 小时制"."""
    summary: tuple[SummaryRow, ...]
    sections: tuple[CaseSection, ...]
    signature: SignatureBlock


# --- What the report is built from ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MediaFile:
    """An evidence file as kept: its SHA-256 now, and its bytes when it is a still small enough to show."""

    sha256: str
    still: bytes | None = None


@dataclass(frozen=True, slots=True)
class ReportSource:
    title: str
    """The event's name; empty for a report on several events."""
    where: IncidentFilter
    incidents: tuple[dict[str, Any], ...]
    cases: tuple[CaseFile, ...]
    names: Mapping[str, str]
    games: Mapping[int, GameInfo]
    zone: str
    chief: str
    media: Mapping[str, MediaFile]
    """The evidence files still kept, by name (a file not in it is gone: retention, or never stored)."""


def language_of(query: Mapping[str, str]) -> str:
    """``?lang=zh`` (the default) or ``?lang=en``; ValueError for anything else."""
    lang = query.get("lang") or DEFAULT_LANGUAGE
    if lang not in LANGUAGES:
        raise ValueError(f"query parameter 'lang' must be one of {', '.join(LANGUAGES)}")
    return lang


# --- Building -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Group:
    """A case with the occurrences the filter passed (or an incident that joined no case, alone)."""

    case_id: int | None
    kind: str
    player: str | None
    incidents: tuple[dict[str, Any], ...]
    actions: tuple[ActionTaken, ...]
    status: str
    follows: int | None = None
    follows_status: str | None = None

    @property
    def first(self) -> int:
        return min(int(i["at"]) for i in self.incidents)

    @property
    def last(self) -> int:
        return max(int(i["at"]) for i in self.incidents)

    @property
    def game(self) -> int | None:
        games = [i for i in self.incidents if i["game"] is not None]
        return max(games, key=lambda i: (i["at"], i["id"]))["game"] if games else None


def _groups(incidents: Sequence[dict[str, Any]], cases: Sequence[CaseFile]) -> list[_Group]:
    by_id = {i["id"]: i for i in incidents}
    groups: list[_Group] = []
    grouped: set[int] = set()
    for case in cases:
        shown = tuple(by_id[o.incident] for o in case.occurrences if o.incident in by_id and o.incident not in grouped)
        if not shown:
            continue
        grouped.update(i["id"] for i in shown)
        groups.append(_Group(case.id, case.kind, case.player_ref, shown, case.actions, case.status, case.follows,
                             case.follows_status))  # fmt: skip
    for incident in incidents:
        if incident["id"] not in grouped:
            status = _RESOLVED.get(incident["status"], "open")
            groups.append(_Group(None, incident["kind"], incident.get("player"), (incident,), (), status))
    groups.sort(key=lambda g: (g.first, g.case_id or 0))
    return groups


def _duration_ms(incident: dict[str, Any]) -> int | None:
    known = [d for a in incident["actions"] if a["action"] == "note" and (d := ended_after_ms(a["arbiter"], a["note"]))]
    return sum(known) if known else None


def build_report(source: ReportSource, lang: str, now: int) -> IncidentReport:
    w = Words(lang)
    zone = source.zone
    groups = _groups(source.incidents, source.cases)
    builder = _Builder(source, w)
    sections = tuple(builder.section(g) for g in groups)
    occurrences = sum(len(g.incidents) for g in groups)
    generated = w("generated", at=local_time(now, zone), filters=builder.filters(), cases=len(groups),
                  occurrences=occurrences)  # fmt: skip
    signature = SignatureBlock(w("signature"), w("signature.name"), source.chief, w("signature.date"),
                               w("signature.sign"))  # fmt: skip
    title = source.title or w("all.events")
    return IncidentReport(
        lang=w.lang, words=w, title=title, heading=w("title", title=title), generated=generated,
        zone_line=w("zone", zone=zone_label(zone, now)), summary=builder.summary(groups), sections=sections,
        signature=signature,
    )  # fmt: skip


class _Builder:
    def __init__(self, source: ReportSource, words: Words) -> None:
        self.source = source
        self.w = words
        self.stills_left = MAX_STILLS

    # --- Small words ----------------------------------------------------------------------------------------------

    def at(self, ms: int) -> str:
        return local_time(ms, self.source.zone)

    def name(self, ref: str | None) -> str:
        if not ref:
            return self.w("who.none")
        return self.source.names.get(ref) or ref

    def game_label(self, game_id: int) -> str:
        info = self.source.games.get(game_id)
        if info is None:
            return self.w("who.game.only", game=game_id)
        p = info.placement
        if p is None:
            return self.w("game.label.bare", id=info.id, platform=info.platform, external=info.external_id)
        return self.w("game.label", id=info.id, platform=info.platform, external=info.external_id, event=p.event,
                      section=p.section, round=p.round_no, board=p.board)  # fmt: skip

    def who(self, group: _Group) -> str:
        if group.player:
            return self.name(group.player)
        game = group.game
        if game is None:
            return self.w("who.none")
        info = self.source.games.get(game)
        if info is not None and info.placement is not None:
            return self.w("who.game", board=info.placement.board, game=game)
        return self.w("who.game.only", game=game)

    def actor(self, name: str, role: str) -> str:
        if name.startswith("detector"):
            return self.w("who.detector")
        if name == "service" or role == "service":
            return self.w("who.service")
        return self.w.paren(name, self.w.label("role", role))

    def source_word(self, source: str) -> str:
        return self.w.label("source", source.split(":", maxsplit=1)[0])

    def result(self, result: str | None) -> str:
        return self.w(f"result.{result}") if result and self.w.has(f"result.{result}") else self.w("result.none")

    def filters(self) -> str:
        where, w = self.source.where, self.w
        parts = []
        for name in ("event", "game", "kind", "player", "status", "source", "article", "q"):
            value = getattr(where, name)
            if value is None:
                continue
            text = str(value)
            if name == "kind":
                text = w.kind(value)
            elif name == "player":
                text = self.name(value)
            elif name == "game":
                text = self.game_label(value)
            elif name == "status":
                text = w.label("status", _RESOLVED.get(value, value))
            elif name == "source":
                text = self.source_word(value) + (value[value.index(":") :] if ":" in value else "")
            parts.append(f"{w(f'filter.{name}')} {text}")
        parts += [f"{w(f'filter.{name}')} {self.at(value)}" for name in ("since", "until")
                  if (value := getattr(where, name)) is not None]  # fmt: skip
        return w.separator.join(parts) or w("filters.none")

    # --- An occurrence in words -----------------------------------------------------------------------------------

    def occurrence(self, incident: dict[str, Any]) -> str:
        w, kind, evidence = self.w, incident["kind"], incident.get("evidence") or {}
        source = incident["source"] or ""
        summary = incident["summary"] or ""
        if (
            kind == "clock-mismatch"
            and evidence.get("platform_ms") is not None
            and evidence.get("service_ms") is not None
        ):
            d = int(evidence["platform_ms"]) - int(evidence["service_ms"])
            platform, service = _clock(evidence["platform_ms"]), _clock(evidence["service_ms"])
            sign = "−" if d < 0 else "+"
            text = w("occurrence.clock-mismatch", seq=evidence.get("seq", "?"), platform=platform, service=service,
                     d=sign + _clock(abs(d)))  # fmt: skip
        elif kind == "feed-gap" and evidence.get("missing_seq") is not None:
            text = w("occurrence.feed-gap", seq=evidence["missing_seq"], n=len(evidence.get("held") or []))
        elif isinstance(evidence.get("verdict"), dict):
            text = self.pending_facts(evidence["verdict"])
        elif source.startswith("arbiter:") and kind not in PROMPT_KINDS:
            # An arbiter's own words (user data); a camera prompt's summary is the service's.
            text = w("occurrence.arbiter", who=source.split(":", 1)[1], summary=summary)
        elif source == "player" and ": " in summary:
            text = w("occurrence.player", summary=summary.split(": ", 1)[1])  # the player's reason, as written
        elif w.lang == "en":
            text = summary or w.kind(kind)
        elif kind in SERVICE_WORDS_KINDS:
            # The service's own summary in Chinese (proctor.server_words), said from its facts.
            text = incident_words(IncidentFacts.of(incident))[w.lang]
        else:
            text = w.kind(kind)
        facts = [w("occurrence.source", source=self.source_word(source))]
        duration = _duration_ms(incident)
        if duration is not None:
            facts.append(w("occurrence.duration", d=w.duration(duration)))
        if incident.get("confidence") is not None:
            facts.append(w("occurrence.confidence", c=f"{incident['confidence']:.2f}"))
        return w("occurrence.facts", text=text, facts=w.comma.join(facts))

    def pending_facts(self, facts: dict[str, Any]) -> str:
        w = self.w
        lines = []
        for entry in facts.get("players", []):
            why = str(entry.get("why", ""))
            if not w.has(f"absent.{why}"):
                continue
            colour = w.label("colour", str(entry.get("colour", "")))
            absent = w.duration(int(entry.get("absent_ms", 0)))
            lines.append(w(f"absent.{why}", colour=colour, name=self.name(entry.get("player")), d=absent))
        winner = "double-loss" if facts.get("double_loss") else facts.get("winner")
        verdict = w("occurrence.verdict", reason=w.label("reason", str(facts.get("termination", ""))),
                    article=w.article(facts.get("article")), winner=self.result(winner))  # fmt: skip
        return w.separator.join([*lines, verdict])

    # --- Actions and verdicts -------------------------------------------------------------------------------------

    def penalty(self, verdict: dict[str, Any]) -> str:
        w = self.w
        text = w("outcome.penalty", penalty=w.label("penalty", str(verdict.get("penalty", ""))),
                 player=self.name(verdict.get("player")), articles=w.article(verdict.get("articles")))  # fmt: skip
        if verdict.get("occurrence") and verdict.get("offence"):
            text += w.comma + w("outcome.step", n=verdict["occurrence"], offence=verdict["offence"])
        result = verdict.get("game_result")
        if isinstance(result, dict):
            winner = "double-loss" if result.get("double_loss") else result.get("winner") or "draw"
            described = self.verdict_result({**result, "result": winner})
            text += w.separator + w("outcome.result", result=described)
        return text

    def incident_action(self, incident: dict[str, Any], action: dict[str, Any]) -> ActionLine:
        w, kind, note = self.w, action["action"], action["note"] or ""
        iid = incident["id"]
        why = note
        if kind == "note":
            ended = ended_after_ms(action["arbiter"], note)
            what = w("action.ended", d=w.duration(ended)) if ended is not None else w("action.note", note=note)
            why = ""
        elif kind == "penalty" and isinstance(action.get("verdict"), dict):
            what = w("action.penalty", id=iid, verdict=self.penalty(action["verdict"]))
        elif kind == "evidence":
            added = (action.get("verdict") or {}).get("evidence") or {}
            what = w("action.evidence", files=", ".join(str(m) for m in added.get("media", [])))
        elif kind in ("confirm", "dismiss"):
            what = w(f"action.{kind}", id=iid)
        else:
            what = kind
        if why:
            what = w("action.because", what=what, why=why)
        return ActionLine(self.at(action["at"]), self.actor(action["arbiter"], action["role"]), what)

    def case_action(self, action: ActionTaken) -> ActionLine:
        w, detail = self.w, action.detail
        if action.action == "escalate":
            step = str(detail.get("step", ""))
            if step.startswith("duration:") and str(detail.get("threshold_ms", "")).isdigit():
                what = w("action.escalate.duration", n=int(detail["threshold_ms"]) // 60_000)
            elif step == "confirmation-deadline":
                what = w("action.escalate.deadline")
            else:
                what = w("action.escalate")
        elif action.action in ("confirm", "decide") and detail.get("reason"):
            described = self.verdict_result(detail)
            what = w("action.case.confirm.verdict" if action.action == "confirm" else "action.case.decide",
                     result=described)  # fmt: skip
        elif w.has(f"action.case.{action.action}"):
            what = w(f"action.case.{action.action}", result="")
        else:
            what = action.action
        if action.note:
            what = w("action.because", what=what, why=action.note)
        return ActionLine(self.at(action.at), self.actor(action.arbiter, action.role), what)

    def verdict_result(self, detail: dict[str, Any]) -> str:
        w = self.w
        reason, article = w.label("reason", str(detail.get("reason", ""))), w.article(detail.get("article"))
        return w.paren(self.result(detail.get("result")), reason + w.comma + article)

    def verdict(self, group: _Group) -> str:
        """The latest penalty given on one of its occurrences; else how the case was closed (a pending verdict's
        result); else its status; with the article."""
        w = self.w
        penalties = _penalties(group)
        if penalties:
            return self.penalty(penalties[-1])
        closing = [a for a in group.actions if a.action in ("confirm", "overrule", "decide", "dismiss")]
        article = w.article(next((i["article"] for i in reversed(group.incidents) if i["article"]), None))
        if closing and closing[-1].detail.get("reason"):
            return w.label("outcome", group.status) + w.colon + self.verdict_result(closing[-1].detail)
        text = w.label("outcome", group.status)
        if closing and closing[-1].note:
            text += w.colon + closing[-1].note
        return text + w.comma + article

    def outcome(self, groups: Sequence[_Group]) -> str:
        """A summary row's outcome: each case's verdict, short (a penalty, else its status)."""
        seen: list[str] = []
        for group in groups:
            penalties = _penalties(group)
            if penalties:
                given = penalties[-1]
                penalty = self.w.label("penalty", str(given.get("penalty", "")))
                text = self.w.paren(penalty, self.w.article(given.get("articles")))
            else:
                text = self.w.label("status", group.status)
            if text not in seen:
                seen.append(text)
        return self.w.separator.join(seen)

    # --- The parts ------------------------------------------------------------------------------------------------

    def summary(self, groups: Sequence[_Group]) -> tuple[SummaryRow, ...]:
        rows: dict[tuple[str, str], list[_Group]] = {}
        for group in groups:
            rows.setdefault((self.who(group), group.kind), []).append(group)
        out = []
        for (who, kind), members in sorted(rows.items(), key=lambda item: (item[0][0], item[0][1])):
            incidents = [i for g in members for i in g.incidents]
            durations = [d for i in incidents if (d := _duration_ms(i)) is not None]
            out.append(SummaryRow(
                who=who, kind=self.w.kind(kind), cases=len(members), occurrences=len(incidents),
                duration=self.w.duration(sum(durations)) if durations else "—",
                first=self.at(min(g.first for g in members)), last=self.at(max(g.last for g in members)),
                outcome=self.outcome(members),
            ))  # fmt: skip
        return tuple(out)

    def section(self, group: _Group) -> CaseSection:
        w = self.w
        who = self.who(group)
        kind = w.kind(group.kind)
        if group.case_id is not None:
            heading = w("case.heading", id=group.case_id, kind=kind, who=who)
        else:
            heading = w("incident.heading", id=group.incidents[0]["id"], kind=kind, who=who)
        articles = sorted({i["article"] for i in group.incidents if i["article"]})
        durations = [d for i in group.incidents if (d := _duration_ms(i)) is not None]
        facts: list[tuple[str, str]] = [(w("fact.kind"), kind), (w("fact.article"), w.article(", ".join(articles)))]
        if group.player:
            facts += [(w("fact.player"), self.name(group.player)), (w("fact.platform_id"), group.player)]
        games = sorted({i["game"] for i in group.incidents if i["game"] is not None})
        if games:
            facts.append((w("fact.game"), w.separator.join(self.game_label(g) for g in games)))
        facts += [
            (w("fact.occurrences"), str(len(group.incidents))),
            (w("fact.duration"), w.duration(sum(durations)) if durations else "—"),
            (w("fact.first"), self.at(group.first)), (w("fact.last"), self.at(group.last)),
            (w("fact.status"), w.label("status", group.status)),
        ]  # fmt: skip
        if group.follows is not None:
            status = w.label("status", group.follows_status or "dismissed")
            facts.append((w("fact.follows"), w("fact.follows.value", id=group.follows, status=status)))
        occurrences = tuple((self.at(i["at"]), self.occurrence(i)) for i in group.incidents)
        actions = [(a["at"], self.incident_action(i, a)) for i in group.incidents for a in i["actions"]]
        actions += [(a.at, self.case_action(a)) for a in group.actions]
        actions.sort(key=lambda pair: pair[0])
        return CaseSection(heading, tuple(facts), occurrences, self.evidence(group), tuple(a for _, a in actions),
                           self.verdict(group))  # fmt: skip

    def evidence(self, group: _Group) -> tuple[EvidenceItem, ...]:
        w = self.w
        items: list[EvidenceItem] = []
        stills = 0
        for incident in group.incidents:
            for name, digest in evidence_files(incident):
                kept = self.source.media.get(name)
                if kept is None:
                    check = w("check.missing")
                elif not digest:
                    check = w("check.unknown")
                else:
                    check = w("check.matches") if kept.sha256 == digest else w("check.differs")
                shown = kept is not None and stills < MAX_STILLS_PER_CASE and self.stills_left > 0
                still = kept.still if shown and kept is not None else None
                stills += still is not None
                self.stills_left -= still is not None
                items.append(EvidenceItem(name, digest, check, incident["id"], still))
        return tuple(items)


def _penalties(group: _Group) -> list[dict[str, Any]]:
    """The penalties given on the group's occurrences (their verdicts), in order."""
    return [a["verdict"] for i in group.incidents for a in i["actions"]
            if a["action"] == "penalty" and isinstance(a.get("verdict"), dict)]  # fmt: skip


def _clock(ms: Any) -> str:
    total = max(0, int(ms) // 1000)
    h, m, s = total // 3600, (total % 3600) // 60, total % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


# --- Reading --------------------------------------------------------------------------------------------------------


def read_media(folder: str, names: Sequence[str]) -> dict[str, MediaFile]:
    """The evidence files still kept under ``folder`` (``MEDIA_DIR``), hashed; a still's bytes when it is a JPEG that
    opens (Pillow, fpdf2's dependency) and is small enough to show."""
    from PIL import Image  # noqa: PLC0415 (loaded with the first report only)

    root = Path(folder).resolve()
    kept: dict[str, MediaFile] = {}
    for name in dict.fromkeys(names):
        try:
            path = (root / name).resolve()
            if not path.is_relative_to(root) or not path.is_file():
                continue
            data = path.read_bytes()
        except (OSError, ValueError):
            continue
        still = None
        if path.suffix.lower() in STILL_TYPES and len(data) <= MAX_STILL_BYTES:
            try:
                with Image.open(io.BytesIO(data)) as image:
                    image.verify()
                still = data
            except Exception:  # Pillow raises several kinds for a file that is no usable image
                still = None
        kept[name] = MediaFile(hashlib.sha256(data).hexdigest(), still)
    return kept


def read_chief(connection: Connection, slug: str | None) -> str:
    """The chief arbiter the event's file names (the event filtered on, else the latest loaded); empty if none."""
    query = select(col(Tournament.config)).order_by(col(Tournament.id).desc())
    if slug is not None:
        query = query.where(col(Tournament.slug) == slug)
    row = connection.execute(query.limit(1)).first()
    arbiters = ((row[0] if row else None) or {}).get("arbiters") or []
    chiefs = [str(a.get("name", "")) for a in arbiters if isinstance(a, dict) and a.get("role") == "chief"]
    return chiefs[0] if chiefs else ""


def read_report_source(connection: Connection, where: IncidentFilter, media_dir: str) -> ReportSource:
    incidents = read_incidents(connection, where, limit=None)
    title, names, _ = read_report_context(connection, where, incidents)
    ids = {i["id"] for i in incidents}
    cases = tuple(
        case for case in read_case_files(connection, kind=where.kind, player=where.player)
        if any(o.incident in ids for o in case.occurrences)
    )  # fmt: skip
    games = read_games(connection, sorted({i["game"] for i in incidents if i["game"] is not None}))
    media = read_media(media_dir, [name for i in incidents for name, _ in evidence_files(i)])
    zone = event_zone(connection, where.event)
    return ReportSource(title, where, tuple(incidents), cases, names, games, zone, read_chief(connection, where.event),
                        media)  # fmt: skip


def read_report(connection: Connection, where: IncidentFilter, now: int, lang: str, media_dir: str) -> IncidentReport:
    return build_report(read_report_source(connection, where, media_dir), lang, now)
