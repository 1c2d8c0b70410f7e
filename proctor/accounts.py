"""Arbiter accounts: who an arbiter is (:class:`Identity`, found by a bearer token's hash), and for the dashboard:
passwords (argon2id, checked in a small bounded pool), login sessions (an HttpOnly cookie, plus a CSRF token the page
echoes on every change), and a limit on failed logins per name and address, kept in the database.

API clients keep using bearer tokens (``proctor arbiter add``); a browser logs in with a name and password and gets
a session.  Both end in the same :class:`Identity`, so the authority of article 16 is enforced the same way whichever
door a request came in by.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
import secrets
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, delete, insert, select, update
from sqlmodel import col

from engine.penalties import Role
from proctor.account_log import REMOVED_PREFIX, record_account
from proctor.errors import BadRequestError, BusyError, NotFoundError, TooManyLoginsError
from proctor.models import Arbiter, ArbiterSession, LoginFailure
from proctor.wall_clock import now_ms

T = TypeVar("T")

NAME_MAX = 200
"""The longest arbiter name (the column's width)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """An authenticated arbiter."""

    name: str
    role: Role
    sections: tuple[str, ...] = ()
    """The sections (``event/section``) and boards (``event/section/board``) assigned; none: all (assignments)."""

    @property
    def label(self) -> str:
        return f"{self.name} ({self.role.value})"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def find_arbiter(connection: Connection, token: str) -> Identity | None:
    """The arbiter whose bearer token this is (``proctor arbiter add``)."""
    row = connection.execute(
        select(col(Arbiter.name), col(Arbiter.role), col(Arbiter.sections)).where(
            col(Arbiter.token_hash) == token_hash(token)
        )
    ).first()
    return None if row is None else Identity(row.name, Role(row.role), tuple(row.sections or ()))


MIN_PASSWORD = 10
"""Characters a dashboard password must have at least."""

_HASHER = PasswordHasher()  # argon2id with the library's (RFC 9106 low-memory) parameters; stateless
_DUMMY_HASH = _HASHER.hash("not a password of anyone's")
"""Verified against when the name is unknown, so that a wrong name takes as long as a wrong password."""


def set_password(connection: Connection, name: str, password: str) -> None:
    """Give an existing arbiter a dashboard password (and end their open sessions)."""
    if len(password) < MIN_PASSWORD:
        raise BadRequestError(f"a password needs at least {MIN_PASSWORD} characters")
    row = connection.execute(select(col(Arbiter.id)).where(col(Arbiter.name) == name)).first()
    if row is None:
        raise NotFoundError(f"no arbiter {name!r}")
    connection.execute(update(Arbiter).where(col(Arbiter.id) == row.id).values(password_hash=_HASHER.hash(password)))
    record_account(connection, name, "password", "password", now_ms())
    _end_sessions(connection, int(row.id), 0)


def _end_sessions(connection: Connection, arbiter_id: int, now: int) -> None:
    connection.execute(
        update(ArbiterSession)
        .where(col(ArbiterSession.arbiter_id) == arbiter_id, col(ArbiterSession.ended_ms).is_(None))
        .values(ended_ms=now)
    )


def save_arbiter(
    connection: Connection, name: str, role: str, token: str, sections: list[str] | None, actor: str, now: int
) -> str:
    """Add an arbiter, or give an existing one (by name) a new token, role and sections: their row is kept (their
    sessions and their record point at it), their password too, and their open sessions end, so that the new role
    applies from the next request.  "added" or "changed"."""
    if not name.strip() or len(name) > NAME_MAX:
        raise BadRequestError(f"an arbiter's name must be 1 to {NAME_MAX} characters")
    values = {"role": Role(role).value, "token_hash": token_hash(token), "sections": sections}
    row = connection.execute(select(col(Arbiter.id)).where(col(Arbiter.name) == name)).first()
    if row is None:
        connection.execute(insert(Arbiter).values(name=name, **values))
        change = "added"
    else:
        connection.execute(update(Arbiter).where(col(Arbiter.id) == row.id).values(**values))
        _end_sessions(connection, int(row.id), now)
        change = "changed"
    record_account(connection, name, actor, change, now)
    return change


def remove_arbiter(connection: Connection, name: str, actor: str, now: int) -> None:
    """An arbiter's account removed: their token and password stop working at once, their sessions end (kept, as
    the record of their logins), and the account log says who removed it.  What they did stays under their name."""
    row = connection.execute(select(col(Arbiter.id)).where(col(Arbiter.name) == name)).first()
    if row is None:
        raise NotFoundError(f"no arbiter {name!r}")
    _end_sessions(connection, int(row.id), now)
    connection.execute(
        update(Arbiter).where(col(Arbiter.id) == row.id).values(name=f"{REMOVED_PREFIX}{row.id}:{name}"[:NAME_MAX],
                                                                token_hash="", password_hash="", sections=[])
    )  # fmt: skip
    record_account(connection, name, actor, "removed", now)


@dataclass(frozen=True, slots=True)
class Account:
    """An arbiter's account as ``proctor arbiter list`` shows it."""

    name: str
    role: str
    sections: tuple[str, ...]
    """None assigned: all sections."""
    password: bool
    """Whether they can log in to the dashboard (otherwise an API token only)."""


def list_arbiters(connection: Connection) -> list[Account]:
    """The accounts in use, by name."""
    rows = connection.execute(
        select(col(Arbiter.name), col(Arbiter.role), col(Arbiter.sections), col(Arbiter.password_hash))
        .where(col(Arbiter.name).not_like(f"{REMOVED_PREFIX}%"))
        .order_by(col(Arbiter.name))
    )  # fmt: skip
    return [Account(r.name, r.role, tuple(r.sections or ()), bool(r.password_hash)) for r in rows]


def check_password(connection: Connection, name: str, password: str) -> int | None:
    """The arbiter's id when the password is theirs; None otherwise (unknown name, wrong password, no password)."""
    row = connection.execute(
        select(col(Arbiter.id), col(Arbiter.password_hash)).where(col(Arbiter.name) == name)
    ).first()
    stored = row.password_hash if row is not None and row.password_hash else _DUMMY_HASH
    try:
        _HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return None
    return None if row is None or not row.password_hash else int(row.id)


@dataclass(frozen=True, slots=True)
class SessionView:
    identity: Identity
    csrf: str
    expires_ms: int
    sections: tuple[str, ...]


def open_session(connection: Connection, arbiter_id: int, now: int, ttl_s: int) -> tuple[str, SessionView]:
    """A new session for the arbiter: the cookie's token (returned once, stored hashed) and what it grants."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    connection.execute(insert(ArbiterSession).values(
        token_hash=token_hash(token), arbiter_id=arbiter_id, csrf=csrf, created_ms=now, expires_ms=now + ttl_s * 1000,
    ))  # fmt: skip
    view = find_session(connection, token, now)
    assert view is not None
    return token, view


def find_session(connection: Connection, token: str, now: int) -> SessionView | None:
    """The open, unexpired session with this cookie token."""
    row = connection.execute(
        select(col(Arbiter.name), col(Arbiter.role), col(Arbiter.sections), col(ArbiterSession.csrf),
               col(ArbiterSession.expires_ms))
        .join(Arbiter, col(Arbiter.id) == col(ArbiterSession.arbiter_id))
        .where(col(ArbiterSession.token_hash) == token_hash(token), col(ArbiterSession.ended_ms).is_(None),
               col(ArbiterSession.expires_ms) > now)
    ).first()  # fmt: skip
    if row is None:
        return None
    sections = tuple(row.sections or ())
    return SessionView(Identity(row.name, Role(row.role), sections), row.csrf, row.expires_ms, sections)


def end_session(connection: Connection, token: str, now: int) -> None:
    connection.execute(
        update(ArbiterSession)
        .where(col(ArbiterSession.token_hash) == token_hash(token), col(ArbiterSession.ended_ms).is_(None))
        .values(ended_ms=now)
    )


def csrf_matches(view: SessionView, offered: str) -> bool:
    return bool(offered) and hmac.compare_digest(view.csrf.encode(), offered.encode())


@dataclass(frozen=True, slots=True)
class LoginLimit:
    """The limit on failed logins, per name (case-folded) and client address together, so that tries from another
    address never lock the real arbiter out.  The first ``attempts`` failures in ``window_ms`` are free; after that
    each further try must wait after the last failure, twice as long each time (1 s, 2 s, 4 s … at most
    ``max_delay_s``): a slowdown, never a lock for everyone."""

    attempts: int = 5
    window_ms: int = 900_000
    max_delay_s: int = 900

    def delay_s(self, failures: int) -> int:
        """How long after the last failure the next try may come, with ``failures`` in the window."""
        return 0 if failures < self.attempts else min(2 ** (failures - self.attempts), self.max_delay_s)


def _login_key(name: str, address: str) -> tuple[str, str]:
    return name.casefold()[:200], address[:100]


def reserve_login(connection: Connection, limit: LoginLimit, name: str, address: str, now: int) -> int:
    """Count a login try before its password is checked (as a failure, until it succeeds): parallel tries cannot get
    round the limit.  Returns the tries left when this one fails; :class:`TooManyLoginsError` (with
    ``retry_after_s``) when this name and address must wait first."""
    key_name, key_address = _login_key(name, address)
    same = (col(LoginFailure.name) == key_name, col(LoginFailure.address) == key_address)
    # The delete comes first: on SQLite it takes the write lock, so the count below is every process's latest.
    connection.execute(delete(LoginFailure).where(*same, col(LoginFailure.at_ms) <= now - limit.window_ms))
    times = connection.execute(select(col(LoginFailure.at_ms)).where(*same).order_by(col(LoginFailure.at_ms)))
    failures = list(times.scalars())
    if failures:
        wait_ms = failures[-1] + limit.delay_s(len(failures)) * 1000 - now
        if len(failures) >= limit.attempts and wait_ms > 0:
            raise TooManyLoginsError(
                "too many failed logins for this name from this address: try again later",
                retry_after_s=math.ceil(wait_ms / 1000), tries_left=0,
            )  # fmt: skip
    connection.execute(insert(LoginFailure).values(name=key_name, address=key_address, at_ms=now))
    return max(limit.attempts - len(failures) - 1, 0)


def clear_logins(connection: Connection, name: str, address: str) -> None:
    """A successful login: its name and address start again with every try."""
    key_name, key_address = _login_key(name, address)
    connection.execute(
        delete(LoginFailure).where(col(LoginFailure.name) == key_name, col(LoginFailure.address) == key_address)
    )


def unlock_logins(connection: Connection, name: str, address: str | None = None) -> int:
    """The chief's unlock (``proctor arbiter unlock``): forget the failed logins for a name, from every address or
    one; how many were forgotten."""
    key_name = name.casefold()[:200]
    where = [col(LoginFailure.name) == key_name]
    if address is not None:
        where.append(col(LoginFailure.address) == address[:100])
    return int(connection.execute(delete(LoginFailure).where(*where)).rowcount or 0)


class PasswordPool:
    """Password checks (argon2id: tens of milliseconds and 64 MiB each) in a small pool of threads: ``workers`` at
    once and ``queue`` waiting; a login beyond that is refused at once (:class:`BusyError`, with ``retry_after_s``),
    so that a flood of logins cannot take the service's memory and CPU from everything else."""

    def __init__(self, workers: int = 2, queue: int = 8) -> None:
        self.executor = ThreadPoolExecutor(max_workers=max(workers, 1), thread_name_prefix="password")
        self.capacity = max(workers, 1) + max(queue, 0)
        self.admitted = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """A place in the pool for one login (BusyError when there is none)."""
        with self._lock:
            if self.admitted >= self.capacity:
                raise BusyError("too many logins at once: try again in a moment", retry_after_s=1)
            self.admitted += 1
        try:
            yield
        finally:
            with self._lock:
                self.admitted -= 1

    def run(self, job: Callable[[], T]) -> Future[T]:
        return self.executor.submit(job)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
