"""Time controls and the clock (14.1, 30.3, the regulations' controls and play-offs)."""

from __future__ import annotations

import pytest

from engine.clock import (
    MINUTE,
    PRESETS,
    SECOND,
    Clock,
    PlayOff,
    TimeControl,
    TimeControlKind,
    find_time_control,
    increment,
    shared,
    sudden_death,
)
from engine.errors import EngineError, IllegalActionError
from engine.openings import Player

F, S = Player.FIRST, Player.SECOND


def test_30_3_rapid_controls() -> None:
    assert PRESETS["rapid-15"] == sudden_death(15, "rapid-15")  # 30.3.1 A
    assert (PRESETS["rapid-10+10"].initial_ms, PRESETS["rapid-10+10"].increment_ms) == (10 * MINUTE, 10 * SECOND)
    assert (PRESETS["super-rapid-5+3"].initial_ms, PRESETS["super-rapid-5+3"].increment_ms) == (5 * MINUTE, 3000)
    assert (PRESETS["blitz-3+2"].initial_ms, PRESETS["blitz-3+2"].increment_ms) == (3 * MINUTE, 2000)
    assert all(PRESETS[name].is_rapid for name in ("rapid-15", "rapid-10+10", "super-rapid-5+3", "blitz-3+2"))


def test_regulations_controls() -> None:
    youth = PRESETS["youth-60"]
    assert (youth.kind, youth.initial_ms) == (TimeControlKind.SUDDEN_DEATH, 60 * MINUTE)
    assert not youth.is_rapid
    pool = PRESETS["youth-shared-60"]
    assert (pool.kind, pool.initial_ms) == (TimeControlKind.SHARED, 60 * MINUTE)


def test_regulations_play_off_chain() -> None:
    chain = PlayOff()
    assert chain.game(0) == chain.game(1) == PRESETS["playoff-5+3"]
    assert chain.game(2) == chain.game(7) == PRESETS["playoff-3+2"]
    assert [chain.first_player_is_original_first(i) for i in range(4)] == [True, False, True, False]
    assert not chain.decided([1.0])
    assert not chain.decided([1.0, 0.0])  # 1-1 after the two-game play-off: single games follow
    assert chain.decided([1.0, 0.5])
    assert not chain.decided([0.5, 0.5, 0.5])  # a drawn single game: play another
    assert chain.decided([0.5, 0.5, 1.0])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10+5", increment(10, 5, "10+5")), ("15", sudden_death(15, "15")), ("blitz-3+2", PRESETS["blitz-3+2"])],
)
def test_time_controls_by_name(text: str, expected: TimeControl) -> None:
    assert find_time_control(text) == expected


@pytest.mark.parametrize("text", ["", "fast", "-5", "10+-2"])
def test_bad_time_controls(text: str) -> None:
    with pytest.raises(EngineError, match="time control"):
        find_time_control(text)


def test_14_1_1_sudden_death_flag_time() -> None:
    clock = Clock.start(sudden_death(1)).run(frozenset({F}), 1000)
    assert clock.flag_time() == 1000 + MINUTE
    later = clock.elapse(1000 + MINUTE)
    assert later.remaining_of(F) == 0 and later.flagged() == {F}
    assert clock.elapse(5 * MINUTE).remaining_of(F) == 0  # never below zero


def test_14_1_2_increment_is_added_per_move() -> None:
    clock = Clock.start(increment(1, 5)).run(frozenset({F}), 0).press(10 * SECOND, F, frozenset({S}))
    assert clock.remaining == (MINUTE - 10 * SECOND + 5 * SECOND, MINUTE) and clock.charged == {S}
    plain = Clock.start(sudden_death(1)).run(frozenset({F}), 0).press(10 * SECOND, F, frozenset({S}))
    assert plain.remaining_of(F) == MINUTE - 10 * SECOND


def test_14_1_3_shared_pool_split_and_sudden_death_after() -> None:
    clock = Clock.start(shared(10, 1)).run(frozenset({F}), 0)
    clock = clock.run(frozenset({S}), 4 * MINUTE)  # the pool runs whoever thinks
    assert clock.pool == 6 * MINUTE and clock.used == (4 * MINUTE, 0)
    split = clock.split_pool(6 * MINUTE)  # the arbiter puts a clock on: half of what remains each
    assert split.pool == 0 and split.remaining == (2 * MINUTE, 2 * MINUTE)
    with pytest.raises(IllegalActionError, match="already been split"):
        split.split_pool(7 * MINUTE)
    unsplit = clock.elapse(11 * MINUTE)  # pool gone at 10 min: one minute of sudden death each after it
    assert unsplit.pool == 0 and unsplit.remaining_of(S) == 0 and unsplit.remaining_of(F) == MINUTE
    assert clock.flag_time() == 4 * MINUTE + 6 * MINUTE + MINUTE


def test_only_shared_time_can_be_split() -> None:
    with pytest.raises(IllegalActionError, match="only a shared-time game"):
        Clock.start(sudden_death(5)).split_pool(0)


def test_adjusting_time_never_goes_below_zero() -> None:
    clock = Clock.start(sudden_death(1))
    assert clock.adjust(F, 30 * SECOND, 0).remaining_of(F) == 90 * SECOND
    with pytest.raises(IllegalActionError, match="only 60000 ms remain"):
        clock.adjust(S, -61 * SECOND, 0)


def test_time_does_not_go_backwards() -> None:
    clock = Clock.start(sudden_death(1)).run(frozenset({F}), 1000)
    with pytest.raises(IllegalActionError, match="backwards"):
        clock.elapse(999)


def test_clock_snapshot_round_trip() -> None:
    clock = Clock.start(shared(10, 1)).run(frozenset({F, S}), 5).elapse(99)
    assert Clock.from_dict(clock.to_dict()) == clock
