"""The arbiters' accounts, audited: every change of an account (``proctor arbiter add``, a new password, an event
file's arbiters) appends an :class:`~proctor.models.AccountChange` with what the account grants afterwards (role,
sections, a hash of its token and password hashes), chained by SHA-256 like the audit log.  Accounts are changed from
the command line while a server runs, so they have a chain of their own (the server's audit log is appended by its
writer alone).  ``proctor audit verify`` checks the chain and replays it against the arbiter rows: a role raised,
sections widened, a token or password hash replaced, an arbiter added or removed in the database is reported."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import Connection, insert, select
from sqlmodel import col

from proctor.models import AccountChange, Arbiter

GENESIS = "0" * 64


REMOVED_PREFIX = "removed:"
"""A removed account's row keeps its id (its sessions point at it) under a name that begins with this, with neither
token nor password: no request and no login can use it (proctor.accounts.remove_arbiter)."""


def account_state(row: Any) -> dict[str, Any]:
    """What an arbiter row grants: role, sections, and a hash of its credentials (never the hashes themselves)."""
    credentials = hashlib.sha256(f"{row.token_hash}\n{row.password_hash}".encode()).hexdigest()
    return {"role": row.role, "sections": list(row.sections or []), "credentials_sha256": credentials}


def change_hash(previous: str, at: int, actor: str, arbiter: str, change: str, state: dict[str, Any] | None) -> str:
    canonical = json.dumps(
        {"prev": previous, "at": at, "actor": actor, "arbiter": arbiter, "change": change, "state": state},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )  # fmt: skip
    return hashlib.sha256(canonical.encode()).hexdigest()


def record_account(connection: Connection, name: str, actor: str, change: str, at: int) -> None:
    """Append the account's state as it now is (None: removed), in the transaction that changed it."""
    row = connection.execute(select(Arbiter).where(col(Arbiter.name) == name)).first()
    state = None if row is None else account_state(row)
    head = connection.execute(select(col(AccountChange.hash)).order_by(col(AccountChange.id).desc()).limit(1)).scalar()
    previous = head or GENESIS
    connection.execute(insert(AccountChange).values(
        at_ms=at, actor=actor, arbiter=name, change=change, state=state, prev_hash=previous,
        hash=change_hash(previous, at, actor, name, change, state),
    ))  # fmt: skip


def verify_account_log(connection: Connection) -> list[str]:
    """The chain of account changes, then each arbiter against the replay of its changes."""
    problems: list[str] = []
    previous = GENESIS
    expected: int | None = None
    replayed: dict[str, dict[str, Any] | None] = {}
    for row in connection.execute(select(AccountChange).order_by(col(AccountChange.id))):
        if expected is not None and row.id != expected:
            problems.append(f"account changes {expected}–{row.id - 1} are missing")
        expected = row.id + 1
        if row.prev_hash != previous:
            problems.append(f"account change {row.id}: does not follow the one before it (deleted or reordered)")
        if change_hash(row.prev_hash, row.at_ms, row.actor, row.arbiter, row.change, row.state) != row.hash:
            problems.append(f"account change {row.id}: its content was changed after it was written")
        previous = row.hash
        replayed[row.arbiter] = row.state
    stored = {arbiter.name: arbiter for arbiter in connection.execute(select(Arbiter).order_by(col(Arbiter.id)))}
    for name, arbiter in stored.items():
        if name.startswith(REMOVED_PREFIX) and not arbiter.token_hash and not arbiter.password_hash:
            continue  # a removed account's row, kept for its sessions
        if name not in replayed:
            problems.append(f"arbiter {name} (id {arbiter.id}): not in the account changes (added outside 'proctor "
                            "arbiter add' and the event files)")  # fmt: skip
            continue
        expected_state = replayed[name]
        if expected_state is None:
            problems.append(f"arbiter {name} (id {arbiter.id}): removed, yet it is stored")
            continue
        state = account_state(arbiter)
        if state["role"] != expected_state.get("role"):
            problems.append(f"arbiter {name} (id {arbiter.id}): its role is {state['role']}, but its account changes "
                            f"make it {expected_state.get('role')}")  # fmt: skip
        if state["sections"] != expected_state.get("sections"):
            problems.append(f"arbiter {name} (id {arbiter.id}): its sections are {state['sections'] or 'all'}, but its "
                            f"account changes make them {expected_state.get('sections') or 'all'}")  # fmt: skip
        if state["credentials_sha256"] != expected_state.get("credentials_sha256"):
            problems.append(f"arbiter {name} (id {arbiter.id}): its token or password was replaced outside 'proctor "
                            "arbiter add'")  # fmt: skip
    for name, last in replayed.items():
        if last is not None and name not in stored:
            problems.append(f"arbiter {name}: deleted, but its account changes keep it")
    return problems
