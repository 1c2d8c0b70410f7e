"""The demo's own pairings for the rounds an example event does not list (``proctor demo`` only).

**Not FIDE's Dutch system (C.04.3), nor any approved Swiss system**: a real event takes its Swiss rounds from
approved pairing software (27.3), as a TRF file.  This is a small Monrad-style step, enough for a demonstration:

- the players are ranked by score, then start number;
- from the top, each unpaired player meets the highest-ranked player they have not met yet (a search that backs up
  when the bottom of the field cannot be paired); only when no such pairing exists is a rematch allowed, as few as
  the search can find;
- with an odd number of players, the lowest-ranked player who has not had one gets the bye;
- colours: the player who has been first player (Black, art. 10) fewer times plays first; on equal counts, the one
  who was second in the last round they played; else the higher-ranked.

A round robin's rounds come from the Berger tables instead (27.2, :func:`engine.pairing.round_robin`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from engine.pairing import round_robin
from proctor.round_pairings import Board

POINTS: Final = {"1-0": (Fraction(1), Fraction(0)), "0-1": (Fraction(0), Fraction(1)),
                 "½-½": (Fraction(1, 2), Fraction(1, 2)), "+-": (Fraction(1), Fraction(0)),
                 "-+": (Fraction(0), Fraction(1)), "--": (Fraction(0), Fraction(0)),
                 "0-0": (Fraction(0), Fraction(0))}  # fmt: skip
"""A game's result as the standings' pairings write it → the first and the second player's points."""


@dataclass(frozen=True, slots=True)
class Played:
    """One game (or bye) of an earlier round, from the standings' pairings."""

    round_no: int
    first: int
    second: int | None
    result: str | None


@dataclass
class _Record:
    score: Fraction = Fraction(0)
    opponents: frozenset[int] = frozenset()
    firsts: int = 0
    seconds: int = 0
    last_colour: str = ""
    had_bye: bool = False


def _records(players: Sequence[int], history: Sequence[Played]) -> dict[int, _Record]:
    records = {number: _Record() for number in players}
    for game in sorted(history, key=lambda g: g.round_no):
        first = records.setdefault(game.first, _Record())
        if game.second is None:
            first.had_bye = True
            first.score += 1
            continue
        second = records.setdefault(game.second, _Record())
        mine, theirs = POINTS.get(game.result or "", (Fraction(0), Fraction(0)))
        first.score += mine
        second.score += theirs
        first.opponents |= {game.second}
        second.opponents |= {game.first}
        first.firsts += 1
        second.seconds += 1
        first.last_colour, second.last_colour = "first", "second"
    return records


def _pair(ranked: list[int], records: dict[int, _Record], rematches: bool) -> list[tuple[int, int]] | None:
    """The top player with the highest-ranked opponent that lets the rest be paired (depth-first)."""
    if not ranked:
        return []
    top, rest = ranked[0], ranked[1:]
    for index, opponent in enumerate(rest):
        if not rematches and opponent in records[top].opponents:
            continue
        tail = _pair(rest[:index] + rest[index + 1 :], records, rematches)
        if tail is not None:
            return [(top, opponent), *tail]
    return None


def _colours(a: int, b: int, records: dict[int, _Record]) -> tuple[int, int]:
    """Who plays first: fewer firsts, then the one second in their last game, then the higher-ranked (``a``)."""
    ra, rb = records[a], records[b]
    if ra.firsts - ra.seconds != rb.firsts - rb.seconds:
        return (a, b) if ra.firsts - ra.seconds < rb.firsts - rb.seconds else (b, a)
    if ra.last_colour != rb.last_colour and "second" in (ra.last_colour, rb.last_colour):
        return (a, b) if ra.last_colour == "second" else (b, a)
    return a, b


def monrad_round(players: Sequence[int], history: Sequence[Played]) -> list[Board]:
    """The next round's boards for a Swiss section (the demo's own step; see the module's notes)."""
    records = _records(players, history)
    ranked = sorted(players, key=lambda n: (-records[n].score, n))
    bye = None
    if len(ranked) % 2:
        bye = next((n for n in reversed(ranked) if not records[n].had_bye), ranked[-1])
        ranked.remove(bye)
    pairs = _pair(ranked, records, rematches=False) or _pair(ranked, records, rematches=True) or []
    boards = [Board(index, *_colours(a, b, records)) for index, (a, b) in enumerate(pairs, start=1)]
    if bye is not None:
        boards.append(Board(len(boards) + 1, bye, None))
    return boards


def round_robin_round(players: Sequence[int], round_no: int) -> list[Board]:
    """Round ``round_no`` of a round robin by the Berger tables (27.2), the players taken in start-number order (a
    double round robin once the first cycle is played)."""
    ordered = sorted(players)
    cycle = len(ordered) - 1 if len(ordered) % 2 == 0 else len(ordered)
    schedule = round_robin(len(ordered), cycles=1 + (round_no - 1) // cycle)
    chosen = schedule.rounds[round_no - 1]
    boards = [Board(p.board, ordered[p.first - 1], ordered[p.second - 1]) for p in chosen.pairings]
    if chosen.bye is not None:
        boards.append(Board(len(boards) + 1, ordered[chosen.bye - 1], None))
    return boards
