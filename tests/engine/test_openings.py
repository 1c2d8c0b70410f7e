"""Opening protocols (9.7, 11.1, 11.2) as state machines."""

from __future__ import annotations

import pytest

from engine.actions import Offer, Stone
from engine.board import CENTER, SYMMETRIES, Color, Position, parse_point
from engine.errors import IllegalActionError, UnknownNameError
from engine.game import Game, GameSettings
from engine.openings import (
    DESIGNATED_OPENINGS,
    Option,
    Player,
    find_opening,
    recognise_opening,
    symmetric_pair,
    zone,
)


def play(game: Game, *tokens: str) -> Game:
    for token in tokens:
        game = game.play(token)
    return game


def refused(game: Game, token: str, fragment: str) -> IllegalActionError:
    with pytest.raises(IllegalActionError) as caught:
        game.play(token)
    assert fragment in str(caught.value)
    return caught.value


# --- The 26 designated openings ----------------------------------------------------------------------------------


def test_the_26_openings_are_distinct_under_the_board_symmetries() -> None:
    seen = set()
    for opening in DESIGNATED_OPENINGS:
        white, black = parse_point(opening.moves[1]), parse_point(opening.moves[2])
        images = frozenset((table[white], table[black]) for table in SYMMETRIES)
        assert images not in seen, opening.name_zh
        seen.add(images)
    assert len(seen) == 26
    assert sum(o.kind == "direct" for o in DESIGNATED_OPENINGS) == 13


def test_every_third_stone_in_the_5x5_area_is_a_designated_opening() -> None:
    for white in zone(3) - {CENTER}:
        for black in zone(5) - {CENTER, white}:
            assert recognise_opening(CENTER, white, black) is not None


def test_openings_are_recognised_under_symmetry() -> None:
    hogetsu = recognise_opening(CENTER, parse_point("i9"), parse_point("i7"))
    assert hogetsu is not None and hogetsu.name_zh == "浦月"
    mirrored = recognise_opening(CENTER, parse_point("i9"), parse_point("g9"))  # reflected about the i9 diagonal
    assert mirrored == hogetsu
    rotated = recognise_opening(CENTER, parse_point("g8"), parse_point("f8"))  # 寒星 turned a quarter
    assert rotated is not None and rotated.name_zh == "寒星"
    assert recognise_opening(parse_point("h9"), CENTER, parse_point("h10")) is None


def test_designated_opening_zones() -> None:
    game = Game.new(opening="designated")
    refused(game, "i9", "outside the area")
    game = play(game, "h8")
    refused(game, "h10", "outside the area")  # White's stone must touch h8 (3x3)
    game = play(game, "i9")
    refused(game, "k11", "outside the area")  # Black 3 within f6–j10
    game = play(game, "j10")
    assert not game.in_opening and game.to_move is Color.WHITE
    assert game.stone_points == (CENTER, parse_point("i9"), parse_point("j10"))


def test_the_designated_opening_is_placed_by_black() -> None:
    game = play(Game.new(opening="designated"), "h8")
    due = game.due()
    assert due is not None and due.actor is Player.FIRST and Option.STONE in due.options


# --- Five-move N-dot (11.1.2) and five-move two-dot (11.1.3) -----------------------------------------------------


def test_soosorv_full_protocol_with_declaration_swap_candidates_and_choice() -> None:
    game = play(Game.new(opening="soosorv"), "h8", "h9", "h10")
    due = game.due()
    assert due is not None and due.options == {Option.DECLARE} and due.actor is Player.FIRST
    refused(game, "i10", "not allowed here")
    game = game.play("declare:3")
    due = game.due()
    assert due is not None and due.actor is Player.SECOND and Option.SWAP in due.options
    game = game.play("swap")
    assert game.black_player is Player.SECOND  # the second player now holds Black (6.2: a swap is a move)
    due = game.due()
    assert due is not None and due.actor is Player.FIRST and due.options == {Option.STONE}
    game = game.play("i9")
    due = game.due()
    assert due is not None and due.count == 3 and due.actor is Player.SECOND
    refused(game, "offer:g10,j10", "3 fifth-move candidates are due, 2 were given")
    refused(game, "offer:g10,j10,h9", "not an empty point")
    game = game.play("offer:g10,j10,j7")
    due = game.due()
    assert due is not None and due.candidates == tuple(map(parse_point, ("g10", "j10", "j7")))
    assert due.actor is Player.FIRST
    refused(game, "choose:k11", "not one of the candidates")
    game = game.play("choose:j10")
    assert not game.in_opening and game.to_move is Color.WHITE
    assert game.position.color_at(parse_point("j10")) is Color.BLACK
    assert game.moves_6_2 == 4  # 6.2: the opening, the swap, White 4 and the giving of candidates
    game = game.play("k11")
    assert game.position.stones == 6


def test_soosorv_candidates_must_not_be_symmetrical() -> None:
    # 寒星 with White 4 on h11 is symmetric about the h column: g10 and i10 mirror each other.
    game = play(Game.new(opening="soosorv-2"), "h8", "h9", "h10", "h11")
    error = refused(game, "offer:g10,i10", "symmetrical")
    assert error.article == "11.1.2 C"
    game = game.play("offer:g10,j10")
    assert game.due() is not None


def test_symmetric_pair_uses_only_symmetries_that_keep_the_position() -> None:
    position = Position.from_notation(["h8", "h10"], ["h9", "i11"])  # no longer symmetric
    assert symmetric_pair(position, (parse_point("g10"), parse_point("i10"))) is None
    position = Position.from_notation(["h8"], [])
    assert symmetric_pair(position, (parse_point("g7"), parse_point("i9"))) is not None


def test_soosorv_declaration_cap_and_fixed_n() -> None:
    capped = Game.new(GameSettings(opening="soosorv", max_candidates=2))
    game = play(capped, "h8", "h9", "h10")
    refused(game, "declare:3", "at most 2")
    refused(game, "declare:0", "at least one")
    fixed = play(Game.new(opening="five-move-two"), "h8", "i9", "j10")
    refused(fixed, "declare:2", "no declaration")
    assert fixed.opening.name == "five-move-two"


def test_soosorv_with_one_candidate_takes_a_plain_fifth_stone() -> None:
    game = play(Game.new(opening="soosorv-1"), "h8", "h9", "h10", "i9", "g10")
    assert not game.in_opening and game.to_move is Color.WHITE


def test_soosorv_refuses_a_pass_and_a_stone_out_of_turn_during_the_opening() -> None:
    game = play(Game.new(opening="soosorv-2"), "h8", "h9", "h10", "i9")
    refused(game, "pass", "not allowed during the opening")
    refused(game, "j10", "a stone (j10) is not allowed here")


# --- Taraguchi-10 (11.1.1) ----------------------------------------------------------------------------------------


def test_taraguchi_branch_a_with_swaps_and_zones() -> None:
    game = Game.new(opening="taraguchi-10")
    refused(game, "h9", "outside the area")
    game = play(game, "h8", "swap")
    assert game.black_player is Player.SECOND
    refused(game, "j10", "outside the area")  # White 2 within g7–i9
    game = play(game, "i9", "keep", "j10")  # Black declines the swap explicitly, then plays 3 within f6–j10
    refused(game, "l12", "outside the area")  # White 4 within e5–k11
    game = play(game, "k11")
    due = game.due()
    assert due is not None and due.options == {Option.SWAP, Option.KEEP, Option.STONE, Option.OFFER}
    refused(game, "m12", "outside the area")  # branch a: 5th within d4–l12
    game = play(game, "swap")
    refused(game, "offer:a1,a2,a3,a4,a5,a6,a7,a8,a9,a10", "no fifth-move candidates")
    game = play(game, "l12")
    due = game.due()
    assert due is not None and Option.SWAP in due.options
    game = play(game, "a1")  # White 6 anywhere, declining the last swap
    assert not game.in_opening and game.to_move is Color.BLACK
    assert game.opening_state.swaps == 2 and game.black_player is Player.FIRST  # swapped twice


def test_taraguchi_branch_b_ten_candidates() -> None:
    game = play(Game.new(opening="taraguchi-10"), "h8", "i9", "j10", "k11")
    ten = "offer:a1,b1,c1,d1,e1,f1,g1,h1,i1,j1"
    game = game.play(ten)
    due = game.due()
    assert due is not None and len(due.candidates) == 10 and due.options == {Option.CHOOSE}
    game = play(game, "choose:c1", "o15")
    assert not game.in_opening and game.position.stones == 6


def test_taraguchi_ten_candidates_must_be_ten_and_asymmetric() -> None:
    game = play(Game.new(opening="taraguchi-10"), "h8", "h9", "h10", "h11")
    refused(game, "offer:a1,b1,c1", "10 fifth-move candidates are due")
    refused(game, "offer:g10,i10,a1,b1,c1,d1,e1,f1,g1,h1", "symmetrical")


# --- Swap2 (11.2.2) -----------------------------------------------------------------------------------------------


def swap2() -> Game:
    return play(Game.new(rule="swap2"), "h8", "a1", "i9")


def test_swap2_first_three_stones_are_the_first_players() -> None:
    game = Game.new(rule="swap2")
    for token in ("h8", "a1", "i9"):
        due = game.due()
        assert due is not None and due.actor is Player.FIRST
        game = game.play(token)
    due = game.due()
    assert due is not None and due.actor is Player.SECOND
    assert due.options == {Option.STONE, Option.SWAP, Option.ADD_TWO}


def test_swap2_option_a_plays_white() -> None:
    game = swap2().play("j10")
    assert not game.in_opening and game.black_player is Player.FIRST
    assert game.position.color_at(parse_point("j10")) is Color.WHITE


def test_swap2_option_b_swaps_to_black() -> None:
    game = swap2().play("swap")
    assert not game.in_opening and game.black_player is Player.SECOND and game.to_move is Color.WHITE


@pytest.mark.parametrize(("choice", "black_player"), [("swap", Player.SECOND), ("keep", Player.FIRST)])
def test_swap2_option_c_then_the_first_player_chooses(choice: str, black_player: Player) -> None:
    game = play(swap2(), "add2")
    for colour, token in ((Color.WHITE, "j10"), (Color.BLACK, "k11")):
        due = game.due()
        assert due is not None and due.actor is Player.SECOND
        game = game.play(token)
        assert game.position.color_at(parse_point(token)) is colour
    due = game.due()
    assert due is not None and due.actor is Player.FIRST and Option.SWAP in due.options
    game = game.play(choice)
    assert not game.in_opening and game.black_player is black_player and game.to_move is Color.WHITE


def test_swap2_option_c_choice_declined_by_white_playing_on() -> None:
    game = play(swap2(), "add2", "j10", "k11", "l12")
    assert not game.in_opening and game.black_player is Player.FIRST
    assert game.position.color_at(parse_point("l12")) is Color.WHITE


# --- Registry -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["free", "designated", "soosorv", "soosorv-5", "five-move-two", "taraguchi-10", "swap2"]
)
def test_every_registered_opening_is_found(name: str) -> None:
    assert find_opening(name).name == name


@pytest.mark.parametrize("name", ["swap3", "soosorv-0", "soosorv-x", ""])
def test_unknown_openings_are_refused_with_the_known_names(name: str) -> None:
    with pytest.raises(UnknownNameError, match="taraguchi-10"):
        find_opening(name)


def test_an_offer_outside_the_opening_is_refused() -> None:
    game = play(Game.new(), "h8", "h9")
    with pytest.raises(IllegalActionError, match="only allowed during the opening"):
        game.apply(Offer((parse_point("a1"),)))
    assert game.apply(Stone(parse_point("a1"))).position.stones == 3
