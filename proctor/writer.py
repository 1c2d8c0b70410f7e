"""The writer: one thread that owns every write, with group commit.

Request handlers submit jobs and await them.  The thread takes every job waiting, runs them in one transaction
against a staging :class:`~proctor.staging.Batch`, commits, and only then makes the staged state visible and
resolves the jobs' futures: so a 2xx is never sent for anything that is not stored, many concurrent deliveries share
one commit (one fsync), and a job that fails its checks raises before it writes anything.

A batch whose transaction fails for one job (a row the database refuses) is run again one job per transaction, so
that the job fails alone and the others commit.  A batch that fails for the storage (the database locked by another
process, the disk full) fails as a whole, with a :class:`~proctor.errors.DatabaseBusyError` or
:class:`~proctor.errors.StorageError`; the last such failure is kept for ``/healthz`` until a batch commits again.
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
from sqlalchemy.exc import OperationalError

from proctor.database import writing
from proctor.errors import DatabaseBusyError, ServiceError, StorageError
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
        self.writes = writing(engine)
        self.service = service
        self.publish = publish
        self.max_batch = max_batch
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="proctor-writer", daemon=True)
        self.batches = 0
        self.jobs = 0
        self.last_failure: str | None = None
        """Why the last batch failed for the storage, until a batch commits again (``/healthz``)."""

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
        try:
            with self.writes.begin() as connection:
                batch = Batch()
                result = job(connection, batch)
                self.service.flush(connection, batch)
        except OperationalError as error:
            raise storage_error(error) from error
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
        try:
            outcomes, batch = self._transaction(items)
        except OperationalError as error:  # the storage failed: nothing is stored, nothing is visible
            log.error("a batch of %d job(s) failed to commit: %s", len(items), error.orig)
            failure = storage_error(error)
            self.last_failure = failure.message
            waiting = self._take_waiting() if isinstance(failure, DatabaseBusyError) else []
            _resolve([(item, False, failure) for item in items + waiting])
            return
        except Exception as error:  # one job's rows were refused: run each job alone, so that it fails alone
            if len(items) > 1:
                log.warning("a batch of %d job(s) failed to commit (%s): committing them one by one", len(items), error)
                for item in items:
                    self._commit([item])
                return
            log.exception("a job failed to commit")
            _resolve([(items[0], False, error)])
            return
        self.service.commit(batch)
        self.batches += 1
        self.jobs += len(items)
        self.last_failure = None
        try:
            self.publish(batch.notices)
        except Exception:  # the stream must never undo a commit
            log.exception("publishing %d notice(s) failed", len(batch.notices))
        _resolve(outcomes)

    def _take_waiting(self) -> list[_Item]:
        """The jobs that came while a batch waited for the lock in vain: they are refused with it, at once, rather
        than each batch waiting its own busy timeout in turn."""
        waiting: list[_Item] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return waiting
            if item is _STOP:
                self._queue.put(_STOP)
                return waiting
            waiting.append(item)

    def _transaction(self, items: list[_Item]) -> tuple[list[tuple[_Item, bool, Any]], Batch]:
        """Run the jobs and write their rows in one transaction; raises if it does not commit."""
        batch = Batch()
        outcomes: list[tuple[_Item, bool, Any]] = []
        with self.writes.begin() as connection:
            for item in items:
                outcomes.append((item, *_run_job(item.job, connection, batch)))
            self.service.flush(connection, batch)
        return outcomes, batch


def storage_error(error: OperationalError) -> ServiceError:
    """What a failure of the storage means for the request: busy (another process holds the write lock: retry in a
    moment) or unable to store (the disk full, an I/O error)."""
    reason = str(error.orig)
    if "locked" in reason or "busy" in reason or "lock timeout" in reason:
        return DatabaseBusyError("the database is busy (another process is writing to it): try again in a moment",
                         retry_after_s=2)  # fmt: skip
    return StorageError(f"the database could not store this: {reason}", retry_after_s=5)


def _run_job(job: Job, connection: Connection, batch: Batch) -> tuple[bool, Any]:
    """One job: it may read, and it stages its writes in the batch (or writes its own rows after every check), so a
    refused job (a service error, or the engine's refusal, a ValueError) is undone by restoring the batch; the others
    go on."""
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
