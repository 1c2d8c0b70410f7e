"""The results loaded from event files, audited: each pairing an event file stores (``proctor event load``) appends a
:class:`~proctor.models.LoadedResult` with its result as the file gave it ("" for none yet), chained by SHA-256 like
the account changes and for the same reason (event files are loaded from the command line beside a running server,
whose writer alone appends to the audit log).  ``proctor audit verify`` checks the chain, and each pairing's result
against the last result loaded or entered (``pairing.result``) for it, whichever came later."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from sqlalchemy import Connection, insert, select
from sqlmodel import col

from proctor.models import LoadedResult

GENESIS = "0" * 64


def loaded_hash(previous: str, at: int, actor: str, pairing_id: int, result: str) -> str:
    canonical = json.dumps(
        {"prev": previous, "at": at, "actor": actor, "pairing": pairing_id, "result": result},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )  # fmt: skip
    return hashlib.sha256(canonical.encode()).hexdigest()


def record_loaded_results(connection: Connection, results: Iterable[tuple[int, str]], actor: str, at: int) -> None:
    """Append each (pairing id, result) as loaded, in the transaction that stored them."""
    head = connection.execute(select(col(LoadedResult.hash)).order_by(col(LoadedResult.id).desc()).limit(1)).scalar()
    previous = head or GENESIS
    for pairing_id, result in results:
        digest = loaded_hash(previous, at, actor, pairing_id, result)
        connection.execute(insert(LoadedResult).values(
            at_ms=at, actor=actor, pairing_id=pairing_id, result=result, prev_hash=previous, hash=digest,
        ))  # fmt: skip
        previous = digest


def verify_loaded_results(connection: Connection) -> tuple[list[str], dict[int, tuple[int, str]]]:
    """The chain's problems, and the last result loaded for each pairing (when, what)."""
    problems: list[str] = []
    previous, expected = GENESIS, None
    last: dict[int, tuple[int, str]] = {}
    for row in connection.execute(select(LoadedResult).order_by(col(LoadedResult.id))):
        if expected is not None and row.id != expected:
            problems.append(f"loaded results {expected}–{row.id - 1} are missing")
        expected = row.id + 1
        if row.prev_hash != previous:
            problems.append(f"loaded result {row.id}: does not follow the one before it (deleted or reordered)")
        if loaded_hash(row.prev_hash, row.at_ms, row.actor, row.pairing_id, row.result) != row.hash:
            problems.append(f"loaded result {row.id}: its content was changed after it was written")
        previous = row.hash
        last[row.pairing_id] = (row.at_ms, row.result)
    return problems, last
