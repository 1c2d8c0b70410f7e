"""Round-robin pairings by the Berger tables (27.2; FIDE C.05 Annex 1).

Players are named by their start numbers 1..n.  In each round, the tables list every pair as *first* - *second*: in
FIDE's chess tables the first-named player has White, the side that moves first; here the first-named is the first
player (先手, who takes Black and moves first, art. 10).  With an odd number of players the tables for n + 1 are used
and the highest number is a dummy: whoever is paired with it has the round off (a bye).

The tables are the published ones, built by the usual rotation: with N players (N even) and m = N - 1, round r is

- board 1: player N against x = (r - 1) * N / 2 + 1 (mod m); x is the first player in odd rounds and N in even rounds,
  so player N alternates;
- board k = 2..N/2: ((r - 1) * N / 2 + k) - ((r - 1) * N / 2 + 2 - k), both mod m (into 1..m).

e.g. 4 players: round 1 1-4, 2-3; round 2 4-3, 1-2; round 3 2-4, 3-1.

A double round robin (27.2) plays the first cycle again with the colours reversed.  FIDE recommends swapping the last
two rounds of the first cycle so that nobody gets the same colour three times in a row around the turn of the cycles
(``swap_last_two_rounds``; off by default, which keeps the tables as published).

Swiss pairings (27.3) are not generated here: they come from pairing software as a TRF file, which
:mod:`engine.trf` reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.standings import StandingsError


@dataclass(frozen=True, slots=True)
class Pairing:
    """One game of a round: start numbers of the first and the second player (10.1)."""

    board: int
    first: int
    second: int

    @property
    def players(self) -> tuple[int, int]:
        return (self.first, self.second)

    def opponent_of(self, start_no: int) -> int:
        if start_no == self.first:
            return self.second
        if start_no == self.second:
            return self.first
        raise StandingsError(f"player {start_no} does not play on board {self.board} ({self.first}-{self.second})")


@dataclass(frozen=True, slots=True)
class RoundPairings:
    """The games of one round, board by board, and the player with the bye (odd fields only)."""

    number: int
    cycle: int
    """1 for the first cycle, 2 for the second cycle of a double round robin."""
    pairings: tuple[Pairing, ...]
    bye: int | None = None

    def pairing_of(self, start_no: int) -> Pairing | None:
        """The game of ``start_no`` in this round; None when the player has the bye."""
        for pairing in self.pairings:
            if start_no in pairing.players:
                return pairing
        if start_no == self.bye:
            return None
        raise StandingsError(f"player {start_no} is not in round {self.number}")


@dataclass(frozen=True, slots=True)
class RoundRobinSchedule:
    """Every round of a single or double round robin (27.2)."""

    players: int
    cycles: int
    rounds: tuple[RoundPairings, ...]

    @property
    def rounds_per_cycle(self) -> int:
        return len(self.rounds) // self.cycles

    def round(self, number: int) -> RoundPairings:
        """Round ``number`` (1-based)."""
        if not 1 <= number <= len(self.rounds):
            raise StandingsError(f"round {number} does not exist: the schedule has rounds 1 to {len(self.rounds)}")
        return self.rounds[number - 1]


def berger_table(players: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The Berger table (FIDE C.05 Annex 1) for ``players``, as published: round by round, board by board,
    (first, second) by start number.  An odd count uses the table for ``players + 1``, whose highest number is the
    bye."""
    _check_players(players)
    size = players + players % 2
    cycle = size - 1
    half = size // 2

    def wrap(value: int) -> int:
        return (value - 1) % cycle + 1

    table = []
    for round_no in range(1, size):
        shift = (round_no - 1) * half
        opponent_of_last = wrap(shift + 1)
        board_one = (opponent_of_last, size) if round_no % 2 == 1 else (size, opponent_of_last)
        others = tuple((wrap(shift + board), wrap(shift + 2 - board)) for board in range(2, half + 1))
        table.append((board_one, *others))
    return tuple(table)


def round_robin(players: int, *, cycles: int = 1, swap_last_two_rounds: bool = False) -> RoundRobinSchedule:
    """The schedule of a round robin of ``players`` by the Berger tables (27.2): single (``cycles=1``) or double
    (``cycles=2``, the second cycle with colours reversed).  With an odd number of players the dummy's games become
    byes and the remaining games keep their table order as boards 1, 2, ...

    ``swap_last_two_rounds``: FIDE's recommendation for double round robins (C.05 Annex 1), the last two rounds of the
    first cycle are played in the other order (and so are their colour-reversed repeats in the second cycle, which
    keep the order of the first)."""
    if cycles not in (1, 2):
        raise StandingsError(f"a round robin is single or double (27.2): cycles must be 1 or 2, not {cycles}")
    table = list(berger_table(players))
    if swap_last_two_rounds and len(table) >= 2:
        table[-2], table[-1] = table[-1], table[-2]
    dummy = players + 1 if players % 2 else None
    rounds: list[RoundPairings] = []
    for cycle in range(1, cycles + 1):
        reverse = cycle % 2 == 0
        for pairs in table:
            games: list[Pairing] = []
            bye = None
            for listed_first, listed_second in pairs:
                if dummy in (listed_first, listed_second):
                    bye = listed_second if listed_first == dummy else listed_first
                    continue
                first, second = (listed_second, listed_first) if reverse else (listed_first, listed_second)
                games.append(Pairing(len(games) + 1, first, second))
            rounds.append(RoundPairings(len(rounds) + 1, cycle, tuple(games), bye))
    return RoundRobinSchedule(players, cycles, tuple(rounds))


def double_round_robin(players: int, *, swap_last_two_rounds: bool = False) -> RoundRobinSchedule:
    """A double round robin (27.2): the Berger cycle, then again with colours reversed."""
    return round_robin(players, cycles=2, swap_last_two_rounds=swap_last_two_rounds)


def scheduled_opponents(schedule: RoundRobinSchedule, start_no: int) -> dict[int, int]:
    """Round number → the scheduled opponent of ``start_no`` (bye rounds left out): the ``schedule`` argument of
    :func:`engine.standings.withdraw` for a round-robin withdrawal (24.4.2)."""
    if not 1 <= start_no <= schedule.players:
        raise StandingsError(
            f"no player with start number {start_no}: the round robin has players 1 to {schedule.players}"
        )
    opponents = {}
    for round_pairings in schedule.rounds:
        pairing = round_pairings.pairing_of(start_no)
        if pairing is not None:
            opponents[round_pairings.number] = pairing.opponent_of(start_no)
    return opponents


def _check_players(players: int) -> None:
    if isinstance(players, bool) or not isinstance(players, int) or players < 2:
        raise StandingsError(f"a round robin needs at least 2 players (27.2), not {players!r}")
