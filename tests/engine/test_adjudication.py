"""Scenario tests for live adjudication, one or more per article (14, 15, 16, 19, 20, 28.3, 34, 35, 37)."""

from __future__ import annotations

from typing import TypedDict

import pytest

from engine.actions import parse_action
from engine.adjudication import (
    Adjudication,
    AdjudicationError,
    AdjudicationSettings,
    BothDisconnected,
    ClockPaused,
    ClockResumed,
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    Event,
    GameResumed,
    GameSuspended,
    PenaltyImposed,
    Played,
    PlayerDisconnected,
    PlayerJoined,
    PlayerReconnected,
    PlayerResult,
    Resigned,
    ResultConfirmed,
    ResultDeclared,
    Revised,
    SharedTimeSplit,
    Tick,
    TimeAdjusted,
    VerdictConfirmed,
    VerdictOverruled,
    replay,
    restore,
    settings_from_dict,
    settings_to_dict,
)
from engine.board import Color
from engine.clock import MINUTE, PRESETS, SECOND, TimeControl, increment, shared, sudden_death
from engine.game import GameSettings, Termination
from engine.liveness import Source
from engine.openings import Player
from engine.penalties import Role

F, S = Player.FIRST, Player.SECOND
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms


def settings(control: TimeControl = PRESETS["blitz-3+2"], **overrides: object) -> AdjudicationSettings:
    return AdjudicationSettings(time_control=control, start_at=T0, **overrides)  # type: ignore[arg-type]


def seated(control: TimeControl = PRESETS["blitz-3+2"], **overrides: object) -> Adjudication:
    """Both players in the room a minute before the scheduled start."""
    state = Adjudication.new(settings(control, **overrides))
    return state.apply(PlayerJoined(T0 - MINUTE, F)).apply(PlayerJoined(T0 - MINUTE, S))


def play(state: Adjudication, *moves: tuple[int, str]) -> Adjudication:
    """Moves as (seconds after the start, token)."""
    for seconds, token in moves:
        state = state.apply(Played(T0 + seconds * SECOND, parse_action(token)))
    return state


class Who(TypedDict):
    at: int
    arbiter: str
    role: Role
    reason: str


def chief(at: int, reason: str = "") -> Who:
    return {"at": at, "arbiter": "A. Chief", "role": Role.CHIEF, "reason": reason}


def arbiter(at: int, reason: str = "") -> Who:
    return {"at": at, "arbiter": "B. Arbiter", "role": Role.ARBITER, "reason": reason}


# --- 14.2, 34.2: the online clock ---------------------------------------------------------------------------------


def test_14_2_blacks_clock_starts_at_the_scheduled_time_without_a_move() -> None:
    state = seated().advance(T0 + 30 * SECOND)
    assert state.remaining(F) == 3 * MINUTE - 30 * SECOND
    assert state.remaining(S) == 3 * MINUTE
    assert state.log[-1].article == "14.2"


def test_nothing_runs_before_the_start_and_moves_are_refused() -> None:
    state = seated()
    with pytest.raises(AdjudicationError, match="has not started"):
        state.apply(Played(T0 - 1, parse_action("h8")))
    assert state.remaining(F, T0 - 1) == 3 * MINUTE


def test_34_2_a_move_stops_the_movers_clock_and_starts_the_opponents() -> None:
    state = play(seated(), (10, "h8"))
    assert state.clock.charged == {S}
    assert state.remaining(F) == 3 * MINUTE - 10 * SECOND + 2 * SECOND  # 14.1.2: increment after the move
    assert state.remaining(S, T0 + 25 * SECOND) == 3 * MINUTE - 15 * SECOND


def test_14_1_1_sudden_death_the_first_out_of_time_loses_34_4() -> None:
    state = play(seated(sudden_death(1)), (10, "h8"))
    state = state.advance(T0 + 10 * SECOND + MINUTE)  # the second player thinks for a whole minute
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winner) == (Termination.TIME_FORFEIT, Color.BLACK)
    assert state.outcome.at == T0 + 70 * SECOND and state.outcome.article == "34.4"


def test_a_move_after_the_flag_fell_is_too_late() -> None:
    state = play(seated(sudden_death(1)), (10, "h8"))
    with pytest.raises(AdjudicationError, match="game is over"):
        state.apply(Played(T0 + 71 * SECOND, parse_action("h9")))


def test_14_1_3_shared_time_and_the_arbiters_split() -> None:
    state = play(seated(shared(10, 1)), (60, "h8"), (180, "h9"))
    assert state.clock.pool == 7 * MINUTE
    state = state.apply(SharedTimeSplit(**arbiter(T0 + 240 * SECOND, "board 12 is stalling")))
    assert state.clock.remaining == (3 * MINUTE, 3 * MINUTE)  # half of the 6 minutes left each
    assert state.log[-1].article == "14.1.3" and "board 12 is stalling" in state.log[-1].cause
    with pytest.raises(AdjudicationError, match="already been split"):
        state.apply(SharedTimeSplit(**arbiter(T0 + 250 * SECOND)))


# --- 14.3, 35.3, 28.3: arrival ------------------------------------------------------------------------------------


def test_14_3_zero_tolerance_by_default_absent_at_the_start_forfeits() -> None:
    state = Adjudication.new(settings()).apply(PlayerJoined(T0 - MINUTE, F))
    state = state.apply(PlayerJoined(T0, S))  # exactly at the start is in time
    assert state.outcome is None
    late = Adjudication.new(settings()).apply(PlayerJoined(T0 - MINUTE, F)).advance(T0 + 1)
    assert late.outcome is not None
    assert (late.outcome.termination, late.outcome.winner) == (Termination.NO_SHOW, Color.BLACK)
    assert late.results() == {Color.BLACK: PlayerResult.FORFEIT_WIN, Color.WHITE: PlayerResult.FORFEIT_LOSS}


def test_14_3_both_absent_beyond_the_limit_both_forfeit() -> None:
    state = Adjudication.new(settings(lateness_tolerance_ms=5 * MINUTE)).advance(T0 + 5 * MINUTE + 1)
    assert state.outcome is not None and state.outcome.double_loss
    assert state.results() == {Color.BLACK: PlayerResult.FORFEIT_LOSS, Color.WHITE: PlayerResult.FORFEIT_LOSS}
    assert "35.3" in state.outcome.article


def test_14_3_the_absent_players_clock_runs_and_lateness_is_deducted() -> None:
    state = Adjudication.new(settings(sudden_death(15), lateness_tolerance_ms=10 * MINUTE))
    state = state.apply(PlayerJoined(T0 - MINUTE, F))
    state = play(state, (20, "h8"))  # Black plays while White is absent: White's clock has run from the start
    state = state.apply(PlayerJoined(T0 + 4 * MINUTE, S))
    assert state.remaining(S) == 11 * MINUTE  # four minutes of lateness deducted
    assert state.remaining(F) == 15 * MINUTE  # Black's clock did not run while White was absent
    assert state.clock.charged == {S}


def test_14_3_a_late_black_loses_the_time_of_lateness() -> None:
    state = Adjudication.new(settings(sudden_death(15), lateness_tolerance_ms=5 * MINUTE))
    state = state.apply(PlayerJoined(T0 - MINUTE, S)).apply(PlayerJoined(T0 + 3 * MINUTE, F))
    assert state.remaining(F) == 12 * MINUTE and state.remaining(S) == 15 * MINUTE
    assert "late" in state.log[-1].text


def test_absent_players_whose_time_runs_out_within_the_tolerance_forfeit() -> None:
    state = Adjudication.new(settings(sudden_death(1), lateness_tolerance_ms=10 * MINUTE))
    state = state.apply(PlayerJoined(T0, F)).advance(T0 + 2 * MINUTE)
    assert state.outcome is not None and state.outcome.termination is Termination.NO_SHOW
    assert state.outcome.at == T0 + MINUTE and state.outcome.winner is Color.BLACK


def test_19_2_1_d_both_out_of_time_in_an_unknown_order_draws() -> None:
    # Both absent and excused by the arbiter (14.3 "unless the arbiter decides otherwise"): both clocks run and
    # reach zero at the same moment, so neither can be said to have been first.
    state = Adjudication.new(settings(sudden_death(1), lateness_tolerance_ms=0, confirm_time_verdicts=True))
    state = state.advance(T0 + 1)
    assert state.pending_verdict is not None and state.pending_verdict.termination is Termination.NO_SHOW
    state = state.apply(VerdictOverruled(**chief(T0 + 2, "both players reported a platform login fault")))
    state = state.advance(T0 + 2 * MINUTE)
    assert state.pending_verdict is not None
    state = state.apply(VerdictConfirmed(**arbiter(T0 + 3 * MINUTE)))
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winner) == (Termination.BOTH_OUT_OF_TIME, None)
    assert state.outcome.article == "19.2.1 D"


# --- 34.3, 37: disconnection --------------------------------------------------------------------------------------


def test_34_3_the_clock_runs_on_while_disconnected_and_37_6_play_goes_on() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, S))
    state = state.apply(PlayerReconnected(T0 + 80 * SECOND, S))
    assert state.remaining(S) == 3 * MINUTE - 70 * SECOND  # the whole gap was the second player's time
    state = play(state, (90, "h9"))
    assert state.outcome is None
    gaps = state.feed[1].gaps
    assert state.feed[1].source is Source.FEED and len(gaps) == 1 and gaps[0].duration(0) == 60 * SECOND


def test_37_7_without_a_window_a_disconnected_player_loses_when_the_time_runs_out() -> None:
    state = play(seated(), (10, "h8")).apply(PlayerDisconnected(T0 + 20 * SECOND, S))
    state = state.advance(T0 + 10 * MINUTE)
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.article) == (Termination.TIME_FORFEIT, "34.4, 37.7")
    assert state.outcome.at == T0 + 190 * SECOND


def test_37_7_the_events_reconnect_window_loses_even_with_time_left() -> None:
    state = play(seated(sudden_death(30), reconnect_window_ms=3 * MINUTE), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F))  # not even on move
    state = state.advance(T0 + 20 * SECOND + 3 * MINUTE)
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winner) == (Termination.RECONNECT_DEADLINE, Color.WHITE)
    assert state.outcome.article == "37.7"


def test_37_6_reconnecting_inside_the_window_continues() -> None:
    state = play(seated(sudden_death(30), reconnect_window_ms=3 * MINUTE), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F)).apply(PlayerReconnected(T0 + 199 * SECOND, F))
    assert state.advance(T0 + 20 * MINUTE).outcome is None
    later = state.advance(T0 + 40 * MINUTE)  # White's own time runs out, not the first player's window
    assert later.outcome is not None and later.outcome.termination is Termination.TIME_FORFEIT
    assert later.outcome.winner is Color.BLACK


def test_both_disconnected_at_once_is_never_an_automatic_loss() -> None:
    state = play(seated(sudden_death(30), reconnect_window_ms=MINUTE), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F)).apply(PlayerDisconnected(T0 + 20 * SECOND, S))
    state = state.advance(T0 + 5 * MINUTE)
    assert state.outcome is None and state.pending_verdict is not None
    assert "outage" in state.log[-1].text


def test_37_7_both_disconnected_two_seconds_apart_goes_to_the_arbiter_by_default() -> None:
    state = play(seated(sudden_death(30), reconnect_window_ms=MINUTE), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F)).apply(PlayerDisconnected(T0 + 22 * SECOND, S))
    state = state.advance(T0 + 5 * MINUTE)
    assert state.outcome is None and state.pending_verdict is not None and state.pending_verdict.winner is None
    assert state.pending_verdict.at == T0 + 80 * SECOND  # the first player's window ran out, with both down
    assert state.log[-1].kind == "verdict-pending" and "both players were disconnected" in state.log[-1].text
    with pytest.raises(AdjudicationError, match="declare the result"):
        state.apply(VerdictConfirmed(**arbiter(T0 + 6 * MINUTE, "checked")))
    overruled = state.apply(PlayerReconnected(T0 + 6 * MINUTE, F)).apply(PlayerReconnected(T0 + 6 * MINUTE, S))
    overruled = overruled.apply(VerdictOverruled(**chief(T0 + 6 * MINUTE, "platform outage")))
    assert overruled.outcome is None and overruled.pending_verdict is None


def test_37_7_both_disconnected_when_the_time_runs_out_goes_to_the_arbiter_by_default() -> None:
    state = play(seated(sudden_death(1)), (10, "h8"))
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F)).apply(PlayerDisconnected(T0 + 22 * SECOND, S))
    state = state.advance(T0 + 5 * MINUTE)  # White, on move, runs out of time with both players down
    assert state.outcome is None and state.pending_verdict is not None and state.pending_verdict.winner is None


def test_37_7_a_section_may_let_the_first_window_to_run_out_lose_with_both_disconnected() -> None:
    state = play(seated(sudden_death(30), reconnect_window_ms=MINUTE, both_disconnected=BothDisconnected.WINDOW),
                 (10, "h8"))  # fmt: skip
    state = state.apply(PlayerDisconnected(T0 + 20 * SECOND, F)).apply(PlayerDisconnected(T0 + 22 * SECOND, S))
    state = state.advance(T0 + 5 * MINUTE)
    assert state.outcome is not None and state.outcome.winner is Color.WHITE
    assert state.outcome.termination is Termination.RECONNECT_DEADLINE


def test_37_7_the_reading_survives_a_snapshot_and_old_games_keep_theirs() -> None:
    cfg = settings(sudden_death(30), reconnect_window_ms=MINUTE)
    raw = settings_to_dict(cfg)
    assert raw["both_disconnected"] == "arbiter" and settings_from_dict(raw) == cfg
    del raw["both_disconnected"]  # a game stored before the setting: ruled by each player's own window
    assert settings_from_dict(raw).both_disconnected is BothDisconnected.WINDOW


def test_confirmation_option_leaves_time_verdicts_to_the_arbiter() -> None:
    state = play(seated(sudden_death(1), confirm_time_verdicts=True), (10, "h8")).advance(T0 + 5 * MINUTE)
    assert state.outcome is None and state.pending_verdict is not None
    assert state.pending_verdict.termination is Termination.TIME_FORFEIT
    confirmed = state.apply(VerdictConfirmed(**arbiter(T0 + 6 * MINUTE, "flag checked on the platform")))
    assert confirmed.outcome is not None and confirmed.outcome.winner is Color.BLACK
    with pytest.raises(AdjudicationError, match="give time"):
        state.apply(VerdictOverruled(**chief(T0 + 6 * MINUTE, "platform lag")))
    overruled = state.apply(VerdictOverruled(**chief(T0 + 6 * MINUTE, "platform lag"), add_ms=MINUTE))
    assert overruled.outcome is None and overruled.remaining(S) == MINUTE
    assert overruled.clock.charged == {S}
    with pytest.raises(AdjudicationError, match="not the arbiter"):
        state.apply(VerdictOverruled(**arbiter(T0 + 6 * MINUTE), add_ms=MINUTE))


# --- 14.6, 14.5, 14.8, 20: arbiter time actions -------------------------------------------------------------------


def test_14_6_pause_and_resume_are_recorded_and_stop_time() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(ClockPaused(**arbiter(T0 + 20 * SECOND, "player called the arbiter")))
    with pytest.raises(AdjudicationError, match="paused"):
        state.apply(Played(T0 + 30 * SECOND, parse_action("h9")))
    state = state.apply(ClockResumed(**arbiter(T0 + 5 * MINUTE, "call handled")))
    assert state.remaining(S) == 3 * MINUTE - 10 * SECOND
    entries = [(e.kind, e.actor, e.cause) for e in state.log if e.kind.startswith("clock")]
    assert entries == [
        ("clock-paused", "B. Arbiter (arbiter)", "player called the arbiter"),
        ("clock-resumed", "B. Arbiter (arbiter)", "call handled"),
    ]


def test_14_8_adding_and_removing_time() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(TimeAdjusted(**arbiter(T0 + 20 * SECOND, "time spent on a claim"), player=S, delta_ms=30_000))
    assert state.remaining(S) == 3 * MINUTE + 20 * SECOND
    with pytest.raises(AdjudicationError, match="cannot remove"):
        state.apply(TimeAdjusted(**arbiter(T0 + 21 * SECOND), player=F, delta_ms=-10 * MINUTE))
    assert "14.8" in state.log[-1].article


def test_20_suspension_seals_position_and_clocks_and_plays_the_sealed_move() -> None:
    state = play(seated(sudden_death(10)), (10, "h8"))
    sealed = state.apply(GameSuspended(**arbiter(T0 + 60 * SECOND, "venue power cut"), sealed_move=parse_action("i9")))
    with pytest.raises(AdjudicationError, match="suspended"):
        sealed.apply(Played(T0 + 61 * SECOND, parse_action("h9")))
    resumed = sealed.apply(GameResumed(**arbiter(T0 + 2 * 3600 * SECOND, "power back")))
    assert resumed.game.position.stones == 2  # 20.2.4: the sealed move is played first
    assert resumed.remaining(S) == 10 * MINUTE - 50 * SECOND and resumed.clock.charged == {F}


def test_20_1_6_an_illegal_sealed_move_loses() -> None:
    state = play(seated(sudden_death(10)), (10, "h8"))
    state = state.apply(GameSuspended(**arbiter(T0 + 60 * SECOND, "interruption"), sealed_move=parse_action("h8")))
    assert state.outcome is not None and state.outcome.article == "20.1.6" and state.outcome.winner is Color.BLACK


def test_a_round_wide_suspension_turns_no_outage_into_a_loss() -> None:
    state = play(seated(blitz := PRESETS["blitz-3+2"], reconnect_window_ms=MINUTE), (10, "h8"))
    assert blitz.initial_ms == 3 * MINUTE
    state = state.apply(GameSuspended(**chief(T0 + 15 * SECOND, "platform outage"), round_wide=True))
    state = state.apply(PlayerDisconnected(T0 + 16 * SECOND, F)).apply(PlayerDisconnected(T0 + 16 * SECOND, S))
    state = state.advance(T0 + 3600 * SECOND)  # an hour of outage: no flag, no reconnect deadline
    assert state.outcome is None and state.pending_verdict is None
    state = state.apply(PlayerReconnected(T0 + 3601 * SECOND, F)).apply(PlayerReconnected(T0 + 3602 * SECOND, S))
    state = state.apply(GameResumed(**chief(T0 + 3603 * SECOND, "platform back")))
    assert state.remaining(S) == 3 * MINUTE - 5 * SECOND and state.outcome is None


# --- 19.2.2, 35.4: draw offers; 35.2 resignation ------------------------------------------------------------------


def test_19_2_2_a_draw_is_offered_with_ones_move_and_accepted() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(DrawOffered(T0 + 10 * SECOND, F))  # make a move, offer a draw (the press is automatic)
    with pytest.raises(AdjudicationError, match="cannot accept their own offer"):
        state.apply(DrawAccepted(T0 + 11 * SECOND, F))
    state = state.apply(DrawAccepted(T0 + 12 * SECOND, S))
    assert state.outcome is not None and state.outcome.termination is Termination.AGREED_DRAW
    assert state.results() == {Color.BLACK: PlayerResult.DRAW, Color.WHITE: PlayerResult.DRAW}


def test_19_2_2_a_offering_in_the_opponents_time_is_refused() -> None:
    state = play(seated(), (10, "h8"), (20, "h9"))
    with pytest.raises(AdjudicationError, match="one's own time") as caught:
        state.apply(DrawOffered(T0 + 28 * SECOND, S))  # eight seconds into the opponent's time
    assert caught.value.article == "19.2.2 A"
    assert state.apply(DrawOffered(T0 + 21 * SECOND, S)).draw_offer is not None  # with the move
    assert state.apply(DrawOffered(T0 + 28 * SECOND, F)).draw_offer is not None  # in one's own time


def test_19_2_2_c_after_a_decline_the_offerer_waits_for_the_opponents_offer() -> None:
    state = play(seated(), (10, "h8")).apply(DrawOffered(T0 + 10 * SECOND, F))
    state = state.apply(DrawDeclined(T0 + 15 * SECOND, S))
    state = play(state, (20, "h9"), (30, "i8"))
    with pytest.raises(AdjudicationError, match="until the opponent has offered"):
        state.apply(DrawOffered(T0 + 30 * SECOND, F))
    state = play(state, (40, "i9")).apply(DrawOffered(T0 + 40 * SECOND, S))
    state = play(state, (50, "j8"))  # 19.2.2 B: declined by moving
    assert state.draw_offer is None and S in state.draw_barred and F not in state.draw_barred
    state = state.apply(DrawOffered(T0 + 50 * SECOND, F))  # the first player may offer again
    assert state.draw_offer is not None


def test_35_2_resignation() -> None:
    state = play(seated(), (10, "h8")).apply(Resigned(T0 + 20 * SECOND, S))
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winner) == (Termination.RESIGNATION, Color.BLACK)


def test_a_five_on_the_board_ends_the_game_with_its_time() -> None:
    moves = [(i * 5, m) for i, m in enumerate(["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "l8"], start=1)]
    state = play(seated(), *moves)
    assert state.outcome is not None and state.outcome.at == T0 + 45 * SECOND
    assert state.clock.stopped and state.advance(T0 + MINUTE * 60).outcome == state.outcome


# --- 15, 16, 17, 18: penalties ------------------------------------------------------------------------------------


def penalty(at: int, role: Role, player: Player, offence: str, *evidence: str) -> PenaltyImposed:
    return PenaltyImposed(at=at, arbiter="X", role=role, reason="", player=player, offence=offence, evidence=evidence)


def test_17_ladder_warning_violation_violation_loses() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(penalty(T0 + 11_000, Role.ARBITER, F, "17.4", "incident-1"))
    assert state.penalties.penalties[-1].kind.value == "warning"
    with pytest.raises(AdjudicationError, match="only be given by the chief or deputy chief") as caught:
        state.apply(penalty(T0 + 12_000, Role.ARBITER, F, "17.4"))
    assert caught.value.article == "16.2"
    state = state.apply(penalty(T0 + 12_000, Role.DEPUTY_CHIEF, F, "17.4", "incident-2"))
    assert state.outcome is None
    state = state.apply(penalty(T0 + 13_000, Role.DEPUTY_CHIEF, F, "17.4", "incident-3"))
    assert state.outcome is not None and state.outcome.termination is Termination.PENALTY
    assert state.outcome.winner is Color.WHITE and "15.3" in state.outcome.article
    assert "incident-3" in state.log[-1].cause


def test_15_3_two_violations_of_different_offences_lose() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(penalty(T0 + 11_000, Role.CHIEF, S, "17.8"))  # a violation at once
    assert state.outcome is None
    state = state.apply(penalty(T0 + 12_000, Role.CHIEF, S, "17.9"))
    assert state.outcome is not None and state.outcome.winner is Color.BLACK


def test_16_3_only_the_chief_declares_a_loss() -> None:
    state = play(seated(), (10, "h8"))
    with pytest.raises(AdjudicationError, match="only be given by the chief arbiter"):
        state.apply(penalty(T0 + 11_000, Role.DEPUTY_CHIEF, F, "18.10", "camera-clip-7"))
    state = state.apply(penalty(T0 + 11_000, Role.CHIEF, F, "18.10", "camera-clip-7"))
    assert state.outcome is not None and state.outcome.winner is Color.WHITE
    assert state.penalties.penalties[-1].evidence == ("camera-clip-7",)


def test_16_4_only_the_committee_disqualifies() -> None:
    state = play(seated(), (10, "h8"))
    with pytest.raises(AdjudicationError, match="organising committee"):
        state.apply(PenaltyImposed(**chief(T0 + 11_000), player=F, offence="18.15", disqualify=True))
    state = state.apply(
        PenaltyImposed(at=T0 + 11_000, arbiter="OC", role=Role.COMMITTEE, reason="report", player=F,
                       offence="18.15", disqualify=True)
    )  # fmt: skip
    assert F in state.disqualified and state.outcome is not None and state.outcome.winner is Color.WHITE


def test_15_3_a_disciplinary_loss_after_confirmation_keeps_the_opponents_result() -> None:
    state = play(seated(), (10, "h8")).apply(DrawOffered(T0 + 10_000, F)).apply(DrawAccepted(T0 + 11_000, S))
    state = state.apply(ResultConfirmed(**arbiter(T0 + 20_000)))
    state = state.apply(penalty(T0 + 30_000, Role.CHIEF, F, "18.8"))  # refused to sign the result sheet
    assert state.results() == {Color.BLACK: PlayerResult.LOSS, Color.WHITE: PlayerResult.DRAW}


def test_19_1_4_the_chief_declares_a_result() -> None:
    state = play(seated(), (10, "h8"))
    with pytest.raises(AdjudicationError, match="chief"):
        state.apply(ResultDeclared(**arbiter(T0 + 20_000, "21.1.2"), winner=None))
    state = state.apply(ResultDeclared(**chief(T0 + 20_000, "21.1.2 C: stones moved, no record"), winner=None))
    assert state.outcome is not None and state.outcome.termination is Termination.ARBITER_DECISION


def test_15_3_the_chief_declares_that_both_players_lose() -> None:
    state = play(seated(), (10, "h8"))
    with pytest.raises(AdjudicationError, match="chief"):
        state.apply(ResultDeclared(**arbiter(T0 + 20_000, "15.3"), both_lose=True))
    with pytest.raises(AdjudicationError, match="no winner"):
        state.apply(ResultDeclared(**chief(T0 + 20_000, "15.3"), winner=F, both_lose=True))
    state = state.apply(ResultDeclared(**chief(T0 + 20_000, "15.3: both consulted a device"), both_lose=True))
    assert state.outcome is not None and state.outcome.double_loss and state.outcome.winner is None
    assert "15.3" in state.outcome.article and state.log[-1].text.endswith("both players lose")
    assert state.results() == {Color.BLACK: PlayerResult.LOSS, Color.WHITE: PlayerResult.LOSS}


def test_15_3_a_second_declared_loss_makes_both_lose_instead_of_reversing_the_first() -> None:
    state = play(seated(), (10, "h8"))
    state = state.apply(penalty(T0 + 11_000, Role.CHIEF, F, "18.9"))  # Black's uncivil language: Black loses
    assert state.outcome is not None and state.outcome.winner is Color.WHITE
    state = state.apply(penalty(T0 + 12_000, Role.CHIEF, S, "18.9"))  # then White's
    assert state.outcome is not None and state.outcome.double_loss and state.outcome.winner is None
    assert state.results() == {Color.BLACK: PlayerResult.LOSS, Color.WHITE: PlayerResult.LOSS}
    entry = state.log[-1]
    assert entry.kind == "verdict" and "15.3" in entry.article and "after the first player's loss" in entry.text
    # A third declaration changes nothing: both have lost.
    again = state.apply(penalty(T0 + 13_000, Role.CHIEF, F, "18.9"))
    assert again.outcome == state.outcome and again.log[-1].kind == "both-lose"


def test_15_3_a_declared_loss_for_the_player_who_lost_keeps_the_loss() -> None:
    state = play(seated(), (10, "h8")).apply(Resigned(T0 + 11_000, S))
    assert state.outcome is not None and state.outcome.winner is Color.BLACK
    state = state.apply(penalty(T0 + 12_000, Role.CHIEF, F, "18.9"))  # the winner is declared lost: both lose
    assert state.outcome is not None and state.outcome.double_loss


# --- Replay and snapshots -----------------------------------------------------------------------------------------


def a_game() -> list[Event]:
    moves = ["h8", "h9", "i8", "i9", "j8", "j9", "g8", "k8"]
    events: list[Event] = [PlayerJoined(T0 - 5000, F), PlayerJoined(T0 + 2000, S)]
    events += [Played(T0 + (i + 1) * 7000, parse_action(m)) for i, m in enumerate(moves)]
    events += [PlayerDisconnected(T0 + 60_000, F), Tick(T0 + 70_000), PlayerReconnected(T0 + 80_000, F)]
    return events


def test_replaying_the_same_events_gives_the_same_state() -> None:
    cfg = settings(increment(5, 3), lateness_tolerance_ms=MINUTE, game=GameSettings(rule="renju"))
    assert replay(cfg, a_game()) == replay(cfg, a_game())


def test_events_out_of_time_order_are_refused() -> None:
    state = seated()
    with pytest.raises(AdjudicationError, match="time order"):
        state.advance(T0).apply(Tick(T0 - 1))


# --- A late delivery put in its place (issue 14: platforms retry deliveries for minutes) ----------------------------


def test_14_3_a_revision_replays_the_game_with_a_late_arrival_and_withdraws_the_no_show() -> None:
    events: list[Event] = [PlayerJoined(T0 - MINUTE, F), Tick(T0 + 1)]
    ruled = replay(settings(), events)
    assert ruled.outcome is not None and ruled.outcome.termination is Termination.NO_SHOW
    late = (events[0], PlayerJoined(T0 - 30 * SECOND, S))
    revised = ruled.apply(Revised(T0 + 30 * SECOND, late, "a late arrival"))
    assert revised.outcome is None and revised.started and revised.now == T0 + 30 * SECOND
    assert revised.remaining(F) == 3 * MINUTE - 30 * SECOND  # Black's clock has run since the start
    kinds = [entry.kind for entry in revised.log]
    assert kinds[: len(ruled.log)] == [entry.kind for entry in ruled.log]  # what was ruled stays in the log
    (entry,) = [entry for entry in revised.log if entry.kind == "revision"]
    assert entry.text == "a late arrival: the verdict (no-show, black wins) is withdrawn; the game goes on"
    assert entry.article == ruled.outcome.article and entry.at == T0 + 30 * SECOND
    # A revision is an event like any other: replayed and restored, the same state.
    again = replay(settings(), [*events, Revised(T0 + 30 * SECOND, late, "a late arrival")])
    assert again == revised and restore(revised.to_dict()) == revised


def test_a_revision_may_not_replay_events_after_its_own_time() -> None:
    state = seated().apply(Played(T0 + SECOND, parse_action("h8")))
    with pytest.raises(AdjudicationError, match="up to its own time"):
        state.apply(Revised(T0 + SECOND, (PlayerJoined(T0 + 2 * SECOND, F),), "from the future"))
