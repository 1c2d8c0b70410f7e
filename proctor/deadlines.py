"""Deadlines: a game's next deadline (flag fall, reconnect window, no-show)."""

from __future__ import annotations

from engine.adjudication import Adjudication


def deadline_of(state: Adjudication) -> int | None:
    deadline = state.next_deadline()
    return deadline[0] if deadline else None
