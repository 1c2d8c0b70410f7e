"""Game play: wins by rule set, forbidden moves in both adjudication modes, pass, draws, and refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import Pass, Resign, Stone
from engine.board import Color, format_point, point_at
from engine.errors import GameOverError, IllegalActionError, NotationError, UnknownNameError
from engine.forbidden import ForbiddenKind
from engine.game import AdjudicationMode, Game, GameSettings, Termination
from engine.records import read_plain, read_rif, record_from_game, replay, replay_record, write_plain, write_rif


def play(game: Game, *tokens: str) -> Game:
    for token in tokens:
        game = game.play(token)
    return game


# Black builds h8..l8 while White plays far away on the a/c columns (never five of its own).
BLACK_ROW = ["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7"]


@pytest.mark.parametrize("rule", ["renju", "freestyle", "swap2"])
def test_an_exact_five_wins_under_every_rule(rule: str) -> None:
    game = play(Game.new(rule=rule), *BLACK_ROW, "l8")
    assert game.outcome is not None
    assert (game.outcome.termination, game.outcome.winner, game.outcome.ply) == (Termination.FIVE, Color.BLACK, 9)


@pytest.mark.parametrize(
    ("rule", "termination", "winner"),
    [
        ("renju", Termination.FORBIDDEN_OVERLINE, Color.WHITE),  # 8.3: Black's overline loses
        ("freestyle", Termination.FIVE, Color.BLACK),  # 11.2.1 B: an overline counts as five
        ("swap2", None, None),  # 11.2.2 C: an overline neither wins nor loses
    ],
)
def test_blacks_overline_depends_on_the_rule_set(rule: str, termination: Termination | None, winner: Color) -> None:
    game = play(Game.new(rule=rule), "h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "m8", "a9", "l8")
    if termination is None:
        assert game.outcome is None
    else:
        assert game.outcome is not None
        assert (game.outcome.termination, game.outcome.winner) == (termination, winner)


def test_whites_overline_wins_under_renju() -> None:
    moves = ["a1", "h8", "a3", "i8", "a5", "j8", "a7", "k8", "a9", "m8", "a11", "l8"]
    game = play(Game.new(rule="renju"), *moves)
    assert game.outcome is not None and game.outcome.winner is Color.WHITE
    assert game.outcome.termination is Termination.FIVE
    swap2 = play(Game.new(rule="swap2", opening="free"), *moves)
    assert swap2.outcome is None


def test_a_double_three_loses_at_once_under_automatic_adjudication() -> None:
    game33 = play(Game.new(), "h8", "o15", "h9", "o13", "i10", "o11", "j10", "o9")
    # h10 joins h8-h9 (vertical three) and i10-j10 (horizontal three): a double-three (8.1).
    result = game33.play("h10")
    assert result.outcome is not None
    assert result.outcome.termination is Termination.FORBIDDEN_33 and result.outcome.winner is Color.WHITE
    assert "8.1" in result.outcome.article and "35.1" in result.outcome.article


def claim_game() -> Game:
    return play(
        Game.new(adjudication=AdjudicationMode.CLAIM), "h8", "o15", "h9", "o13", "i10", "o11", "j10", "o9", "h10"
    )


def test_a_claimed_double_three_wins_for_white() -> None:
    game = claim_game()
    assert game.outcome is None and game.pending[0].kind is ForbiddenKind.DOUBLE_THREE
    claimed = game.play("claim")
    assert claimed.outcome is not None
    assert (claimed.outcome.termination, claimed.outcome.winner) == (Termination.FORBIDDEN_33, Color.WHITE)
    assert "claimed" in claimed.outcome.article


def test_an_unclaimed_double_three_lapses_once_white_moves() -> None:
    game = claim_game().play("a1")
    assert game.pending == ()
    with pytest.raises(IllegalActionError, match="before White moves") as caught:
        game.play("claim")
    assert caught.value.article == "19.1.2 A"


def test_an_overline_can_be_claimed_until_the_game_ends() -> None:
    moves = ["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "m8", "a9", "l8"]
    game = play(Game.new(adjudication=AdjudicationMode.CLAIM), *moves)
    assert game.outcome is None and game.pending[0].kind is ForbiddenKind.OVERLINE
    later = play(game, "b2", "c3", "b4")
    claimed = later.play("claim")
    assert claimed.outcome is not None and claimed.outcome.termination is Termination.FORBIDDEN_OVERLINE


def test_claims_are_refused_under_automatic_adjudication() -> None:
    with pytest.raises(IllegalActionError, match="automatically"):
        play(Game.new(), "h8", "h9").play("claim")


def test_pass_is_refused_in_the_first_five_moves_and_two_passes_draw() -> None:
    game = play(Game.new(), "h8", "h9", "h10", "i9")
    with pytest.raises(IllegalActionError, match="first 5 moves") as caught:
        game.play("pass")
    assert caught.value.article == "9.4"
    game = play(game, "a1", "pass")
    assert game.outcome is None and game.to_move is Color.BLACK
    game = game.play("pass")
    assert game.outcome is not None
    assert (game.outcome.termination, game.outcome.winner, game.outcome.ply) == (Termination.DOUBLE_PASS, None, 7)


def test_a_stone_between_passes_resets_the_count() -> None:
    game = play(Game.new(), "h8", "h9", "h10", "i9", "a1", "pass", "a3", "pass")
    assert game.outcome is None


def full_board_moves() -> list[str]:
    """225 moves filling the board with no five anywhere: colour = ((column + 2 row) // 2) % 2."""
    black = [point_at(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 0]
    white = [point_at(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 1]
    assert (len(black), len(white)) == (113, 112)
    order = [p for pair in zip(black, white, strict=False) for p in pair] + [black[-1]]
    return [format_point(p) for p in order]


@pytest.mark.parametrize("rule", ["freestyle", "swap2"])
def test_a_full_board_is_a_draw(rule: str) -> None:
    played = replay(full_board_moves(), GameSettings(rule=rule, opening="free"))
    assert played.illegal is None and played.outcome is not None
    assert (played.outcome.termination, played.outcome.winner, played.outcome.ply) == (
        Termination.BOARD_FULL,
        None,
        225,
    )


def test_resignation_and_agreed_draw() -> None:
    game = play(Game.new(), "h8", "h9")
    resigned = game.apply(Resign(Color.BLACK))
    assert resigned.outcome is not None
    assert (resigned.outcome.termination, resigned.outcome.winner) == (Termination.RESIGNATION, Color.WHITE)
    assert resigned.outcome.article == "35.2"
    drawn = game.play("draw")
    assert drawn.outcome is not None and drawn.outcome.result == "draw"


def test_every_termination_names_its_article() -> None:
    for termination in Termination:
        assert termination.article[0].isdigit()


def test_illegal_input_leaves_the_game_unchanged() -> None:
    game = play(Game.new(), "h8", "h9")
    before = (game.position, game.actions, game.to_move)
    for token in ("h8", "z1", "swap", "offer:a1", "declare:2"):
        with pytest.raises((IllegalActionError, NotationError)):
            game.play(token)
    assert (game.position, game.actions, game.to_move) == before


def test_nothing_after_the_end() -> None:
    game = play(Game.new(), *BLACK_ROW, "l8")
    with pytest.raises(GameOverError, match="the game is over"):
        game.play("a9")


def test_unknown_rule_names_are_refused() -> None:
    with pytest.raises(UnknownNameError, match="freestyle, renju, swap2"):
        Game.new(rule="gomoku-pro")


@st.composite
def legal_games(draw: st.DrawFn) -> Game:
    """A random legal game under a random rule set, played until it ends or runs out of moves."""
    rule = draw(st.sampled_from(["renju", "freestyle", "swap2"]))
    game = Game.new(rule=rule, opening="free")
    for _ in range(draw(st.integers(1, 150))):
        if game.outcome is not None:
            break
        if game.position.stones >= 5 and draw(st.integers(0, 30)) == 0:
            game = game.apply(Pass())
            continue
        game = game.apply(Stone(draw(st.sampled_from(list(game.position.empty_points())))))
    return game


@settings(max_examples=60, deadline=None)
@given(legal_games())
def test_a_legal_game_replayed_from_its_records_gives_the_same_outcome(game: Game) -> None:
    record = record_from_game(game, black="Black player", white="White player")
    for reread in (read_plain(write_plain(record), rule=record.rule, opening="free"), read_rif(write_rif([record]))[0]):
        again = replay_record(reread)
        assert again.illegal is None
        assert again.outcome == game.outcome
        assert again.game.position == game.position
