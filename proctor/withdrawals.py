"""Withdrawals (24.4): a player leaves a section after a round, with written reasons and the organising committee's
consent (24.1.2), recorded by the chief arbiter, a deputy or the organising committee.  The standings apply it
(proctor.review): in a round robin, a player who played fewer than half of the opponents has every result annulled,
otherwise the results stand and the remaining games are forfeits (24.4.2); in a Swiss, the results stand and the
player is not paired again (24.4.3), a pairing made for them anyway being a forfeit.  A withdrawal is an append-only,
sealed row; its audit entry keeps the reason's hash (it may be about someone's health), the row the reason."""

from __future__ import annotations

import hashlib
from typing import Any, Final

from sqlalchemy import Connection, insert, select
from sqlmodel import col

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from proctor.models import Player, Section, Tournament, Withdrawal
from proctor.service import Service
from proctor.staging import Batch, Notice

ARTICLE: Final = "24.4"
RECORDING_ROLES: Final = (Role.CHIEF, Role.DEPUTY_CHIEF, Role.COMMITTEE)
MAX_REASON: Final = 2000


def _section(connection: Connection, slug: str, section_slug: str) -> Any:
    row = connection.execute(
        select(col(Section.id), col(Section.policy), col(Section.system))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Tournament.slug) == slug, col(Section.slug) == section_slug)
    ).first()  # fmt: skip
    if row is None:
        raise NotFoundError(f"no section {slug}/{section_slug}")
    return row


def record_withdrawal(
    service: Service, connection: Connection, batch: Batch, who: Identity, slug: str, section_slug: str,
    start_no: int, after_round: int, reason: str, at: int,
) -> dict[str, Any]:  # fmt: skip
    """Record a withdrawal; checks first (role, section, player, round, reason, not twice), writes last."""
    if who.role not in RECORDING_ROLES:
        raise ForbiddenError(
            f"a withdrawal is recorded by the chief arbiter, a deputy chief or the organising committee, not the "
            f"{who.role.value} (24.1.2, 24.4)", article=ARTICLE,
        )  # fmt: skip
    if not reason.strip() or len(reason) > MAX_REASON:
        raise BadRequestError(f"'reason' must be the written reasons (1 to {MAX_REASON} characters, 24.1.2)",
                              article="24.1.2")  # fmt: skip
    section = _section(connection, slug, section_slug)
    rounds = int((section.policy or {}).get("rounds") or 1)
    if not 0 <= after_round < rounds:
        raise BadRequestError(f"'after_round' must be 0 (before the first round) to {rounds - 1}: section "
                              f"{section_slug} has {rounds} rounds")  # fmt: skip
    player = connection.execute(
        select(col(Player.name)).where(col(Player.section_id) == section.id, col(Player.start_no) == start_no)
    ).first()
    if player is None:
        raise NotFoundError(f"no player with start number {start_no} in {slug}/{section_slug}")
    known = connection.execute(
        select(col(Withdrawal.after_round))
        .where(col(Withdrawal.section_id) == section.id, col(Withdrawal.start_no) == start_no)
    ).first()  # fmt: skip
    if known is not None:
        raise ConflictError(f"{player.name} (start number {start_no}) already withdrew after round "
                            f"{known.after_round}", article=ARTICLE)  # fmt: skip
    withdrawal_id = connection.execute(
        insert(Withdrawal).values(
            section_id=section.id, start_no=start_no, after_round=after_round, reason=reason.strip(),
            recorded_by=who.name, recorded_role=who.role.value, created_ms=at,
        ).returning(col(Withdrawal.id))
    ).scalar_one()  # fmt: skip
    assert withdrawal_id is not None
    service.seal(connection, batch, "withdrawal", withdrawal_id)
    detail = {"event": slug, "section": section_slug, "start_no": start_no, "after_round": after_round,
              "article": ARTICLE, "reason_sha256": hashlib.sha256(reason.strip().encode()).hexdigest()}  # fmt: skip
    service.audit(connection, batch, at, who.label, "player.withdrawn", f"withdrawal:{withdrawal_id}", detail)
    batch.notices.append(Notice("result", {k: v for k, v in detail.items() if k != "reason_sha256"}))
    return {"id": withdrawal_id, "event": slug, "section": section_slug, "start_no": start_no, "name": player.name,
            "after_round": after_round, "reason": reason.strip(), "recorded_by": who.name,
            "recorded_role": who.role.value, "at": at, "article": ARTICLE}  # fmt: skip
