"""Results, scoring and tie-breaks of individual events (28, 29; FIDE C.07 as the notes define it).

Arithmetic is exact (``Fraction``).  Each round of each player keeps its *kind* (a played win, a forfeit, a bye of
each sort, absence), never a bare score: the unplayed-round rules of C.07 §16 depend on it, and the results table
shows forfeits as "+" and "-" (28.3).

Tie-breaks are named as in TRF-26 descriptors: ``PTS``, ``BH``, ``SB``, ``WIN``, ``WON``, ``DE``, with the modifiers
``/C1`` ``/C2`` (cut the 1 or 2 least significant values), ``/M1`` ``/M2`` (median: cut the lowest and the highest
one or two) and ``/P`` (forfeits count as played games).  ``DE`` is a ranking stage applied recursively to still-tied
groups, not a number per player.  Rules ``fide-2024`` (the 2023/2024 text, default) or ``fide-2026`` (its caps on
dummy opponents, §16.4).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from engine.errors import EngineError


class StandingsError(EngineError):
    """Bad tournament data, an unknown tie-break, or an impossible request."""


class ResultKind(enum.Enum):
    """What one round was for one player; the value is the TRF result code."""

    WIN = "1"
    DRAW = "="
    LOSS = "0"
    FORFEIT_WIN = "+"
    FORFEIT_LOSS = "-"
    UNRATED_WIN = "W"
    UNRATED_DRAW = "D"
    UNRATED_LOSS = "L"
    PAB = "U"
    """Pairing-allocated bye."""
    FPB = "F"
    """Full-point bye."""
    HPB = "H"
    """Half-point bye (requested)."""
    ZPB = "Z"
    """Zero-point bye: requested, absent, or every round after a withdrawal (C.07 16.1)."""
    ANNULLED = "A"
    """A game struck from the table (24.4.2: a round-robin player withdrew before half the games); counts for nothing.
    Written to TRF as a blank."""

    @property
    def played(self) -> bool:
        return self in _PLAYED

    @property
    def forfeit(self) -> bool:
        return self in (ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS)

    @property
    def voluntary_unplayed(self) -> bool:
        """A VUR (C.07 16.1): a requested half- or zero-point bye, or a forfeit loss."""
        return self in (ResultKind.HPB, ResultKind.ZPB, ResultKind.FORFEIT_LOSS)

    @property
    def took_part(self) -> bool:
        """The player took part in the round (a later such round makes an earlier requested bye category 3)."""
        return self.played or self in (ResultKind.FORFEIT_WIN, ResultKind.PAB, ResultKind.FPB)

    @property
    def with_win_points(self) -> bool:
        """Win points, with or without playing (C.07 7.1 WIN)."""
        return self in (ResultKind.WIN, ResultKind.UNRATED_WIN, ResultKind.FORFEIT_WIN, ResultKind.PAB, ResultKind.FPB)


_PLAYED: Final = frozenset(
    {
        ResultKind.WIN,
        ResultKind.DRAW,
        ResultKind.LOSS,
        ResultKind.UNRATED_WIN,
        ResultKind.UNRATED_DRAW,
        ResultKind.UNRATED_LOSS,
    }
)


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """One round of one player: the opponent's start number (None for byes), the colour and the kind."""

    opponent: int | None
    color: str | None
    kind: ResultKind

    @property
    def symbol(self) -> str:
        """As in the results table (28.3): "+" and "-" for results without play."""
        return {
            ResultKind.WIN: "1",
            ResultKind.DRAW: "½",
            ResultKind.LOSS: "0",
            ResultKind.UNRATED_WIN: "1",
            ResultKind.UNRATED_DRAW: "½",
            ResultKind.UNRATED_LOSS: "0",
            ResultKind.FORFEIT_WIN: "+",
            ResultKind.FORFEIT_LOSS: "-",
            ResultKind.PAB: "+",
            ResultKind.FPB: "+",
            ResultKind.HPB: "½",
            ResultKind.ZPB: "-",
            ResultKind.ANNULLED: "",
        }[self.kind]

    @property
    def cell(self) -> str:
        """The round's cell of the results table: "12w1", "+7" and "-3" (forfeits, 28.3), "+" for a bye."""
        if self.kind is ResultKind.ANNULLED:
            return ""
        if self.opponent is None:
            return self.symbol
        if self.kind.forfeit:
            return f"{self.symbol}{self.opponent}"
        return f"{self.opponent}{self.color or ''}{self.symbol}"


ABSENT: Final = RoundEntry(None, None, ResultKind.ZPB)


@dataclass(frozen=True, slots=True)
class Entrant:
    start_no: int
    name: str
    rounds: tuple[RoundEntry, ...] = ()
    rating: int = 0
    federation: str = ""
    fide_id: str = ""
    sex: str = ""
    title: str = ""
    birth: str = ""
    team: str = ""
    declared_points: Fraction | None = None
    """The points the source file states (TRF columns 81–84), to check against."""
    declared_rank: int | None = None

    def round(self, number: int) -> RoundEntry:
        """Round ``number`` (1-based); rounds beyond the record are absences."""
        return self.rounds[number - 1] if number <= len(self.rounds) else ABSENT


@dataclass(frozen=True, slots=True)
class Scoring:
    """Points per result (28.1, 28.2): 1 / ½ / 0 by default, e.g. 3 / 1 / 0 when the event says so."""

    win: Fraction = Fraction(1)
    draw: Fraction = Fraction(1, 2)
    loss: Fraction = Fraction(0)

    def points(self, kind: ResultKind) -> Fraction:
        if kind in (ResultKind.WIN, ResultKind.UNRATED_WIN, ResultKind.FORFEIT_WIN, ResultKind.PAB, ResultKind.FPB):
            return self.win
        if kind in (ResultKind.DRAW, ResultKind.UNRATED_DRAW, ResultKind.HPB):
            return self.draw
        return self.loss


class System(enum.Enum):
    SWISS = "swiss"
    ROUND_ROBIN = "round-robin"


class Rules(enum.Enum):
    FIDE_2024 = "fide-2024"
    """FIDE C.07, 2023/2024 text: own unplayed rounds against a dummy on one's own score."""
    FIDE_2026 = "fide-2026"
    """FIDE C.07, 2026 text: the dummy is capped (16.4)."""


@dataclass(frozen=True, slots=True)
class Tournament:
    name: str
    entrants: tuple[Entrant, ...]
    rounds: int
    system: System = System.SWISS
    scoring: Scoring = field(default_factory=Scoring)

    def entrant(self, start_no: int) -> Entrant:
        for entrant in self.entrants:
            if entrant.start_no == start_no:
                return entrant
        raise StandingsError(f"no player with start number {start_no}")

    def by_start_no(self) -> dict[int, Entrant]:
        """Every entrant by start number (build it once when looking many up)."""
        return {entrant.start_no: entrant for entrant in self.entrants}


# --- Tie-break descriptors -------------------------------------------------------------------------------------------

TIEBREAK_NAMES: Final = ("PTS", "BH", "SB", "WIN", "WON", "DE")

#: The rules' orders (29): round robin: points, small score (SB), games won incl. wins without play, direct encounter
#: (29.1.1); Swiss: points, Buchholz, median Buchholz (one cut each end: the regulations must set it; 29.2.1 B), games
#: won, direct encounter (29.2.1).  Still tied: shared places or a play-off (29.1.1 D, 29.2.1 E).
RULES_ORDER: Final = {
    System.ROUND_ROBIN: "PTS,SB,WIN,DE",
    System.SWISS: "PTS,BH,BH/M1,WIN,DE",
}
_MODIFIERS: Final = ("C1", "C2", "M1", "M2", "P")
_DESCRIPTOR: Final = re.compile(r"^([A-Z]+)((?:/[A-Z0-9]+)*)$")


@dataclass(frozen=True, slots=True)
class TieBreak:
    name: str
    cut: int = 0
    """How many least significant values to cut."""
    top_cut: int = 0
    """How many most significant values to cut (median)."""
    forfeits_played: bool = False

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.top_cut:
            parts.append(f"M{self.top_cut}")
        elif self.cut:
            parts.append(f"C{self.cut}")
        if self.forfeits_played:
            parts.append("P")
        return "/".join(parts)


def parse_tiebreaks(text: str) -> list[TieBreak]:
    """``"PTS,BH/C1,BH/M1,WIN,DE"`` → the list; an unknown name or modifier is a :class:`StandingsError`."""
    result = []
    for raw in (part.strip() for part in text.split(",")):
        match = _DESCRIPTOR.match(raw.upper())
        if not raw or match is None:
            raise StandingsError(f"tie-break {raw!r} is not a descriptor like 'BH/C1'")
        name, modifiers = match.group(1), [m for m in match.group(2).split("/") if m]
        if name not in TIEBREAK_NAMES:
            raise StandingsError(f"unknown tie-break {name!r}: expected one of {', '.join(TIEBREAK_NAMES)}")
        cut = top_cut = 0
        forfeits_played = False
        for modifier in modifiers:
            if modifier not in _MODIFIERS:
                raise StandingsError(
                    f"unknown modifier /{modifier} in {raw!r}: expected one of /{', /'.join(_MODIFIERS)}"
                )
            if modifier == "P":
                forfeits_played = True
            elif name not in ("BH", "SB"):
                raise StandingsError(f"{raw!r}: cuts and medians apply to BH and SB only")
            elif modifier.startswith("C"):
                cut = int(modifier[1])
            else:
                cut = top_cut = int(modifier[1])
        result.append(TieBreak(name, cut, top_cut, forfeits_played))
    return result


# --- Computation -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Contribution:
    value: Fraction
    """The opponent's (adjusted or dummy) score."""
    scored: Fraction
    """The points the player scored in that round (for SB)."""
    voluntary: bool


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    entrant: Entrant
    points: Fraction
    tiebreaks: dict[str, Fraction | int | None]


class _Calculator:
    """Scores, adjusted scores (16.3) and per-round contributions, computed once per tournament."""

    def __init__(self, tournament: Tournament, rules: Rules, system: System) -> None:
        self.tournament = tournament
        self.rules = rules
        self.system = system
        self.scoring = tournament.scoring
        self.entrants = tournament.by_start_no()
        rounds = tournament.rounds
        self.rows: dict[int, list[RoundEntry]] = {
            no: [entrant.round(r) for r in range(1, rounds + 1)] for no, entrant in self.entrants.items()
        }
        points = self.scoring.points
        self.points: dict[int, Fraction] = {
            no: sum((points(e.kind) for e in row), Fraction(0)) for no, row in self.rows.items()
        }
        self.adjusted: dict[int, Fraction] = {no: self._adjusted(row) for no, row in self.rows.items()}
        self._contributions: dict[tuple[int, bool], list[_Contribution]] = {}

    def _adjusted(self, row: list[RoundEntry]) -> Fraction:
        """The score a player counts for as someone's opponent (16.3): requested byes with no later round the
        player took part in (a trailing bye, a withdrawal) count as draws."""
        total = Fraction(0)
        last_part = max((i for i, e in enumerate(row) if e.kind.took_part), default=-1)
        for i, entry in enumerate(row):
            if entry.kind is ResultKind.ANNULLED:
                continue
            if entry.kind in (ResultKind.HPB, ResultKind.ZPB) and i > last_part:
                total += self.scoring.draw
            else:
                total += self.scoring.points(entry.kind)
        return total

    def contributions(self, no: int, forfeits_played: bool) -> list[_Contribution]:
        key = (no, forfeits_played)
        cached = self._contributions.get(key)
        if cached is not None:
            return cached
        own = self.points[no]
        cap = self.scoring.draw * self.tournament.rounds
        out = []
        for entry in self.rows[no]:
            kind = entry.kind
            if kind is ResultKind.ANNULLED:
                continue
            scored = self.scoring.points(kind)
            opponent = entry.opponent
            if (kind.played or (kind.forfeit and forfeits_played)) and opponent in self.adjusted:
                out.append(_Contribution(self.adjusted[opponent], scored, False))
                continue
            if self.system is System.ROUND_ROBIN:
                out.append(_Contribution(Fraction(0), scored, kind.voluntary_unplayed))  # no dummy in round robins
                continue
            dummy = own  # 16.4: a dummy opponent on the player's own final score
            if self.rules is Rules.FIDE_2026:
                if kind.forfeit and opponent in self.adjusted:
                    dummy = min(dummy, self.adjusted[opponent])
                else:
                    dummy = min(dummy, cap)
            out.append(_Contribution(dummy, scored, kind.voluntary_unplayed))
        self._contributions[key] = out
        return out

    def buchholz(self, no: int, tiebreak: TieBreak) -> Fraction:
        values = _cut(self.contributions(no, tiebreak.forfeits_played), tiebreak, sb=False)
        return sum((c.value for c in values), Fraction(0))

    def sonneborn_berger(self, no: int, tiebreak: TieBreak) -> Fraction:
        values = _cut(self.contributions(no, tiebreak.forfeits_played), tiebreak, sb=True)
        return sum((c.value * c.scored for c in values), Fraction(0))

    def wins(self, no: int) -> int:
        return sum(1 for entry in self.rows[no] if entry.kind.with_win_points)

    def won(self, no: int) -> int:
        return sum(1 for entry in self.rows[no] if entry.kind in (ResultKind.WIN, ResultKind.UNRATED_WIN))

    def value(self, no: int, tiebreak: TieBreak) -> Fraction | int:
        if tiebreak.name == "PTS":
            return self.points[no]
        if tiebreak.name == "BH":
            return self.buchholz(no, tiebreak)
        if tiebreak.name == "SB":
            return self.sonneborn_berger(no, tiebreak)
        if tiebreak.name == "WIN":
            return self.wins(no)
        if tiebreak.name == "WON":
            return self.won(no)
        raise StandingsError(f"{tiebreak.label} is a ranking stage, not a value")

    # --- Direct encounter (C.07 §6) ---------------------------------------------------------------------------

    def direct_encounter(self, group: list[int], tiebreak: TieBreak) -> tuple[list[list[int]], dict[int, Fraction]]:
        """Split a tied group by the mini-table of their mutual games; returns the ordered subgroups and each
        player's mini-table score."""
        members = set(group)
        games: dict[tuple[int, int], list[Fraction]] = {}
        for no in group:
            for entry in self.rows[no]:
                opponent = entry.opponent
                if (
                    opponent in members
                    and opponent != no
                    and (entry.kind.played or (entry.kind.forfeit and tiebreak.forfeits_played))
                ):
                    games.setdefault((no, opponent), []).append(self.scoring.points(entry.kind))
        # 6.1.2: repeated meetings are averaged.
        score = {no: Fraction(0) for no in group}
        for (no, _), results in games.items():
            score[no] += sum(results, Fraction(0)) / len(results)
        missing = {no: sum(1 for other in group if other != no and (no, other) not in games) for no in group}
        if all(count == 0 for count in missing.values()):
            ordered = _split_by(group, score)
            if len(ordered) == 1:
                return ordered, score
            result: list[list[int]] = []
            for part in ordered:
                if len(part) > 1:
                    result.extend(self.direct_encounter(part, tiebreak)[0])  # 6.2: again within each tied part
                else:
                    result.append(part)
            return result, score
        # 6.3: not all have met: only a player first whatever the missing results is separated; then again.
        best_case = {no: score[no] + missing[no] * self.scoring.win for no in group}
        for no in sorted(group, key=lambda n: -score[n]):
            if all(score[no] > best_case[other] for other in group if other != no):
                rest = [other for other in group if other != no]
                if len(rest) > 1:
                    return [[no], *self.direct_encounter(rest, tiebreak)[0]], score
                return [[no], rest], score
        return [group], score


def _cut(values: list[_Contribution], tiebreak: TieBreak, sb: bool) -> list[_Contribution]:
    """Cut the least significant values (C.07 14.1), then the most significant ones (median, 14.3).

    The least significant value is the lowest one for BH; for SB it is the product belonging to the opponent with
    the lowest score (14.1.1 d; the lower product on a tie).  With voluntary unplayed rounds among the values, the
    higher of that value and the lowest VUR value is cut (16.5.1), and the rule is applied again for each further
    cut (16.5.2).
    """
    count = len(values)
    if tiebreak.top_cut:
        if count < 2 * tiebreak.top_cut + 1:
            return values
    elif count < 2:
        return values

    def value(c: _Contribution) -> Fraction:
        return c.value * c.scored if sb else c.value

    remaining = list(values)
    for _ in range(min(tiebreak.cut, len(remaining) - 1)):
        least = min(remaining, key=(lambda c: (c.value, value(c))) if sb else value)
        voluntary = [c for c in remaining if c.voluntary]
        if voluntary:
            lowest_vur = min(voluntary, key=value)
            if value(lowest_vur) >= value(least):
                least = lowest_vur
        remaining.remove(least)
    for _ in range(tiebreak.top_cut):
        remaining.remove(max(remaining, key=value))
    return remaining


def _split_by(group: list[int], values: dict[int, Fraction] | dict[int, Fraction | int]) -> list[list[int]]:
    ordered = sorted(group, key=lambda no: (-values[no], no))
    parts: list[list[int]] = []
    for no in ordered:
        if parts and values[parts[-1][0]] == values[no]:
            parts[-1].append(no)
        else:
            parts.append([no])
    return parts


def standings(
    tournament: Tournament,
    tiebreaks: Sequence[TieBreak] | str = "PTS",
    rules: Rules = Rules.FIDE_2024,
    system: System | None = None,
) -> list[Standing]:
    """The ranked table: points first, then each tie-break in turn on the still-tied groups (C.07 Art. 4.2).
    Players still tied share the place (29.1.1 D, 29.2.1 E)."""
    criteria = parse_tiebreaks(tiebreaks) if isinstance(tiebreaks, str) else list(tiebreaks)
    if not criteria or criteria[0].name != "PTS":
        criteria.insert(0, TieBreak("PTS"))
    calculator = _Calculator(tournament, rules, system or tournament.system)
    numbers = sorted(calculator.entrants)
    values: dict[str, dict[int, Fraction | int | None]] = {}
    for criterion in criteria:
        if criterion.name != "DE":
            values[criterion.label] = {no: calculator.value(no, criterion) for no in numbers}
        else:
            values[criterion.label] = dict.fromkeys(numbers)

    def order(group: list[int], level: int) -> list[list[int]]:
        if len(group) == 1 or level == len(criteria):
            return [group]
        criterion = criteria[level]
        if criterion.name == "DE":
            parts, scores = calculator.direct_encounter(group, criterion)
            for no in group:
                values[criterion.label][no] = scores[no]
        else:
            column = values[criterion.label]
            parts = _split_by(group, {no: column[no] or 0 for no in group})
        result: list[list[int]] = []
        for part in parts:
            result.extend(order(part, level + 1))
        return result

    table = []
    place = 1
    for group in order(numbers, 0):
        for no in sorted(group):
            table.append(
                Standing(
                    rank=place,
                    entrant=calculator.entrants[no],
                    points=calculator.points[no],
                    tiebreaks={label: column[no] for label, column in values.items()},
                )
            )
        place += len(group)
    return table


def points_of(tournament: Tournament) -> dict[int, Fraction]:
    return _Calculator(tournament, Rules.FIDE_2024, tournament.system).points


# --- Withdrawals (24.4) ----------------------------------------------------------------------------------------------


def withdraw(
    tournament: Tournament, start_no: int, after_round: int, schedule: dict[int, int] | None = None
) -> Tournament:
    """The tournament after ``start_no`` withdrew once ``after_round`` rounds were played (24.4).

    Round robin (24.4.2): fewer than half of the opponents played → every result of the player is annulled; half or
    more → the results stand and the remaining games are forfeits (``schedule``: round → the scheduled opponent).
    Swiss (24.4.3): the results stand and the player is not paired again (zero-point byes, C.07 16.1).
    """
    if start_no not in tournament.by_start_no():
        raise StandingsError(f"no player with start number {start_no}")
    player = tournament.entrant(start_no)
    if tournament.system is System.SWISS:
        rounds = tuple(player.round(r) if r <= after_round else ABSENT for r in range(1, tournament.rounds + 1))
        return _replace_rows(tournament, {start_no: rounds})
    opponents = len(tournament.entrants) - 1
    played = sum(1 for r in range(1, after_round + 1) if player.round(r).opponent is not None)
    if 2 * played < opponents:
        annulled = RoundEntry(None, None, ResultKind.ANNULLED)
        changes: dict[int, tuple[RoundEntry, ...]] = {}
        for entrant in tournament.entrants:
            if entrant.start_no == start_no:
                continue
            rows = tuple(annulled if e.opponent == start_no else e for e in entrant.rounds)
            if rows != entrant.rounds:
                changes[entrant.start_no] = rows
        kept = tuple(e for e in tournament.entrants if e.start_no != start_no)
        return _replace_rows(
            Tournament(tournament.name, kept, tournament.rounds, tournament.system, tournament.scoring), changes
        )
    if schedule is None:
        raise StandingsError(
            "the remaining games become forfeits (24.4.2): the schedule of the remaining rounds is needed"
        )
    rows_for: dict[int, list[RoundEntry]] = {
        e.start_no: [e.round(r) for r in range(1, tournament.rounds + 1)] for e in tournament.entrants
    }
    for round_no, opponent in schedule.items():
        if round_no <= after_round:
            continue
        rows_for[start_no][round_no - 1] = RoundEntry(opponent, None, ResultKind.FORFEIT_LOSS)
        rows_for[opponent][round_no - 1] = RoundEntry(start_no, None, ResultKind.FORFEIT_WIN)
    return _replace_rows(tournament, {no: tuple(rows) for no, rows in rows_for.items()})


def _replace_rows(tournament: Tournament, rows: dict[int, tuple[RoundEntry, ...]]) -> Tournament:
    entrants = tuple(
        Entrant(
            e.start_no, e.name, rows.get(e.start_no, e.rounds), e.rating, e.federation, e.fide_id, e.sex, e.title,
            e.birth, e.team, None, None,
        )
        for e in tournament.entrants
    )  # fmt: skip
    return Tournament(tournament.name, entrants, tournament.rounds, tournament.system, tournament.scoring)


# --- Results table ---------------------------------------------------------------------------------------------------


def results_table(tournament: Tournament, table: Iterable[Standing]) -> list[list[str]]:
    """Rows of the results table: rank, start number, name, each round ("12w1", "+7", "-3", "+" for a bye),
    points; forfeits as "+" and "-" (28.3)."""
    rows = []
    for standing in table:
        entrant = standing.entrant
        cells = [str(standing.rank), str(entrant.start_no), entrant.name]
        cells.extend(entrant.round(r).cell for r in range(1, tournament.rounds + 1))
        cells.append(format_score(standing.points))
        rows.append(cells)
    return rows


def format_score(value: Fraction | int) -> str:
    """``Fraction(13, 2)`` → ``"6.5"``; exact for halves and quarters."""
    if isinstance(value, int) or value.denominator == 1:
        return str(int(value))
    return f"{float(value):g}"
