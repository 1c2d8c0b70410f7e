"""Arbiter accounts: who an arbiter is (:class:`Identity`, found by a bearer token's hash), and for the dashboard:
passwords (argon2id), login sessions (an HttpOnly cookie, plus a CSRF token the page echoes on every change), and a
limit on failed logins.

API clients keep using bearer tokens (``proctor arbiter add``); a browser logs in with a name and password and gets
a session.  Both end in the same :class:`Identity`, so the authority of article 16 is enforced the same way whichever
door a request came in by.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import deque
from dataclasses import dataclass, field

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, insert, select, update
from sqlmodel import col

from engine.penalties import Role
from proctor.account_log import record_account
from proctor.errors import BadRequestError, NotFoundError
from proctor.models import Arbiter, ArbiterSession
from proctor.wall_clock import now_ms


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
    connection.execute(
        update(ArbiterSession).where(col(ArbiterSession.arbiter_id) == row.id, col(ArbiterSession.ended_ms).is_(None))
        .values(ended_ms=0)
    )  # fmt: skip


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


@dataclass
class LoginThrottle:
    """At most ``attempts`` failed logins per ``window_s`` for one name, and for one address; then refused until the
    oldest failure leaves the window.  In memory: one service process (a restart forgets, which only helps a
    legitimate arbiter)."""

    attempts: int = 5
    window_s: float = 900.0
    failures: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, keys: tuple[str, ...], now: float) -> float:
        """Seconds until a login may be tried again for any of these keys (0: now)."""
        wait = 0.0
        for key in keys:
            times = self.failures.get(key)
            while times and times[0] <= now - self.window_s:
                times.popleft()
            if times is not None and len(times) >= self.attempts:
                wait = max(wait, times[0] + self.window_s - now)
        return wait

    def failed(self, keys: tuple[str, ...], now: float) -> None:
        for key in keys:
            self.failures.setdefault(key, deque()).append(now)

    def succeeded(self, name_key: str) -> None:
        self.failures.pop(name_key, None)
