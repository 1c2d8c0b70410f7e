"""FIDE TRF (Tournament Report File): read and write the individual part (TRF-16, with the TRF-26 headers that
matter here: ``162`` scoring, ``202`` tie-breaks).

Player lines (``001``), 1-based columns: start number 5–8, sex 10, title 11–13, name 15–47, rating 49–52, federation
54–56, FIDE id 58–68, birth date 70–79, points 81–84, rank 86–89; then one 10-column block per round from column 92:
opponent 92–95 (``0000`` for none), colour 97 (``w``/``b``/``-``), result 99 (``1 = 0 + - W D L H F U Z``, blank =
zero-point bye).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from engine.standings import (
    Entrant,
    ResultKind,
    RoundEntry,
    Scoring,
    Standing,
    StandingsError,
    System,
    Tournament,
    format_score,
)


class TrfError(StandingsError):
    """A TRF line that cannot be read; the message starts with its line number."""


@dataclass(frozen=True, slots=True)
class TrfFile:
    tournament: Tournament
    headers: dict[str, list[str]] = field(default_factory=dict)
    """Other lines by their three-character code, in order."""
    tiebreaks: str | None = None
    """The tie-break list declared in header 202 (TRF-26), if any."""
    player_lines: dict[int, int] = field(default_factory=dict)
    """Each start number's line number in the file."""


_RESULTS = {kind.value: kind for kind in ResultKind if kind is not ResultKind.ANNULLED}
_COMPLEMENT = {
    ResultKind.WIN: ResultKind.LOSS,
    ResultKind.LOSS: ResultKind.WIN,
    ResultKind.DRAW: ResultKind.DRAW,
    ResultKind.FORFEIT_WIN: ResultKind.FORFEIT_LOSS,
    ResultKind.FORFEIT_LOSS: ResultKind.FORFEIT_WIN,
    ResultKind.UNRATED_WIN: ResultKind.UNRATED_LOSS,
    ResultKind.UNRATED_LOSS: ResultKind.UNRATED_WIN,
    ResultKind.UNRATED_DRAW: ResultKind.UNRATED_DRAW,
}
_BOTH_LOSE: Final = frozenset({ResultKind.LOSS, ResultKind.FORFEIT_LOSS, ResultKind.UNRATED_LOSS})
"""A game both players lost shows a loss on both lines: both declared lost (15.3), both absent (14.3)."""


def _field(line: str, start: int, end: int) -> str:
    """Columns ``start``–``end`` (1-based, inclusive), stripped."""
    return line[start - 1 : end].strip()


def _number(text: str, what: str, number: int) -> int:
    if not text.isdigit():
        raise TrfError(f"line {number}: {what} {text!r} is not a number")
    return int(text)


def _score(text: str, what: str, number: int) -> Fraction:
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise TrfError(f"line {number}: {what} {text!r} is not a score") from None


def _parse_player(line: str, number: int) -> Entrant:
    start_no = _number(_field(line, 5, 8), "start number", number)
    name = _field(line, 15, 47)
    if not name:
        raise TrfError(f"line {number}: player {start_no} has no name (columns 15–47)")
    rating_text = _field(line, 49, 52)
    points_text = _field(line, 81, 84)
    rank_text = _field(line, 86, 89)
    rounds = []
    column = 92
    while column <= len(line.rstrip()):
        block = line[column - 1 : column + 9].ljust(10)
        opponent_text, color, result = block[0:4].strip(), block[5], block[7]
        round_no = (column - 92) // 10 + 1
        if result not in _RESULTS and result != " ":
            raise TrfError(f"line {number}: round {round_no}: unknown result code {result!r}")
        kind = _RESULTS.get(result, ResultKind.ZPB)
        opponent = _number(opponent_text, f"round {round_no} opponent", number) if opponent_text else 0
        if color not in "wb- ":
            raise TrfError(f"line {number}: round {round_no}: colour {color!r} is not w, b or -")
        if opponent and kind in (ResultKind.PAB, ResultKind.FPB, ResultKind.HPB, ResultKind.ZPB):
            raise TrfError(f"line {number}: round {round_no}: a bye ({result!r}) cannot have an opponent")
        if not opponent and kind.played:
            raise TrfError(f"line {number}: round {round_no}: a played result needs an opponent")
        rounds.append(RoundEntry(opponent or None, color if color in "wb" else None, kind))
        column += 10
    return Entrant(
        start_no=start_no,
        name=name,
        rounds=tuple(rounds),
        rating=int(rating_text) if rating_text.isdigit() else 0,
        federation=_field(line, 54, 56),
        fide_id=_field(line, 58, 68),
        sex=_field(line, 10, 10),
        title=_field(line, 11, 13),
        birth=_field(line, 70, 79),
        declared_points=_score(points_text, "points", number) if points_text else None,
        declared_rank=int(rank_text) if rank_text.isdigit() else None,
    )


def _scoring(lines: list[str]) -> Scoring:
    """Header 162 (TRF-26): ``W 1.0 D 0.5 L 0.0``."""
    if not lines:
        return Scoring()
    values = dict(re.findall(r"\b([WDL])\s+(\d+(?:\.\d+)?)", lines[0]))
    return Scoring(
        win=Fraction(values.get("W", "1")), draw=Fraction(values.get("D", "0.5")), loss=Fraction(values.get("L", "0"))
    )


def _teams(lines: list[str]) -> dict[int, str]:
    """013 records: a team name (columns 5–36) and its members' start numbers."""
    members: dict[int, str] = {}
    for line in lines:
        name, numbers = line[:32].strip(), line[32:].split()
        for number in numbers:
            if number.isdigit():
                members[int(number)] = name
    return members


def read_trf(text: str, system: System | None = None) -> TrfFile:
    """Read a TRF file; a malformed line raises :class:`TrfError` naming its line number."""
    headers: dict[str, list[str]] = {}
    entrants: list[Entrant] = []
    lines_of: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("###"):
            continue
        code = line[:3]
        if code == "001":
            entrant = _parse_player(line, number)
            if entrant.start_no in lines_of:
                raise TrfError(f"line {number}: start number {entrant.start_no} is given twice")
            entrants.append(entrant)
            lines_of[entrant.start_no] = number
        elif re.fullmatch(r"\d\d\d|[A-Z]{3}|XXR|XXC|BB[WDLZFU]", code):
            headers.setdefault(code, []).append(line[4:].rstrip())
        else:
            raise TrfError(f"line {number}: {code!r} is not a TRF record code")
    if not entrants:
        raise TrfError("no player lines (001) in the file")
    by_number = {e.start_no: e for e in entrants}
    for entrant in entrants:
        for round_no, entry in enumerate(entrant.rounds, start=1):
            if entry.opponent is None:
                continue
            number = lines_of[entrant.start_no]
            if entry.opponent not in by_number:
                raise TrfError(f"line {number}: round {round_no}: opponent {entry.opponent} is not a player")
            other = by_number[entry.opponent].round(round_no)
            both_lost = entry.kind is other.kind and entry.kind in _BOTH_LOSE
            if other.opponent != entrant.start_no or (_COMPLEMENT.get(entry.kind) is not other.kind and not both_lost):
                raise TrfError(
                    f"line {number}: round {round_no}: player {entrant.start_no} has {entry.kind.value!r} against "
                    f"{entry.opponent}, whose line {lines_of[entry.opponent]} does not show the matching result"
                )
    teams = _teams(headers.get("013", []))
    if teams:
        entrants = [replace(e, team=teams.get(e.start_no, e.team)) for e in entrants]
    rounds = max(len(e.rounds) for e in entrants)
    declared = headers.get("142")
    if declared and declared[0].strip().isdigit():
        rounds = max(rounds, int(declared[0].strip()))
    if system is None:
        kind = " ".join(headers.get("092", [])).lower()
        system = System.ROUND_ROBIN if "round" in kind and "robin" in kind else System.SWISS
    name = headers.get("012", [""])[0].strip()
    tournament = Tournament(name, tuple(entrants), rounds, system, _scoring(headers.get("162", [])))
    tiebreaks = headers.get("202", [None])[0]
    return TrfFile(tournament, headers, tiebreaks.strip() if tiebreaks else None, lines_of)


def write_trf(tournament: Tournament, table: list[Standing] | None = None) -> str:
    """A TRF-16 file of the tournament, with points and ranks from ``table`` when given."""
    ranks = {s.entrant.start_no: s for s in table} if table else {}
    lines = [
        f"012 {tournament.name}",
        f"062 {len(tournament.entrants)}",
        f"092 {'Individual: Swiss-System' if tournament.system is System.SWISS else 'Individual: Round robin'}",
    ]
    scoring = tournament.scoring
    if scoring != Scoring():
        lines.append(f"162 W {float(scoring.win):.1f} D {float(scoring.draw):.1f} L {float(scoring.loss):.1f}")
    for entrant in sorted(tournament.entrants, key=lambda e: e.start_no):
        standing = ranks.get(entrant.start_no)
        points = standing.points if standing else entrant.declared_points
        rank = standing.rank if standing else entrant.declared_rank
        head = (
            f"001 {entrant.start_no:>4} {entrant.sex[:1]:1}{entrant.title[:3]:>3} {entrant.name[:33]:<33} "
            f"{entrant.rating or '':>4} {entrant.federation[:3]:<3} {entrant.fide_id[:11]:>11} "
            f"{entrant.birth[:10]:<10} "
            f"{format_score(points) if points is not None else '':>4} {rank or '':>4}"
        )
        blocks = []
        for r in range(1, tournament.rounds + 1):
            entry = entrant.round(r)
            if entry.kind is ResultKind.ANNULLED:
                blocks.append(" " * 8)
                continue
            opponent = f"{entry.opponent:>4}" if entry.opponent else "0000"
            color = entry.color or "-"
            code = entry.kind.value
            blocks.append(f"{opponent} {color} {code}")
        lines.append(head + "  " + "  ".join(blocks))
    return "\n".join(line.rstrip() for line in lines) + "\n"
