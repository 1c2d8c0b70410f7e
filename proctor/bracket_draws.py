"""The draw of a knockout that qualifies from a preliminary section (27.1; regulations 2023 VII(3), VII(4)3): the
chief arbiter or a deputy draws it once the preliminaries' last round is complete, from their final standings, the
top ``qualifiers`` seeded by place; a tie across the cut that every tie-break leaves level is decided by a play-off,
so the draw is refused, naming the tied players, unless the chief gives the seeds after it.  The qualifiers join the
knockout section as its players (start number = seed); the draw is an append-only, sealed row, audited with its
reason's hash; the first games' pairings follow (proctor.brackets)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, insert, select

from engine.adjudication import Adjudication
from engine.penalties import Role
from proctor.accounts import Identity
from proctor.brackets import (
    ARTICLE,
    BracketError,
    SectionRow,
    advance_section,
    knockout_section,
    read_draw,
    section_row,
    store_draw,
    vars_of,
)
from proctor.errors import BadRequestError, ConflictError, ForbiddenError
from proctor.models import Player
from proctor.review import complete_rounds, read_section, section_standings
from proctor.staging import Batch, Notice, table_of

DRAWING_ROLES: Final = (Role.CHIEF, Role.DEPUTY_CHIEF)
MAX_REASON: Final = 2000


@dataclass(frozen=True, slots=True)
class Qualifier:
    seed: int
    start_no: int
    """In the qualifying section."""
    name: str
    place: int


def qualifiers_of(
    connection: Connection, row: SectionRow, states: Mapping[int, Adjudication], seeds: Sequence[int] | None
) -> list[Qualifier]:
    """The top ``qualifiers`` of the qualifying section's final standings, seeded by place (regulations 2023 VII(3));
    a tie across the cut must have been played off (VII(4)3): refused, naming the tied players, unless ``seeds`` (the
    qualifying section's start numbers, seed 1 first) are given."""
    source = str(row.knockout.get("qualify_from") or "")
    count = int(row.knockout.get("qualifiers") or 0)
    table = read_section(connection, row.event, source, states)
    if complete_rounds(table) < table.rounds:
        raise BracketError(f"the preliminaries ({table.name}) are not over: round {complete_rounds(table) + 1} of "
                           f"{table.rounds} has games without a result; the bracket is drawn from their final "
                           "standings (regulations 2023 VII(3))", article=ARTICLE)  # fmt: skip
    _, standing = section_standings(table)
    by_no = {s.entrant.start_no: s for s in standing}
    cut_rank = standing[count - 1].rank if len(standing) >= count else 0
    if seeds is not None:
        if len(seeds) != count or len(set(seeds)) != count or any(no not in by_no for no in seeds):
            raise BadRequestError(f"'seeds' must be {count} different start numbers of {table.name}, seed 1 first")
        wrong = [by_no[no] for no in seeds if by_no[no].rank > cut_rank]
        left = [s for s in standing if s.rank < cut_rank and s.entrant.start_no not in seeds]
        if wrong or left:
            names = ", ".join(f"{s.entrant.name} (place {s.rank})" for s in wrong + left)
            raise BracketError(f"{names}: the seeds are the top {count} of {table.name}, a tie at the cut decided by "
                               "its play-off (regulations 2023 VII(3), VII(4)3)", article=ARTICLE)  # fmt: skip
        return [Qualifier(i + 1, no, by_no[no].entrant.name, by_no[no].rank) for i, no in enumerate(seeds)]
    if len(standing) < count:
        raise BracketError(f"{table.name} has {len(standing)} players, fewer than the {count} qualifiers")
    if len(standing) > count and standing[count].rank <= count:
        cut = standing[count - 1].rank
        tied = [s for s in standing if s.rank == cut]
        names = ", ".join(f"{s.entrant.name} ({s.entrant.start_no})" for s in tied)
        last = cut + len(tied) - 1
        raise BracketError(
            f"places {cut}–{last} are tied after every tie-break ({names}) and the cut to the finals is place {count}: "
            "a play-off decides (regulations 2023 VII(4)3); give the seeds after it", article="VII(4)3",
        )  # fmt: skip
    return [Qualifier(i + 1, s.entrant.start_no, s.entrant.name, s.rank) for i, s in enumerate(standing[:count])]


def draw_bracket(
    service: Any, connection: Connection, batch: Batch, who: Identity, slug: str, section_slug: str,
    seeds: Sequence[int] | None, reason: str, at: int, states: Mapping[int, Adjudication],
) -> dict[str, Any]:  # fmt: skip
    """Draw a knockout from its preliminaries (checks first; the draw's row, the players and the first games'
    pairings written last, one transaction)."""
    if who.role not in DRAWING_ROLES:
        raise ForbiddenError(f"the bracket is drawn by the chief arbiter or a deputy chief, not the {who.role.value} "
                             "(16)", article="16")  # fmt: skip
    if not reason.strip() or len(reason) > MAX_REASON:
        raise BadRequestError(f"'reason' must say what the draw follows (1 to {MAX_REASON} characters)")
    row = knockout_section(connection, slug, section_slug)
    if read_draw(connection, row.id) is not None:
        raise ConflictError(f"the bracket of {row.name} is already drawn (27.1)", article=ARTICLE)
    if not row.knockout.get("qualify_from"):
        raise ConflictError(f"{row.name} lists its players: its bracket was drawn when the event was loaded")
    qualifiers = qualifiers_of(connection, row, states, seeds)
    source_id = section_row(connection, slug, str(row.knockout["qualify_from"])).id
    player = table_of(Player)
    originals = {
        r.start_no: r for r in connection.execute(select(player).where(player.c.section_id == source_id)).all()
    }
    connection.execute(insert(player), [
        {"section_id": row.id, "start_no": q.seed, "name": o.name, "team": o.team, "gender": o.gender,
         "birth_date": o.birth_date, "rating": o.rating, "platform_ref": o.platform_ref}
        for q in qualifiers for o in [originals[q.start_no]]
    ])  # fmt: skip
    seeded = [{"seed": q.seed, "start_no": q.start_no, "place": q.place} for q in qualifiers]
    source = {"section": row.knockout["qualify_from"], "chosen": seeds is not None, "qualifiers": seeded}
    draw_id = store_draw(connection, row.id, [q.seed for q in qualifiers], source, reason.strip(), who.name,
                         who.role.value, at)  # fmt: skip
    service.seal(connection, batch, "bracket_draw", draw_id)
    detail = {"event": slug, "section": section_slug, "seeds": source["qualifiers"], "article": ARTICLE,
              "reason_sha256": hashlib.sha256(reason.strip().encode()).hexdigest()}  # fmt: skip
    service.audit(connection, batch, at, who.label, "bracket.drawn", f"bracket_draw:{draw_id}", detail)
    created = advance_section(connection, row.id, states)
    batch.notices.append(Notice("result", {"event": slug, "section": section_slug, "bracket": "drawn"}))
    return {"id": draw_id, "event": slug, "section": section_slug, "seeds": [vars_of(q) for q in qualifiers],
            "games": [vars_of(s) for s in created], "by": who.name, "article": ARTICLE}  # fmt: skip
