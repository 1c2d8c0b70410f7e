"""Round-robin pairings by the Berger tables (27.2; FIDE C.05 Annex 1) and the schedule for withdrawals (24.4.2)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.pairing import (
    Pairing,
    RoundRobinSchedule,
    berger_table,
    double_round_robin,
    round_robin,
    scheduled_opponents,
)
from engine.standings import Entrant, ResultKind, RoundEntry, StandingsError, System, Tournament, withdraw


def _parse(rounds: list[str]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """``["1-4, 2-3", ...]`` → the table's tuples."""
    return tuple(
        tuple((int(pair.split("-")[0]), int(pair.split("-")[1])) for pair in line.split(", ")) for line in rounds
    )


# The published tables (FIDE Handbook C.05 Annex 1), copied line by line.
PUBLISHED_4 = ["1-4, 2-3", "4-3, 1-2", "2-4, 3-1"]
PUBLISHED_6 = ["1-6, 2-5, 3-4", "6-4, 5-3, 1-2", "2-6, 3-1, 4-5", "6-5, 1-4, 2-3", "3-6, 4-2, 5-1"]
PUBLISHED_8 = [
    "1-8, 2-7, 3-6, 4-5",
    "8-5, 6-4, 7-3, 1-2",
    "2-8, 3-1, 4-7, 5-6",
    "8-6, 7-5, 1-4, 2-3",
    "3-8, 4-2, 5-1, 6-7",
    "8-7, 1-6, 2-5, 3-4",
    "4-8, 5-3, 6-2, 7-1",
]
PUBLISHED_10_FIRST_ROUNDS = [
    "1-10, 2-9, 3-8, 4-7, 5-6",
    "10-6, 7-5, 8-4, 9-3, 1-2",
    "2-10, 3-1, 4-9, 5-8, 6-7",
    "10-7, 8-6, 9-5, 1-4, 2-3",
]
PUBLISHED_10_LAST_ROUND = "5-10, 6-4, 7-3, 8-2, 9-1"
PUBLISHED_12_SOME_ROUNDS = {
    1: "1-12, 2-11, 3-10, 4-9, 5-8, 6-7",
    2: "12-7, 8-6, 9-5, 10-4, 11-3, 1-2",
    6: "12-9, 10-8, 11-7, 1-6, 2-5, 3-4",
    11: "6-12, 7-5, 8-4, 9-3, 10-2, 11-1",
}


def _games(schedule: RoundRobinSchedule) -> list[Pairing]:
    return [pairing for round_pairings in schedule.rounds for pairing in round_pairings.pairings]


def _firsts(schedule: RoundRobinSchedule) -> Counter[int]:
    return Counter(pairing.first for pairing in _games(schedule))


def _seconds(schedule: RoundRobinSchedule) -> Counter[int]:
    return Counter(pairing.second for pairing in _games(schedule))


# --- The published tables ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "published"), [(4, PUBLISHED_4), (6, PUBLISHED_6), (8, PUBLISHED_8)], ids=["4", "6", "8"]
)
def test_27_2_berger_table_is_the_published_one(players: int, published: list[str]) -> None:
    assert berger_table(players) == _parse(published)


def test_27_2_berger_tables_for_10_and_12_players_match_published_rounds() -> None:
    ten = berger_table(10)
    assert ten[:4] == _parse(PUBLISHED_10_FIRST_ROUNDS)
    assert ten[-1] == _parse([PUBLISHED_10_LAST_ROUND])[0]
    twelve = berger_table(12)
    for round_no, line in PUBLISHED_12_SOME_ROUNDS.items():
        assert twelve[round_no - 1] == _parse([line])[0], round_no


def test_27_2_round_robin_keeps_the_tables_board_order_as_first_and_second_player() -> None:
    """The first-named player in the tables (White in chess) is the first player, 先手 (art. 10)."""
    schedule = round_robin(6)
    assert [(p.board, p.first, p.second) for p in schedule.round(2).pairings] == [(1, 6, 4), (2, 5, 3), (3, 1, 2)]
    assert schedule.round(2).bye is None and schedule.round(2).cycle == 1
    assert len(schedule.rounds) == schedule.rounds_per_cycle == 5


def test_27_2_odd_field_uses_the_next_table_with_the_highest_number_as_bye() -> None:
    assert berger_table(3) == berger_table(4)
    assert berger_table(7) == berger_table(8)
    three = round_robin(3)
    assert [(r.bye, [p.players for p in r.pairings]) for r in three.rounds] == [
        (1, [(2, 3)]),
        (3, [(1, 2)]),
        (2, [(3, 1)]),
    ]
    five = round_robin(5)
    # Published 6-player round 2 is 6-4, 5-3, 1-2: player 4 has the bye, the others keep the table order.
    assert five.round(2).bye == 4
    assert [(p.board, p.first, p.second) for p in five.round(2).pairings] == [(1, 5, 3), (2, 1, 2)]
    assert sorted(r.bye for r in five.rounds if r.bye is not None) == [1, 2, 3, 4, 5]


def test_27_2_last_player_alternates_colours() -> None:
    """In the Berger tables player N is second in odd rounds and first in even ones."""
    for players in (4, 6, 8, 10, 14, 20):
        schedule = round_robin(players)
        for round_pairings in schedule.rounds:
            board_one = round_pairings.pairings[0]
            assert players in board_one.players
            assert (board_one.first == players) == (round_pairings.number % 2 == 0)


# --- Properties ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 17))
def test_27_2_every_pair_meets_exactly_once_and_nobody_plays_twice_in_a_round(players: int) -> None:
    schedule = round_robin(players)
    assert len(schedule.rounds) == players - 1 + players % 2
    meetings = Counter(frozenset(p.players) for p in _games(schedule))
    assert set(meetings) == {frozenset(pair) for pair in combinations(range(1, players + 1), 2)}
    assert set(meetings.values()) == {1}
    for round_pairings in schedule.rounds:
        seen = [no for p in round_pairings.pairings for no in p.players]
        seen += [round_pairings.bye] if round_pairings.bye is not None else []
        assert sorted(seen) == list(range(1, players + 1))


@given(st.integers(min_value=2, max_value=20))
def test_27_2_property_each_pair_meets_once_per_cycle(players: int) -> None:
    schedule = double_round_robin(players)
    per_cycle = schedule.rounds_per_cycle
    for cycle in (1, 2):
        games = [p for r in schedule.rounds if r.cycle == cycle for p in r.pairings]
        meetings = Counter(frozenset(p.players) for p in games)
        assert len(meetings) == players * (players - 1) // 2
        assert set(meetings.values()) == {1}
    assert [r.number for r in schedule.rounds] == list(range(1, 2 * per_cycle + 1))
    byes = Counter(r.bye for r in schedule.rounds if r.bye is not None)
    assert byes == (Counter({no: 2 for no in range(1, players + 1)}) if players % 2 else Counter())


@pytest.mark.parametrize("players", [4, 6, 8, 10, 12, 20])
def test_27_2_colours_even_field_half_first_one_game_more(players: int) -> None:
    """N - 1 games each: the Berger tables give half the players one game more as first player, half one fewer."""
    schedule = round_robin(players)
    firsts, seconds = _firsts(schedule), _seconds(schedule)
    difference = Counter(firsts[no] - seconds[no] for no in range(1, players + 1))
    assert difference == Counter({1: players // 2, -1: players // 2})


@pytest.mark.parametrize("players", [3, 5, 7, 9, 11, 19])
def test_27_2_colours_odd_field_exactly_balanced(players: int) -> None:
    """With a bye each player has an even number of games, half of them as first player."""
    schedule = round_robin(players)
    firsts, seconds = _firsts(schedule), _seconds(schedule)
    assert all(firsts[no] == seconds[no] == (players - 1) // 2 for no in range(1, players + 1))


# --- Double round robin ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [4, 5, 8])
def test_27_2_double_round_robin_repeats_the_cycle_with_colours_reversed(players: int) -> None:
    schedule = double_round_robin(players)
    per_cycle = schedule.rounds_per_cycle
    assert schedule.cycles == 2 and len(schedule.rounds) == 2 * per_cycle
    for first_leg, second_leg in zip(schedule.rounds[:per_cycle], schedule.rounds[per_cycle:], strict=True):
        assert second_leg.cycle == 2 and second_leg.bye == first_leg.bye
        assert [(p.second, p.first) for p in first_leg.pairings] == [p.players for p in second_leg.pairings]
    firsts, seconds = _firsts(schedule), _seconds(schedule)
    assert all(firsts[no] == seconds[no] for no in range(1, players + 1))
    ordered_meetings = Counter(p.players for p in _games(schedule))
    assert set(ordered_meetings.values()) == {1}  # each player is first once against each opponent


def _longest_same_colour_run(schedule: RoundRobinSchedule, players: int) -> int:
    longest = 0
    for no in range(1, players + 1):
        run, previous = 0, None
        for round_pairings in schedule.rounds:
            pairing = round_pairings.pairing_of(no)
            colour = None if pairing is None else pairing.first == no
            run = run + 1 if colour is not None and colour == previous else (1 if colour is not None else 0)
            previous = colour
            longest = max(longest, run)
    return longest


def test_27_2_fide_recommendation_swaps_the_last_two_rounds_of_the_first_cycle() -> None:
    plain = double_round_robin(8)
    swapped = double_round_robin(8, swap_last_two_rounds=True)
    plain_pairs = [[p.players for p in r.pairings] for r in plain.rounds]
    swapped_pairs = [[p.players for p in r.pairings] for r in swapped.rounds]
    assert swapped_pairs[:5] == plain_pairs[:5]
    assert swapped_pairs[5] == plain_pairs[6] and swapped_pairs[6] == plain_pairs[5]
    assert swapped_pairs[7:12] == plain_pairs[7:12]
    assert swapped_pairs[12] == plain_pairs[13] and swapped_pairs[13] == plain_pairs[12]
    for players in range(6, 21, 2):
        assert _longest_same_colour_run(double_round_robin(players), players) == 3
        assert _longest_same_colour_run(double_round_robin(players, swap_last_two_rounds=True), players) == 2


# --- Scheduled opponents (24.4.2) ------------------------------------------------------------------------------------


def test_24_4_2_scheduled_opponents_by_round() -> None:
    assert scheduled_opponents(round_robin(4), 1) == {1: 4, 2: 2, 3: 3}
    assert scheduled_opponents(round_robin(4), 4) == {1: 1, 2: 3, 3: 2}
    assert scheduled_opponents(round_robin(5), 1) == {2: 2, 3: 3, 4: 4, 5: 5}  # round 1: bye
    assert scheduled_opponents(double_round_robin(4), 1) == {1: 4, 2: 2, 3: 3, 4: 4, 5: 2, 6: 3}


def test_24_4_2_withdrawal_after_half_the_games_turns_the_rest_into_forfeits() -> None:
    """Player 4 of 4 withdraws after round 2 (two of three opponents met): the round-3 game becomes a forfeit."""
    schedule = round_robin(4)
    rows: dict[int, list[RoundEntry]] = {no: [] for no in range(1, 5)}
    for round_pairings in schedule.rounds[:2]:
        for pairing in round_pairings.pairings:
            rows[pairing.first].append(RoundEntry(pairing.second, "b", ResultKind.DRAW))
            rows[pairing.second].append(RoundEntry(pairing.first, "w", ResultKind.DRAW))
    tournament = Tournament(
        "RR", tuple(Entrant(no, f"P{no}", tuple(rows[no])) for no in range(1, 5)), 3, System.ROUND_ROBIN
    )
    after = withdraw(tournament, 4, after_round=2, schedule=scheduled_opponents(schedule, 4))
    assert after.entrant(4).round(3) == RoundEntry(2, None, ResultKind.FORFEIT_LOSS)
    assert after.entrant(2).round(3) == RoundEntry(4, None, ResultKind.FORFEIT_WIN)


# --- Refusals --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [0, 1, -3])
def test_27_2_a_round_robin_needs_two_players(players: int) -> None:
    with pytest.raises(StandingsError, match=r"at least 2 players \(27.2\)"):
        berger_table(players)
    with pytest.raises(StandingsError, match="at least 2 players"):
        round_robin(players)


def test_27_2_refusals() -> None:
    with pytest.raises(StandingsError, match=r"single or double \(27.2\)"):
        round_robin(6, cycles=3)
    with pytest.raises(StandingsError, match="round 6 does not exist"):
        round_robin(6).round(6)
    with pytest.raises(StandingsError, match="no player with start number 7"):
        scheduled_opponents(round_robin(6), 7)
    with pytest.raises(StandingsError, match="does not play on board 1"):
        Pairing(1, 1, 6).opponent_of(2)
