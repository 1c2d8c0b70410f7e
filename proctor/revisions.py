"""Late deliveries: a platform's event stamped before a deadline the service already ruled on (a no-show, a flag,
a reconnect window), delivered after it (Standard Webhooks retries for minutes), is put in its place.

The game's events are replayed with the late one at its stamp, the deadline ticks after it left out (each fires
again if it still falls), and the verdict is revised if it changes: an engine :class:`~engine.adjudication.Revised`
event appended to the game's log, never an edit of stored events, and an incident saying so.  Only within
``late_delivery_window_s`` of the verdict, and only while no arbiter acted on the game after the stamp: a verdict an
arbiter confirmed (or any later arbiter decision) is never revised automatically; the incident asks the arbiter.
Pure: the caller passes the stored events and the state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine import adjudication as adj
from engine.adjudication import Adjudication, AdjudicationError
from engine.game import Outcome

VERDICT_KINDS: Final = frozenset({"verdict", "verdict-pending"})

ACTED: Final = "acted"
"""Why not: an arbiter acted on the game after the late event's stamp."""
WINDOW: Final = "window"
"""Why not: the verdict was ruled longer ago than the window."""
REPLAY: Final = "replay"
"""Why not: the game does not replay with the late event in its place (the engine refuses an event)."""


@dataclass(frozen=True, slots=True)
class Revision:
    """The late event put in its place: the ``Revised`` event to append and the game after it."""

    event: adj.Revised
    after: Adjudication
    verdict: Outcome
    """The verdict it withdraws."""
    early_ms: int
    """How long before the verdict the late event was stamped."""


@dataclass(frozen=True, slots=True)
class LeftToArbiter:
    """The late event would have changed the verdict, or might have, but the service may not revise it itself."""

    why: str
    verdict: Outcome
    early_ms: int


def effective_events(stored: Sequence[adj.Event]) -> list[adj.Event]:
    """The events a game's state is the fold of: after a revision, its events, then what came after it."""
    events: list[adj.Event] = []
    for event in stored:
        if isinstance(event, adj.Revised):
            events = list(event.events)
        else:
            events.append(event)
    return events


def _verdict_at(state: Adjudication) -> int | None:
    """When the game's standing verdict (ended or awaiting the arbiter) was ruled."""
    for entry in reversed(state.log):
        if entry.kind in VERDICT_KINDS:
            return entry.at
        if entry.kind in ("verdict-overruled", "revision"):
            return None
    return None


def plan(
    state: Adjudication, stored: Sequence[adj.Event], late: adj.Event, cause: str, window_ms: int, server_now: int
) -> Revision | LeftToArbiter | None:
    """What to do with ``late`` (the engine event of a delivery, at its own stamp) on a game in ``state`` whose log
    is ``stored``, received at ``server_now``: a revision, the arbiter's decision, or None (no verdict after its
    stamp, or one the late event does not change: the delivery is applied as any other, at the game's time)."""
    verdict = state.pending_verdict or state.outcome
    ruled = _verdict_at(state)
    if verdict is None or ruled is None or late.at >= ruled:
        return None
    early = ruled - late.at
    events = effective_events(stored)
    split = next((i for i, event in enumerate(events) if event.at > late.at), len(events))
    later = events[split:]
    if any(isinstance(event, adj.ArbiterAction) for event in later):
        return LeftToArbiter(ACTED, verdict, early)
    if server_now - ruled > window_ms:
        return LeftToArbiter(WINDOW, verdict, early)
    replayed = (*events[:split], late, *(event for event in later if not isinstance(event, adj.Tick)))
    revised = adj.Revised(state.now, replayed, cause)
    try:
        after = state.apply(revised)
    except AdjudicationError:
        return LeftToArbiter(REPLAY, verdict, early)
    if (after.pending_verdict or after.outcome) == verdict:
        return None
    return Revision(revised, after, verdict, early)
