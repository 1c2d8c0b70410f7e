"""Knockout brackets (27.1), multi-game matches (27.7, 10.1.3, 28.1), the regulations' play-off chain, and places
(28.4)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.clock import PRESETS, PlayOff
from engine.knockout import (
    GameRecord,
    Knockout,
    KnockoutError,
    MatchStatus,
    Placing,
    bracket_order,
    seeded_bracket,
)
from engine.standings import StandingsError

PLAYOFF_5_3 = PRESETS["playoff-5+3"]
PLAYOFF_3_2 = PRESETS["playoff-3+2"]


def _win_bracket(knockout: Knockout, winners_by_round: list[list[int]]) -> Knockout:
    """Play single-game matches round by round: each listed player wins their match."""
    for round_no, winners in enumerate(winners_by_round, start=1):
        for winner in winners:
            match = next(m for m in knockout.round(round_no) if m.has(winner))
            knockout = knockout.record_game(round_no, match.number, winner)
    return knockout


# --- Seeding (27.1) --------------------------------------------------------------------------------------------------


def test_27_1_bracket_order_for_8_and_16() -> None:
    assert bracket_order(2) == (1, 2)
    assert bracket_order(4) == (1, 4, 2, 3)
    assert bracket_order(8) == (1, 8, 4, 5, 2, 7, 3, 6)
    assert bracket_order(16) == (1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11)


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64])
def test_27_1_seeds_meet_as_late_as_their_seeding_allows(size: int) -> None:
    """Round 1: seed s v seed size + 1 - s; the top 2^j seeds are in different 2^j-th parts of the bracket."""
    order = bracket_order(size)
    assert sorted(order) == list(range(1, size + 1))
    assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))
    parts = 2
    while parts <= size:
        width = size // parts
        top = [order.index(seed) // width for seed in range(1, parts + 1)]
        assert sorted(top) == list(range(parts))
        parts *= 2


def test_27_1_seeding_8_players_no_byes() -> None:
    field = [101, 102, 103, 104, 105, 106, 107, 108]
    assert seeded_bracket(field) == (101, 108, 104, 105, 102, 107, 103, 106)
    knockout = Knockout.create(field)
    assert knockout.rounds == 3
    assert [m.players for m in knockout.round(1)] == [(101, 108), (104, 105), (102, 107), (103, 106)]
    assert all(m.status is MatchStatus.PLAYING for m in knockout.round(1))
    assert all(m.status is MatchStatus.WAITING for m in (*knockout.round(2), knockout.final))


def test_27_1_seeding_5_players_gives_the_top_three_seeds_byes() -> None:
    assert seeded_bracket([1, 2, 3, 4, 5]) == (1, None, 4, 5, 2, None, 3, None)
    knockout = Knockout.create([1, 2, 3, 4, 5])
    byes = [m for m in knockout.round(1) if m.bye]
    assert [m.winner for m in byes] == [1, 2, 3]
    assert all(m.status is MatchStatus.DECIDED and m.loser is None and not m.games for m in byes)
    # Byes are through at once: seed 1 waits for the 4-5 winner, seeds 2 and 3 meet in round 2.
    assert [m.players for m in knockout.round(2)] == [(1, None), (2, 3)]
    assert [m.label for m in knockout.matches_to_play()] == ["round 1 match 2", "round 2 match 2"]


def test_27_1_seeding_16_players() -> None:
    field = list(range(1, 17))
    assert [m.players for m in Knockout.create(field).round(1)] == [
        (1, 16), (8, 9), (4, 13), (5, 12), (2, 15), (7, 10), (3, 14), (6, 11),
    ]  # fmt: skip
    assert Knockout.create(field).rounds == 4


@given(st.integers(min_value=2, max_value=70))
def test_27_1_property_byes_go_to_the_top_seeds(players: int) -> None:
    slots = seeded_bracket(list(range(1, players + 1)))
    size = len(slots)
    assert size >= players > size // 2 or size == players == 2
    byes = size - players
    given_byes = sorted(slot for i, slot in enumerate(slots) if slot is not None and slots[i ^ 1] is None)
    assert given_byes == list(range(1, byes + 1))
    assert all(slots[i] is not None or slots[i ^ 1] is not None for i in range(size))  # never a bye against a bye


# --- A full knockout and its places (28.4) ---------------------------------------------------------------------------


def test_27_1_28_4_full_knockout_of_8_with_shared_places() -> None:
    knockout = Knockout.create([1, 2, 3, 4, 5, 6, 7, 8])
    knockout = _win_bracket(knockout, [[1, 5, 7, 3], [5, 3], [3]])
    assert knockout.finished and knockout.champion == 3
    assert knockout.round(2)[0].players == (1, 5) and knockout.round(2)[1].players == (7, 3)
    assert knockout.final.players == (5, 3)
    assert knockout.places() == (
        Placing(3, 1, 1, None),
        Placing(5, 2, 1, 3),
        Placing(1, 3, 2, 2),
        Placing(7, 3, 2, 2),
        Placing(2, 5, 4, 1),
        Placing(4, 5, 4, 1),
        Placing(6, 5, 4, 1),
        Placing(8, 5, 4, 1),
    )
    labels = {p.player: p.label for p in knockout.places()}
    assert labels == {3: "1", 5: "2", 1: "3–4", 7: "3–4", 2: "5–8", 4: "5–8", 6: "5–8", 8: "5–8"}
    assert [p.player for p in knockout.places()] == [3, 5, 1, 7, 2, 4, 6, 8]  # by place, then by seed


def test_28_4_third_place_match_separates_the_semi_final_losers() -> None:
    knockout = Knockout.create([1, 2, 3, 4, 5, 6, 7, 8], third_place_match=True)
    third = knockout.match(3, 2)
    assert third.third_place and third.status is MatchStatus.WAITING
    knockout = _win_bracket(knockout, [[1, 4, 2, 3], [1]])
    assert knockout.match(3, 2).players == (4, None)
    with pytest.raises(KnockoutError, match="the match for third place is not ready: it waits for both semi-finals"):
        knockout.record_game(3, 2, 4)
    knockout = _win_bracket(knockout, [[], [3]])
    assert knockout.match(3, 2).players == (4, 2)
    assert knockout.place_of(4) is None and knockout.place_of(1) is None  # still open
    knockout = knockout.record_game(3, 1, 1).record_game(3, 2, 2)
    assert knockout.finished
    assert [(p.player, p.label) for p in knockout.places()] == [
        (1, "1"), (3, "2"), (2, "3"), (4, "4"), (5, "5–8"), (6, "5–8"), (7, "5–8"), (8, "5–8"),
    ]  # fmt: skip


def test_28_4_five_players_with_byes_places() -> None:
    knockout = Knockout.create([1, 2, 3, 4, 5])
    assert knockout.place_of(1) is None
    knockout = knockout.record_game(1, 2, 5)
    assert knockout.place_of(4) == 5 and knockout.eliminated_in(4) == 1
    knockout = knockout.record_game(2, 1, 5).record_game(2, 2, 2).record_game(3, 1, 2)
    assert [(p.player, p.place, p.shared_by, p.eliminated_in) for p in knockout.places()] == [
        (2, 1, 1, None), (5, 2, 1, 3), (1, 3, 2, 2), (3, 3, 2, 2), (4, 5, 1, 1),
    ]  # fmt: skip


def test_28_4_two_players_play_only_a_final() -> None:
    knockout = Knockout.create([7, 9], best_of=3)
    assert knockout.rounds == 1 and knockout.final.best_of == 3
    knockout = knockout.record_game(1, 1, 9).record_game(1, 1, 9)
    assert knockout.champion == 9
    assert [(p.player, p.label) for p in knockout.places()] == [(9, "1"), (7, "2")]


@settings(max_examples=60)
@given(st.integers(min_value=2, max_value=33), st.data())
def test_28_4_property_later_elimination_ranks_higher(players: int, data: st.DataObject) -> None:
    knockout = Knockout.create(list(range(1, players + 1)))
    while not knockout.finished:
        match = knockout.matches_to_play()[0]
        upper, lower = match.players
        assert upper is not None and lower is not None
        knockout = knockout.record_game(match.round_no, match.number, data.draw(st.sampled_from([upper, lower])))
    places = knockout.places()
    assert sorted(p.player for p in places) == list(range(1, players + 1))
    assert [p.place for p in places] == sorted(p.place for p in places)
    assert [p.player for p in places if p.place == 1] == [knockout.champion]
    for placing in places:
        assert sum(1 for other in places if other.place == placing.place) == placing.shared_by
        if placing.eliminated_in is not None:
            assert placing.place == 2 ** (knockout.rounds - placing.eliminated_in) + 1

    def survived(placing: Placing) -> int:
        """Rounds survived: the champion survived them all."""
        return knockout.rounds + 1 if placing.eliminated_in is None else placing.eliminated_in

    for better in places:
        for worse in places:
            if survived(better) > survived(worse):
                assert better.place < worse.place
            elif survived(better) == survived(worse):
                assert better.place == worse.place


# --- Multi-game matches (27.7, 28.1) and colours (10.1.3) -----------------------------------------------------------


def test_27_7_best_of_3_ends_once_a_player_has_two_points() -> None:
    knockout = Knockout.create([1, 2], best_of=3)
    knockout = knockout.record_game(1, 1, 1).record_game(1, 1, 1)
    final = knockout.final
    assert final.status is MatchStatus.DECIDED and final.winner == 1 and final.loser == 2
    assert (final.score(1), final.score(2)) == (Fraction(2), Fraction(0))
    assert len(final.games) == 2 and final.next_game() is None


def test_27_7_28_1_best_of_3_draws_count_half() -> None:
    """½ + ½ + 1 = 2 > 1.5: the player who wins the third game after two draws wins the match."""
    knockout = Knockout.create([1, 2], best_of=3).record_game(1, 1, None).record_game(1, 1, None)
    assert knockout.final.status is MatchStatus.PLAYING
    assert knockout.final.score(1) == knockout.final.score(2) == Fraction(1)
    knockout = knockout.record_game(1, 1, 2)
    assert knockout.final.winner == 2 and knockout.final.score(2) == Fraction(2)


def test_27_7_best_of_3_level_after_three_games_is_tied() -> None:
    """Win, loss, draw: 1½ each, nobody has more than half of 3: the play-off decides."""
    knockout = Knockout.create([1, 2], best_of=3).record_game(1, 1, 1).record_game(1, 1, 2).record_game(1, 1, None)
    final = knockout.final
    assert final.tied and final.status is MatchStatus.PLAY_OFF and final.winner is None
    assert final.score(1) == final.score(2) == Fraction(3, 2)
    upcoming = final.next_game()
    assert upcoming is not None and upcoming.play_off_index == 0 and upcoming.time_control == PLAYOFF_5_3


def test_27_7_10_1_3_best_of_7_with_draws_and_alternating_colours() -> None:
    knockout = Knockout.create([1, 2], best_of=7).decide_first_player(1, 1, 2)  # 10.1.2: player 2 won the guess
    results = [2, None, 1, None, 2, 1]  # 2: 1, 1½, 1½, 2, 3, 3  /  1: 0, ½, 1½, 2, 2, 3
    for winner in results:
        knockout = knockout.record_game(1, 1, winner)
    final = knockout.final
    assert (final.score(1), final.score(2)) == (Fraction(3), Fraction(3))
    assert final.status is MatchStatus.PLAYING  # 3 each: nobody above 3½ yet, one game left
    assert [game.first for game in final.games] == [2, 1, 2, 1, 2, 1]
    upcoming = final.next_game()
    assert upcoming is not None and (upcoming.number, upcoming.first, upcoming.second) == (7, 2, 1)
    assert upcoming.time_control is None  # a regular game: the event's own control
    knockout = knockout.record_game(1, 1, 1)
    assert knockout.champion == 1 and knockout.final.score(1) == Fraction(4)


def test_27_7_best_of_7_is_over_at_four_points_before_seven_games() -> None:
    knockout = Knockout.create([1, 2], best_of=7)
    for winner in [1, 1, None, 1]:  # 1: 1, 2, 2½, 3½
        knockout = knockout.record_game(1, 1, winner)
    assert knockout.final.status is MatchStatus.PLAYING  # 3½ is not more than half of 7
    knockout = knockout.record_game(1, 1, None)  # 4 > 3½ after five games
    assert knockout.champion == 1 and knockout.final.score(1) == Fraction(4) and len(knockout.final.games) == 5
    assert knockout.final.score(2) == Fraction(1)


def test_27_7_final_only_as_multi_game_decider() -> None:
    knockout = Knockout.create([1, 2, 3, 4], final_best_of=5)
    assert [m.best_of for m in knockout.round(1)] == [1, 1] and knockout.final.best_of == 5
    knockout = _win_bracket(knockout, [[1, 2]])
    for winner in [2, 2, None]:
        knockout = knockout.record_game(2, 1, winner)
    assert knockout.final.status is MatchStatus.PLAYING and knockout.final.score(2) == Fraction(5, 2)  # not > 2½
    knockout = knockout.record_game(2, 1, None)
    assert knockout.champion == 2 and knockout.final.score(2) == Fraction(3)  # 3 > 2½ after four games


def test_27_7_colours_default_to_the_upper_slot_and_alternate() -> None:
    knockout = Knockout.create([5, 6], best_of=5)
    for winner in [5, 6, 5, 6]:
        knockout = knockout.record_game(1, 1, winner)
    assert [(g.first, g.second) for g in knockout.final.games] == [(5, 6), (6, 5), (5, 6), (6, 5)]


# --- The play-off chain (regulations) --------------------------------------------------------------------------------


def test_regulations_drawn_single_game_goes_through_the_play_off_chain() -> None:
    """A drawn knockout game: two games at 5+3 (1-1), then 3+2 games until one is won; colours keep alternating."""
    knockout = Knockout.create([1, 2, 3, 4])
    knockout = knockout.record_game(1, 1, None)  # 1 v 4, 1 first: drawn
    match = knockout.match(1, 1)
    assert match.status is MatchStatus.PLAY_OFF
    chain = PlayOff()
    expected = [(0, 4, 1), (1, 1, 4), (2, 4, 1), (3, 1, 4)]  # index, first, second
    for (index, first, second), winner in zip(expected, [4, 1, None, 1], strict=True):
        upcoming = knockout.match(1, 1).next_game()
        assert upcoming is not None
        assert (upcoming.play_off_index, upcoming.first, upcoming.second) == (index, first, second)
        assert upcoming.time_control == chain.game(index)
        assert upcoming.number == index + 2
        assert knockout.match(1, 1).status is MatchStatus.PLAY_OFF
        knockout = knockout.record_game(1, 1, winner)
    match = knockout.match(1, 1)
    assert match.winner == 1 and match.status is MatchStatus.DECIDED
    assert [g.time_control for g in match.play_off_games] == [PLAYOFF_5_3, PLAYOFF_5_3, PLAYOFF_3_2, PLAYOFF_3_2]
    assert match.score(1) == Fraction(1, 2) and match.play_off_score(1) == Fraction(5, 2)
    assert knockout.round(2)[0].players == (1, None)  # the winner goes on


def test_regulations_two_game_play_off_can_decide_at_once() -> None:
    knockout = Knockout.create([1, 2], best_of=3)
    for winner in [1, 2, None, 2, None]:  # tied 1½-1½, then play-off 2 wins ½: 1½ - ½
        knockout = knockout.record_game(1, 1, winner)
    assert knockout.champion == 2 and len(knockout.final.play_off_games) == 2
    # After three regular games the alternation continues: play-off game 0 goes to game 1's second player.
    assert [g.first for g in knockout.final.games] == [1, 2, 1, 2, 1]


def test_regulations_two_game_pairing_split_goes_to_play_off() -> None:
    """Doc 002's two-game system (best_of=2): 1-1 is level at half of 2, so the play-off decides."""
    knockout = Knockout.create([1, 2], best_of=2).record_game(1, 1, 1).record_game(1, 1, 2)
    assert knockout.final.tied
    knockout = Knockout.create([1, 2], best_of=2).record_game(1, 1, 1).record_game(1, 1, None)
    assert knockout.champion == 1  # 1½ > 1


def test_regulations_play_off_uses_the_configured_chain() -> None:
    chain = PlayOff(first_pair=PRESETS["rapid-10+10"], sudden=PRESETS["blitz-3+2"])
    knockout = Knockout.create([1, 2], play_off=chain).record_game(1, 1, None)
    upcoming = knockout.final.next_game()
    assert upcoming is not None and upcoming.time_control == PRESETS["rapid-10+10"]


def test_28_3_forfeit_game_and_walkover() -> None:
    knockout = Knockout.create([1, 2, 3, 4], best_of=3).record_game(1, 1, 4, forfeit=True)
    assert knockout.match(1, 1).games == (GameRecord(1, 4, 4, forfeit=True),)
    knockout = knockout.record_walkover(1, 1, 1)
    assert knockout.match(1, 1).winner == 1 and knockout.round(2)[0].players == (1, None)
    assert knockout.place_of(4) == 3


# --- Refusals: nothing changes ---------------------------------------------------------------------------------------


def test_27_1_refusals_leave_the_knockout_unchanged() -> None:
    knockout = Knockout.create([1, 2, 3, 4, 5], best_of=3)
    before = knockout
    cases: list[tuple[str, Callable[[], object]]] = [
        (
            "round 2 match 1 is not ready: it waits for the winner of round 1 match 2",
            lambda: knockout.record_game(2, 1, 1),
        ),
        ("round 1 match 1 is a bye: player 1 goes through", lambda: knockout.record_game(1, 1, 1)),
        ("player 1 does not play in round 1 match 2", lambda: knockout.record_game(1, 2, 1)),
        ("player 9 does not play in round 1 match 2", lambda: knockout.decide_first_player(1, 2, 9)),
        ("player 3 does not play in round 1 match 2", lambda: knockout.record_walkover(1, 2, 3)),
        ("a forfeit cannot be a draw", lambda: knockout.record_game(1, 2, None, forfeit=True)),
        ("match 5 does not exist: round 1 has matches 1 to 4", lambda: knockout.match(1, 5)),
        ("round 4 does not exist", lambda: knockout.match(4, 1)),
        ("round 0 does not exist", lambda: knockout.round(0)),
        ("places are known when the knockout is finished", knockout.places),
        ("player 6 is not in the knockout", lambda: knockout.place_of(6)),
    ]
    for message, action in cases:
        with pytest.raises(KnockoutError, match=message):
            action()
    assert knockout == before


def test_27_1_no_result_after_the_match_is_decided() -> None:
    knockout = Knockout.create([1, 2, 3, 4]).record_game(1, 1, 1)
    decided = knockout
    with pytest.raises(KnockoutError, match="round 1 match 1 is already decided: player 1 won it"):
        knockout.record_game(1, 1, 4)
    with pytest.raises(KnockoutError, match="already decided"):
        knockout.record_walkover(1, 1, 4)
    assert knockout == decided and len(knockout.match(1, 1).games) == 1


def test_10_1_3_first_player_is_fixed_once_the_match_has_begun() -> None:
    knockout = Knockout.create([1, 2], best_of=3).record_game(1, 1, None)
    with pytest.raises(KnockoutError, match=r"colours alternate game by game \(10.1.3\)"):
        knockout.decide_first_player(1, 1, 2)


def test_successful_operations_return_new_values() -> None:
    original = Knockout.create([1, 2, 3, 4])
    played = original.record_game(1, 1, 4)
    assert original.match(1, 1).games == () and original.round(2)[0].players == (None, None)
    assert played.round(2)[0].players == (4, None)


@pytest.mark.parametrize(
    ("set_up", "message"),
    [
        (lambda: Knockout.create([1]), "at least 2 players"),
        (lambda: Knockout.create([]), "at least 2 players"),
        (lambda: Knockout.create([1, 2, 2, 3]), "more than once in the seeding: 2"),
        (lambda: Knockout.create([1, 2], best_of=4), r"best of 3, 5 or 7 \(27.7\), not best of 4"),
        (lambda: Knockout.create([1, 2, 3, 4], final_best_of=9), "the final: .* not best of 9"),
        (
            lambda: Knockout.create([1, 2, 3, 4], third_place_match=True, third_place_best_of=6),
            "third place: .*not best of 6",
        ),
        (lambda: Knockout.create([1, 2, 3], third_place_match=True), "at least 4 players, not 3"),
    ],
)
def test_27_1_27_7_bad_set_up(set_up: Callable[[], Knockout], message: str) -> None:
    with pytest.raises(StandingsError, match=message):
        set_up()


@pytest.mark.parametrize("size", [0, 1, 3, 6, 12])
def test_27_1_bracket_sizes_are_powers_of_two(size: int) -> None:
    with pytest.raises(KnockoutError, match="power of two"):
        bracket_order(size)
