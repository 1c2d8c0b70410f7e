"""The writer: one thread that owns every write, with group commit.

Request handlers submit jobs and await them.  The thread takes every job waiting, runs them in one transaction
against a staging :class:`~proctor.staging.Batch`, commits, and only then makes the staged state visible and
resolves the jobs' futures: so a 2xx is never sent for anything that is not stored, many concurrent deliveries share
one commit (one fsync), and a job that fails its checks raises before it writes anything.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

from proctor.errors import ServiceError
from proctor.service import Service
from proctor.staging import Batch, Notice

log = logging.getLogger("proctor.writer")

Job = Callable[[Connection, Batch], Any]


@dataclass
class _Item:
    job: Job
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop


_STOP = object()


class Writer:
    def __init__(self, engine: Engine, service: Service, publish: Callable[[list[Notice]], None], max_batch: int = 500):
        self.engine = engine
        self.service = service
        self.publish = publish
        self.max_batch = max_batch
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="proctor-writer", daemon=True)
        self.batches = 0
        self.jobs = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=30)

    async def submit(self, job: Job) -> Any:
        """Run ``job(connection, batch)`` in the next transaction; its result once committed, or its error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.put(_Item(job, future, loop))
        return await future

    def run_now(self, job: Job) -> Any:
        """Synchronous use, when no event loop runs (command line, start-up)."""
        with self.engine.begin() as connection:
            batch = Batch()
            result = job(connection, batch)
            self.service.flush(connection, batch)
        self.service.commit(batch)
        self.publish(batch.notices)
        return result

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            items = [first]
            while len(items) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    self._queue.put(_STOP)
                    break
                items.append(item)
            try:
                self._commit(items)
            except Exception as error:  # the writer thread must outlive any failure, or every request would hang
                log.exception("the writer failed on a batch of %d job(s)", len(items))
                _resolve([(item, False, error) for item in items])

    def _commit(self, items: list[_Item]) -> None:
        batch = Batch()
        outcomes: list[tuple[_Item, bool, Any]] = []
        try:
            with self.engine.begin() as connection:
                for item in items:
                    outcomes.append((item, *_run_job(item.job, connection, batch)))
                self.service.flush(connection, batch)
        except Exception as error:  # the transaction failed: nothing is stored, nothing is visible
            log.exception("a batch of %d job(s) failed to commit", len(items))
            _resolve([(item, False, error) for item in items])
            return
        self.service.commit(batch)
        self.batches += 1
        self.jobs += len(items)
        try:
            self.publish(batch.notices)
        except Exception:  # the stream must never undo a commit
            log.exception("publishing %d notice(s) failed", len(batch.notices))
        _resolve(outcomes)


def _run_job(job: Job, connection: Connection, batch: Batch) -> tuple[bool, Any]:
    """One job: it may read, and it stages its writes in the batch (it never writes itself), so a refused job (a
    service error, or the engine's refusal, a ValueError) is undone by restoring the batch; the others go on."""
    mark = batch.mark()
    try:
        return True, job(connection, batch)
    except (ServiceError, ValueError) as error:
        batch.restore(mark)
        return False, error


def _resolve(outcomes: list[tuple[_Item, bool, Any]]) -> None:
    """Hand the results back to their event loops: one wake-up per loop and batch, not one per job."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for item, ok, value in outcomes:
        by_loop.setdefault(item.loop, []).append((item.future, ok, value))
    for loop, results in by_loop.items():
        loop.call_soon_threadsafe(_settle, results)


def _settle(results: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in results:
        if ok:
            _set_result(future, value)
        else:
            _set_exception(future, value)


def _set_result(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
