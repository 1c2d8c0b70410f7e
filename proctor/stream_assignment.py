"""Which analysis worker takes which camera stream (the distributed mode, issue 16): a pure function of what every
worker reads from the stream registry (proctor.stream_registry), so that the workers agree without a coordinator.

Every second each worker reads the live workers' loads and the streams no worker holds, and runs the same greedy
assignment: the unheld streams in a fixed order, each to the least loaded worker with room left (ties by the
worker's id). It then claims the ones that fell to itself. Workers reading the same registry compute the same
assignment, so they rarely race for a stream; when they do (a worker's snapshot was older), the registry's claim is
atomic and the loser takes another next second. A worker that joins takes the new streams and those of a worker that
died; and a worker holding two or more streams beyond the least loaded one lets one go every little while
(:func:`sheds`), which the least loaded then takes: the load evens out without a coordinator, one stream at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkerLoad:
    """A live worker as the registry shows it: the streams it holds and how many it may hold."""

    load: int
    capacity: int


def assign(workers: Mapping[str, WorkerLoad], unheld: Sequence[str]) -> dict[str, str]:
    """Each unheld stream's worker (by stream key), the least loaded first; the streams no worker has room for are
    left out (they wait for a worker)."""
    loads = {worker: state.load for worker, state in workers.items()}
    assigned: dict[str, str] = {}
    for stream in sorted(unheld):
        room = [worker for worker in loads if loads[worker] < workers[worker].capacity]
        if not room:
            break
        chosen = min(room, key=lambda worker: (loads[worker], worker))
        assigned[stream] = chosen
        loads[chosen] += 1
    return assigned


def mine(me: str, workers: Mapping[str, WorkerLoad], unheld: Sequence[str]) -> list[str]:
    """The unheld streams the assignment gives to worker ``me`` (which must be among ``workers``)."""
    return [stream for stream, worker in assign(workers, unheld).items() if worker == me]


def sheds(me: str, workers: Mapping[str, WorkerLoad]) -> bool:
    """Whether worker ``me`` should let one of its streams go for another to take: it holds at least two more than
    the least loaded worker that has room."""
    mine_now = workers[me].load
    others = [state.load for worker, state in workers.items() if worker != me and state.load < state.capacity]
    return bool(others) and mine_now >= min(others) + 2
