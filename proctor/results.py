"""Results entry (28): the chief arbiter or a deputy enters or corrects a pairing's result (16).

For pairings whose game the service does not adjudicate (over the board, or a platform game it missed), or to correct
one.  The result is stored with the pairing, as TRF writes it; each entry is an audit entry (``pairing.result``) with
the old and the new result, who and why, so the pairing's history is the audit log's.  A result that differs from the
service's verdict on the linked game (or given while that game is still in play) is refused unless the chief gives
``override`` (16: the chief arbiter's authority).
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import Connection, Table, select, update

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from proctor.game_results import game_results
from proctor.models import Game, Pairing, Section
from proctor.models import Tournament as TournamentRow
from proctor.review import ENTRY_RESULTS, result_text
from proctor.service import Service
from proctor.staging import Batch, Notice

STORED: Final = {
    "1-0": "1-0", "0-1": "0-1", "½-½": "½-½", "0.5-0.5": "½-½", "=-=": "½-½",
    "+-": "+/-", "-+": "-/+", "--": "-/-", "+/-": "+/-", "-/+": "-/+", "-/-": "-/-", "0-0": "0-0",
}  # fmt: skip
"""What the route accepts, as stored with the pairing (TRF's notation; forfeits 28.3; "0-0": both players lose,
15.3)."""
ENTERING_ROLES: Final = (Role.CHIEF, Role.DEPUTY_CHIEF)


def _table(model: Any) -> Table:
    table: Table = model.__table__
    return table


def section_system(connection: Connection, section_id: int) -> str:
    return str(connection.execute(select(_table(Section).c.system).where(_table(Section).c.id == section_id)).scalar())


def check_role(who: Identity) -> None:
    if who.role not in ENTERING_ROLES:
        raise ForbiddenError(
            f"results are entered by the chief arbiter or a deputy chief, not by the role {who.role.value} (16)",
            article="16",
        )


def stored_result(text: str) -> str:
    stored = STORED.get(text.strip().replace(" ", ""))
    if stored is None:
        raise BadRequestError("'result' must be 1-0, 0-1, ½-½ (or 0.5-0.5), 0-0 (both players lose, 15.3), or a "
                              "forfeit: +-, -+ or -- (28.3)", article="28.3")  # fmt: skip
    return stored


def enter_result(
    service: Service, connection: Connection, batch: Batch, who: Identity, slug: str, section_slug: str,
    round_no: int, board: int, result: str, reason: str, override: bool, server_now: int, game_no: int = 1,
) -> dict[str, Any]:  # fmt: skip
    """Store the result (the pairing's row is written last: every check and the audit entry come first)."""
    check_role(who)
    new = stored_result(result)
    if not reason.strip():
        raise BadRequestError("'reason' must say why the result is entered (it is kept in the audit log)")
    tournament, section, pairing, game = _table(TournamentRow), _table(Section), _table(Pairing), _table(Game)
    row = connection.execute(
        select(pairing)
        .join(section, section.c.id == pairing.c.section_id)
        .join(tournament, tournament.c.id == section.c.tournament_id)
        .where(tournament.c.slug == slug, section.c.slug == section_slug, pairing.c.round_no == round_no,
               pairing.c.board == board, pairing.c.game_no == game_no)
    ).first()  # fmt: skip
    if row is None:
        which = f" game {game_no}" if game_no > 1 else ""
        raise NotFoundError(f"no pairing {slug}/{section_slug} round {round_no} board {board}{which}")
    if row.white_start_no is None:
        raise ConflictError("this pairing is a bye: its result is the pairing-allocated bye's (28.3)", article="28.3")
    verdict: str | None = None
    game_id = connection.execute(select(game.c.id).where(game.c.pairing_id == row.id)).scalar()
    if game_id is not None and game_id in service.games:
        state = service.game(batch, game_id).state
        results = game_results(state)
        verdict = result_text(results) if results is not None else "in play" if state.started else None
    differs = verdict is not None and verdict != ENTRY_RESULTS[new]
    if differs and not override:
        what = "is still in play" if verdict == "in play" else f"has the service's verdict {verdict}"
        raise ConflictError(f"the linked game {game_id} {what}: only the chief arbiter may override it, with "
                            "'override': true (16)", article="16", game=game_id, verdict=verdict)  # fmt: skip
    if differs and who.role is not Role.CHIEF:
        raise ForbiddenError("only the chief arbiter may override the service's verdict (16)", article="16")
    old = row.result
    detail = {
        "event": slug, "section": section_slug, "round": round_no, "board": board, "match_game": game_no, "old": old,
        "new": new,
        "reason": reason, "game": game_id, "verdict": verdict, "override": bool(differs), "article": "28",
    }  # fmt: skip
    service.audit(connection, batch, server_now, who.label, "pairing.result", f"pairing:{row.id}", detail)
    batch.notices.append(Notice("result", {k: v for k, v in detail.items() if k != "reason"}))
    connection.execute(update(pairing).where(pairing.c.id == row.id).values(result=new))
    if section_system(connection, row.section_id) == "knockout":
        service.advance_brackets(connection, batch, [row.section_id])
    return {
        "event": slug, "section": section_slug, "round": round_no, "board": board, "match_game": game_no,
        "result": ENTRY_RESULTS[new],
        "previous": ENTRY_RESULTS.get(old), "game": game_id, "verdict": verdict, "override": bool(differs),
        "by": who.label, "reason": reason, "article": "28",
    }  # fmt: skip
