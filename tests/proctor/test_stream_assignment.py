"""Which worker takes which stream (proctor.stream_assignment): the least loaded with room first, ties by name,
never beyond a worker's capacity; every worker computing it from the same registry agrees."""

from __future__ import annotations

from proctor.stream_assignment import WorkerLoad, assign, mine, sheds


def test_streams_go_to_the_least_loaded_worker_first_and_ties_by_name() -> None:
    workers = {"b": WorkerLoad(0, 10), "a": WorkerLoad(0, 10), "c": WorkerLoad(2, 10)}
    assert assign(workers, ["s3", "s1", "s2", "s4", "s5"]) == {
        "s1": "a",
        "s2": "b",
        "s3": "a",
        "s4": "b",
        "s5": "a",
    }  # a and b level with c at 2, then a (by name) takes the fifth


def test_a_full_worker_takes_nothing_and_streams_beyond_every_capacity_wait() -> None:
    workers = {"a": WorkerLoad(2, 2), "b": WorkerLoad(0, 1)}
    assert assign(workers, ["x", "y"]) == {"x": "b"}
    assert assign({}, ["x"]) == {}


def test_every_worker_reads_the_same_share_of_an_orphaned_workers_streams() -> None:
    """Three workers left with 3, 1 and 1 streams and four orphaned by a fourth that died: the light ones take
    them, and each worker's own reading agrees with the whole assignment."""
    workers = {"w1": WorkerLoad(3, 40), "w2": WorkerLoad(1, 40), "w3": WorkerLoad(1, 40)}
    orphans = ["p1|front", "p2|front", "p3|side", "p4|screen"]
    whole = assign(workers, orphans)
    assert sorted(whole.values()) == ["w2", "w2", "w3", "w3"]  # level with w1 at 3 each
    assert {s for w in workers for s in mine(w, workers, orphans)} == set(orphans)
    for name in workers:
        assert mine(name, workers, orphans) == [s for s, w in whole.items() if w == name]


def test_a_worker_two_streams_beyond_the_least_loaded_with_room_lets_one_go() -> None:
    assert sheds("a", {"a": WorkerLoad(3, 40), "b": WorkerLoad(1, 40)})
    assert sheds("a", {"a": WorkerLoad(2, 40), "b": WorkerLoad(2, 40), "new": WorkerLoad(0, 40)})
    assert not sheds("a", {"a": WorkerLoad(2, 40), "b": WorkerLoad(1, 40), "c": WorkerLoad(1, 40)})  # even enough
    assert not sheds("a", {"a": WorkerLoad(3, 40), "full": WorkerLoad(1, 1)})  # the lighter one has no room
    assert not sheds("a", {"a": WorkerLoad(5, 40)})  # alone
    assert not sheds("b", {"a": WorkerLoad(3, 40), "b": WorkerLoad(1, 40)})  # the lighter keeps what it has
