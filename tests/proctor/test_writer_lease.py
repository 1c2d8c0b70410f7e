"""The writer's lease on PostgreSQL (issue 16): two service processes on one database, the second a standby with
its port closed; the active one is killed with SIGKILL in the middle of a burst of signed webhooks; the standby takes
over within 10 s, the platform's retries land on it, and every delivery is stored exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlmodel import col

from proctor.app import create_app
from proctor.database import create_database_engine
from proctor.errors import ConfigurationError
from proctor.models import FeedDelivery
from proctor.settings import Settings
from tests.proctor.conftest import register_platform
from tests.proctor.test_crash import PROCTOR, deliveries, free_port, post_all

pytestmark = pytest.mark.slow


def leased(database_url: str, port: int, log: Path, **settings: str) -> subprocess.Popen[bytes]:
    """``proctor serve`` holding (or waiting for) the writer's lease; ``settings``: more ``PROCTOR_*`` settings."""
    env = {**os.environ, "PROCTOR_DATABASE_URL": database_url, "PROCTOR_DEADLINE_GRACE_MS": "600000",
           "PROCTOR_WRITER_LEASE": "1", "PROCTOR_MODELS_DIR": str(log.parent / "models"),
           "PROCTOR_MEDIA_DIR": str(log.parent / "media"),
           **{f"PROCTOR_{name.upper()}": value for name, value in settings.items()}}  # fmt: skip
    out = open(log, "ab")  # noqa: SIM115 - handed to the child process
    return subprocess.Popen([str(PROCTOR), "serve", "--port", str(port)], env=env, stdout=out, stderr=out)


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float) -> float:
    """How long until the port accepts connections (AssertionError beyond ``seconds``, or if the process ended)."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if listening(port):
            return time.monotonic() - began
        assert process.poll() is None, f"the process exited with {process.returncode}"
        time.sleep(0.05)
    raise AssertionError(f"port {port} not open within {seconds} s")


def test_the_standby_takes_over_within_10_s_when_the_writer_is_killed_mid_burst(
    database_url: str, tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the writer's lease is PostgreSQL's (a SQLite file is one process's)")
    secret = register_platform(database_url)
    items = deliveries(int(time.time() * 1000))
    first_port, standby_port = free_port(), free_port()
    active = leased(database_url, first_port, tmp_path / "active.log")
    standby = None
    try:
        wait_listening(first_port, active, 30)
        standby = leased(database_url, standby_port, tmp_path / "standby.log")
        time.sleep(3)
        assert standby.poll() is None and not listening(standby_port)  # waiting, its port closed
        acknowledged = asyncio.run(post_all(first_port, secret, items, kill_after=len(items) // 2, process=active))
        killed = time.monotonic()
        active.wait(timeout=10)
        assert active.returncode == -signal.SIGKILL and 0 < len(acknowledged) < len(items)
        wait_listening(standby_port, standby, 10)
        took = time.monotonic() - killed
        assert took < 10, took
        pending = [item for item in items if item[0] not in acknowledged]
        retried = asyncio.run(post_all(standby_port, secret, pending, kill_after=None, process=None))
        assert acknowledged | retried == {webhook_id for webhook_id, _ in items}
    finally:
        stop_all([process for process in (active, standby) if process is not None])
    assert_stored_once(database_url, items)
    assert "after" in (tmp_path / "standby.log").read_text()  # "writer's lease taken after N s as the standby"


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to those still running (SIGKILL to any that does not end within 20 s)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def assert_stored_once(database_url: str, items: list[tuple[str, bytes]]) -> None:
    """Every delivery of the burst stored, each exactly once."""
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        stored = connection.execute(select(col(FeedDelivery.webhook_id))).scalars().all()
        assert sorted(stored) == sorted(webhook_id for webhook_id, _ in items)
        assert connection.execute(select(func.count()).select_from(FeedDelivery)).scalar_one() == len(items)
    engine.dispose()


def test_the_lease_is_refused_on_sqlite(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="WRITER_LEASE needs PostgreSQL"):
        create_app(Settings(database_url=f"sqlite:///{tmp_path / 'p.db'}", writer_lease=True))
    assert Settings.from_env({"PROCTOR_WRITER_LEASE": "0"}).writer_lease is False
    assert Settings.from_env({"PROCTOR_WRITER_LEASE": "yes"}).writer_lease is True
    with pytest.raises(ConfigurationError):
        Settings.from_env({"PROCTOR_WRITER_LEASE": "maybe"})
