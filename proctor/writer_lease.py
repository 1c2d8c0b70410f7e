"""One writer at a time on a shared PostgreSQL (issue 16): the writer's lease, and a standby waiting for it.

The service keeps its state in memory between commits and allocates the append-only tables' ids itself
(proctor.staging), so two processes must never write one database at once. With ``WRITER_LEASE`` on, a process takes
PostgreSQL's session-level advisory lock :data:`LEASE_KEY` on a connection of its own before it loads anything, and
holds it for as long as it runs. A second process started the same way is the standby: it waits for the lock, with
its port still closed, so that a proxy in front sends nothing to it. When the active process dies, even by SIGKILL,
its connection closes and PostgreSQL releases the lock at once. The standby, trying every half second, then takes it,
loads the games from their snapshots and the deadlines from the stored state, as a restart does, and opens its port.

A process that loses its lease connection while it runs stops itself (SIGTERM to itself): another process may hold
the lease by then, and a second writer would corrupt the state. SQLite needs no lease: its file has one process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import Final

from sqlalchemy import Connection, Engine, text

log = logging.getLogger("proctor.writer_lease")

LEASE_KEY: Final = 0x70726F63  # "proc"
"""The advisory lock's key, the same for every process of one database."""
TRY_EVERY_S: Final = 0.5
"""How often a standby tries for the lease."""
CHECK_EVERY_S: Final = 2.0
"""How often the holder checks that its lease connection is still there."""


class WriterLease:
    """The lease held on its own connection (not the pool's, which the writer and the readers share)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.connection: Connection | None = None
        self.watch: asyncio.Task[None] | None = None
        self.waited_s = 0.0

    async def acquire(self) -> None:
        """Return once this process holds the lease: at once, or as the standby when the holder is gone (tried every
        :data:`TRY_EVERY_S`, so that a waiting standby still stops when told to)."""
        began = time.monotonic()
        self.connection = await asyncio.to_thread(self.engine.connect)
        waiting = False
        while not await asyncio.to_thread(self._try):
            if not waiting:
                log.info("standby: another process holds the writer's lease; waiting for it")
                waiting = True
            await asyncio.sleep(TRY_EVERY_S)
        self.waited_s = time.monotonic() - began
        log.info("writer's lease taken%s", f" after {self.waited_s:.1f} s as the standby" if waiting else "")

    def _try(self) -> bool:
        assert self.connection is not None
        got = bool(self.connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": LEASE_KEY}).scalar())
        self.connection.commit()
        return got

    def start_watch(self) -> None:
        self.watch = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(CHECK_EVERY_S)
            try:
                await asyncio.to_thread(self._check)
            except Exception as error:
                log.critical("the writer's lease connection is lost (%s): stopping, another process may take over",
                             error)  # fmt: skip
                os.kill(os.getpid(), signal.SIGTERM)
                return

    def _check(self) -> None:
        assert self.connection is not None
        held = self.connection.execute(
            text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = :key AND granted "
                 "AND pid = pg_backend_pid()"), {"key": LEASE_KEY},
        ).scalar()  # fmt: skip
        self.connection.commit()
        if not held:
            raise RuntimeError("the lease is no longer held")

    async def release(self) -> None:
        if self.watch is not None:
            self.watch.cancel()
        if self.connection is not None:
            await asyncio.to_thread(self.connection.close)  # the session ends: the lock goes with it
            self.connection = None
