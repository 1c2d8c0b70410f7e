"""Properties of live adjudication: clocks, determinism, snapshots."""

from __future__ import annotations

import contextlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import Stone
from engine.adjudication import (
    Adjudication,
    AdjudicationError,
    AdjudicationSettings,
    ClockPaused,
    ClockResumed,
    DrawOffered,
    Event,
    Played,
    PlayerDisconnected,
    PlayerJoined,
    PlayerReconnected,
    Tick,
    TimeAdjusted,
    replay,
    restore,
)
from engine.clock import MINUTE, TimeControl, increment, shared, sudden_death
from engine.openings import Player
from engine.penalties import Role

F, S = Player.FIRST, Player.SECOND
T0 = 1_767_225_600_000

CONTROLS = [sudden_death(2), increment(1, 5), shared(3, 1)]


@st.composite
def event_logs(draw: st.DrawFn) -> tuple[AdjudicationSettings, list[Event]]:
    control: TimeControl = draw(st.sampled_from(CONTROLS))
    config = AdjudicationSettings(
        time_control=control,
        start_at=T0,
        lateness_tolerance_ms=draw(st.sampled_from([0, MINUTE])),
        reconnect_window_ms=draw(st.sampled_from([None, 30_000])),
    )
    at = T0 - 10_000
    events: list[Event] = []
    for player in draw(st.permutations([F, S])):
        at += draw(st.integers(0, 20_000))
        events.append(PlayerJoined(at, player))
    points = draw(st.lists(st.integers(0, 224), min_size=5, max_size=60, unique=True))
    for point in points:
        at += draw(st.integers(0, 15_000))
        kind = draw(st.integers(0, 12))
        player = draw(st.sampled_from([F, S]))
        if kind == 0:
            events.append(PlayerDisconnected(at, player))
        elif kind == 1:
            events.append(PlayerReconnected(at, player))
        elif kind == 2:
            events.append(TimeAdjusted(at, "arb", Role.ARBITER, "test", player, draw(st.integers(-5000, 5000)) or 1))
        elif kind == 3:
            events.append(ClockPaused(at, "arb", Role.ARBITER, "test"))
            at += draw(st.integers(0, 60_000))
            events.append(ClockResumed(at, "arb", Role.ARBITER, "test"))
        elif kind == 4:
            events.append(DrawOffered(at, player))
        elif kind == 5:
            events.append(Tick(at))
        events.append(Played(at, Stone(point)))
    return config, events


def apply_all(state: Adjudication, events: list[Event]) -> Adjudication:
    for event in events:
        with contextlib.suppress(AdjudicationError):  # refused events change nothing; the rest go on
            state = state.apply(event)
    return state


@settings(max_examples=80, deadline=None)
@given(event_logs())
def test_clocks_never_go_negative_nor_gain_time_without_a_reason(log: tuple[AdjudicationSettings, list[Event]]) -> None:
    config, events = log
    state = Adjudication.new(config)
    for event in events:
        try:
            after = state.apply(event)
        except AdjudicationError:
            continue
        for player in (F, S):
            before, now = state.clock.remaining_of(player), after.clock.remaining_of(player)
            assert now >= 0
            allowed = 0
            if isinstance(event, TimeAdjusted) and event.player is player:
                allowed += max(0, event.delta_ms)
            if isinstance(event, Played) and state.due_player() is player:
                allowed += config.time_control.increment_ms
            assert now <= before + allowed, (event, player, before, now)
        assert after.clock.pool <= state.clock.pool
        state = after


@settings(max_examples=60, deadline=None)
@given(event_logs())
def test_replaying_the_same_events_always_gives_the_same_state(log: tuple[AdjudicationSettings, list[Event]]) -> None:
    config, events = log
    first = apply_all(Adjudication.new(config), events)
    second = apply_all(Adjudication.new(config), events)
    assert first == second
    assert first.to_dict() == second.to_dict()


@settings(max_examples=60, deadline=None)
@given(event_logs(), st.data())
def test_a_restored_snapshot_continues_identically(
    log: tuple[AdjudicationSettings, list[Event]], data: st.DataObject
) -> None:
    config, events = log
    cut = data.draw(st.integers(0, len(events)))
    head = apply_all(Adjudication.new(config), events[:cut])
    stored = json.loads(json.dumps(head.to_dict()))  # as the service would keep it
    restored = restore(stored)
    assert restored == head
    end = events[-1].at + 10 * MINUTE
    assert apply_all(restored, events[cut:]).advance(end) == apply_all(head, events[cut:]).advance(end)


def test_replay_is_the_fold_of_apply() -> None:
    config = AdjudicationSettings(time_control=sudden_death(5), start_at=T0)
    events: list[Event] = [PlayerJoined(T0, F), PlayerJoined(T0, S), Played(T0 + 5, Stone(112))]
    assert replay(config, events) == apply_all(Adjudication.new(config), events)
