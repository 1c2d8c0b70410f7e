"""A player's microphone state as the page, the desk and the roster show it (proctor.microphone_states): the front
camera's stream carries the sound, so its end is the microphone's loss; then what the check holds, loss first."""

from __future__ import annotations

import pytest

from proctor.microphone_states import Heard, microphone_state


@pytest.mark.parametrize(
    ("front_live", "front_since", "heard", "expected"),
    [
        (False, None, None, {"state": "not-connected", "since": None}),
        (False, 9_000, Heard(1_000), {"state": "lost", "since": 9_000}),  # the front stream ended at 9 s
        (True, 1_000, None, {"state": "not-connected", "since": None}),  # not listened to (yet)
        (True, 1_000, Heard(1_200), {"state": "connected", "since": 1_200}),
        (True, 1_000, Heard(1_200, muted_ms=5_000), {"state": "muted", "since": 5_000}),
        (True, 1_000, Heard(1_200, lost_ms=7_000, muted_ms=5_000), {"state": "lost", "since": 7_000}),
    ],
)
def test_the_state_follows_the_front_stream_then_the_check(
    front_live: bool, front_since: int | None, heard: Heard | None, expected: dict[str, object]
) -> None:
    assert microphone_state(front_live, front_since, heard) == expected


def test_a_workers_report_reads_back_as_it_was_written() -> None:
    heard = Heard(1_200, lost_ms=None, muted_ms=5_000)
    assert Heard.of(heard.to_json()) == heard
    assert Heard.of(None) is None and Heard.of({}) is None
