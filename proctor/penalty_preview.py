"""A penalty previewed before it is given: what the ladder would give a game's player for an offence (17, 18 and the
event's ``penalties`` policy), whether the arbiter may give it (16: the role's authority and the assignment), and
whether it loses the game (15.3).  Nothing is written; the submit decides again on the server, and a submit that
carries what the arbiter saw (``expect``) is refused when the ladder has moved since, or when it loses the game
without ``confirm_loss``.

:func:`preview` is pure (the game's state in, a :class:`PenaltyPreview` out); :func:`read_preview` adds the
assignment check and the players' names from the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from engine.adjudication import Adjudication
from engine.errors import EngineError
from engine.openings import Player
from engine.penalties import AUTHORITY, LadderStep, Penalty, PenaltyKind, Role
from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_game
from proctor.errors import BadRequestError, ConflictError, ForbiddenError
from proctor.models import Game

KINDS: Final = tuple(kind.value for kind in PenaltyKind)


@dataclass(frozen=True, slots=True)
class PenaltyRequest:
    """What is asked: the player (by their platform id), the offence's article, and the committee's
    disqualification instead of a ladder step."""

    player_ref: str
    offence: str
    disqualify: bool = False

    @classmethod
    def from_body(
        cls, body: Mapping[str, Any], refs: Mapping[str, Player], default_player: str | None = None
    ) -> PenaltyRequest:
        """The request in a JSON body; :class:`BadRequestError` for a player not of this game or a missing offence."""
        player = body.get("player") or default_player
        if not isinstance(player, str) or player not in refs:
            raise BadRequestError(f"'player' must be one of this game's player ids: {', '.join(sorted(refs))}")
        offence = body.get("offence")
        if not isinstance(offence, str) or not offence.strip():
            raise BadRequestError("'offence' must be the article of the offence, e.g. '17.4' or '36.2'")
        disqualify = body.get("disqualify", False)
        if not isinstance(disqualify, bool):
            raise BadRequestError("'disqualify' must be true or false")
        return cls(player, offence.strip(), disqualify)


@dataclass(frozen=True, slots=True)
class Expected:
    """What the arbiter saw in the preview when they submitted: the penalty and whether it loses the game."""

    penalty: str
    loses_game: bool

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Expected | None:
        raw = body.get("expect")
        if raw is None:
            return None
        if not isinstance(raw, dict) or raw.get("penalty") not in KINDS or not isinstance(raw.get("loses_game"), bool):
            raise BadRequestError(f"'expect' must be {{penalty: {' | '.join(KINDS)}, loses_game: true or false}}")
        return cls(raw["penalty"], raw["loses_game"])


@dataclass(frozen=True, slots=True)
class PenaltyPreview:
    game_id: int
    player_ref: str
    colour: str
    step: LadderStep
    role: Role
    earlier: tuple[Penalty, ...]
    """The player's penalties in this game so far, oldest first."""
    violations_before: int
    game_over: bool
    result_confirmed: bool
    assignment_refusal: str | None = None
    """Why an assigned arbiter may not act on this game (16), None when they may."""

    @property
    def authority_refusal(self) -> str | None:
        return self.step.refusal(self.role)

    @property
    def allowed(self) -> bool:
        return self.authority_refusal is None and self.assignment_refusal is None

    @property
    def loss_articles(self) -> str | None:
        """The articles of the loss that follows (as the engine gives them), None when the game is not lost."""
        if not self.step.loses_game:
            return None
        if self.step.kind is PenaltyKind.VIOLATION:
            return "15.3, 18.14"
        return f"{self.step.offence.article}, 15.3, 19.1.4"

    @property
    def loss_why(self) -> str | None:
        """``two-violations``, ``loss`` or ``disqualification``; None when the game is not lost."""
        if not self.step.loses_game:
            return None
        return "two-violations" if self.step.kind is PenaltyKind.VIOLATION else self.step.kind.value

    def text(self) -> str:
        """The preview in one English sentence (the desk says it in its own words from the fields)."""
        step = self.step
        said = f"the {self.colour} player: a {step.kind.value} ({step.offence.article}, {step.kind.article}): " \
               f"{step.reason}"  # fmt: skip
        if step.loses_game:
            said += f"; the game is lost ({self.loss_articles})"
            if self.result_confirmed:
                said += ", the opponent's confirmed result stands"
        refusal = self.assignment_refusal or self.authority_refusal
        return said + (f". Refused: {refusal}" if refusal else f". The {self.role.value} may give it")

    def json(self, names: Mapping[str, str] | None = None) -> dict[str, Any]:
        step = self.step
        refusal = None
        if self.assignment_refusal is not None:
            refusal = {"why": "assignment", "article": "16", "message": self.assignment_refusal}
        elif self.authority_refusal is not None:
            refusal = {"why": "authority", "article": step.authority_article, "message": self.authority_refusal}
        return {
            "game": self.game_id,
            "player": {"id": self.player_ref, "colour": self.colour, "name": (names or {}).get(self.player_ref)},
            "offence": {
                "article": step.offence.article, "description": step.offence.description,
                "ladder": step.ladder.value, "set_by": "event" if step.offence.configurable else "rules",
            },
            "occurrence": step.occurrence, "penalty": step.kind.value, "article": step.kind.article,
            "articles": f"{step.offence.article}, {step.kind.article}", "reason": step.reason,
            "loses_game": step.loses_game,
            "loss": None if not step.loses_game else {
                "why": self.loss_why, "articles": self.loss_articles, "result_stands": self.result_confirmed,
            },
            "violations_before": self.violations_before,
            "earlier": [
                {"penalty": p.kind.value, "offence": p.offence, "occurrence": p.occurrence, "at": p.at,
                 "by": p.arbiter}
                for p in self.earlier
            ],
            "game_over": self.game_over,
            "role": self.role.value, "allowed": self.allowed,
            "may_give": sorted(role.value for role in AUTHORITY[step.kind]),
            "authority_article": step.authority_article, "refusal": refusal,
            "text": self.text(),
        }  # fmt: skip


def preview(
    state: Adjudication, game_id: int, refs: Mapping[str, Player], request: PenaltyRequest, role: Role,
    assignment_refusal: str | None = None,
) -> PenaltyPreview:  # fmt: skip
    """What the ladder would give now; :class:`BadRequestError` for an offence no article penalises."""
    seat = refs[request.player_ref]
    kind = PenaltyKind.DISQUALIFICATION if request.disqualify else None
    try:
        step = state.penalties.step(player=seat, offence=request.offence, policy=state.settings.penalty_policy,
                                    kind=kind)  # fmt: skip
    except EngineError as error:
        raise BadRequestError(getattr(error, "why", None) or str(error)) from None
    earlier = tuple(p for p in state.penalties.penalties if p.player is seat)
    return PenaltyPreview(
        game_id, request.player_ref, state.color_of(seat).value, step, role, earlier,
        state.penalties.violations(seat), state.is_over, state.confirmed, assignment_refusal,
    )  # fmt: skip


def require_as_previewed(seen: PenaltyPreview, expected: Expected | None, confirm_loss: bool) -> None:
    """Refuse (409) a submit whose penalty is no longer what the arbiter saw, or that loses the game unconfirmed."""
    step = seen.step
    if expected is not None and (expected.penalty, expected.loses_game) != (step.kind.value, step.loses_game):
        lost = " and loses the game" if step.loses_game else ""
        raise ConflictError(
            f"the ladder now gives a {step.kind.value}{lost} ({step.reason}), not the {expected.penalty} previewed: "
            "look at the preview again", preview=seen.json(),
        )  # fmt: skip
    if step.loses_game and not confirm_loss:
        raise ConflictError(
            f"this {step.kind.value} loses the game ({seen.loss_articles}): confirm it with 'confirm_loss'",
            preview=seen.json(),
        )


def assignment_refusal(connection: Connection, who: Identity, game_id: int) -> str | None:
    try:
        require_assigned_to_game(connection, who, game_id, f"game {game_id}")
    except ForbiddenError as error:
        return error.message
    return None


def player_names(connection: Connection, game_id: int) -> dict[str, str]:
    row = connection.execute(
        select(col(Game.black_ref), col(Game.black_name), col(Game.white_ref), col(Game.white_name))
        .where(col(Game.id) == game_id)
    ).first()  # fmt: skip
    if row is None:
        return {}
    return {ref: name for ref, name in ((row[0], row[1]), (row[2], row[3])) if ref and name}


def read_preview(
    connection: Connection, state: Adjudication, game_id: int, refs: Mapping[str, Player], request: PenaltyRequest,
    who: Identity,
) -> dict[str, Any]:  # fmt: skip
    """The preview for this arbiter, with their assignment checked and the players' names."""
    seen = preview(state, game_id, refs, request, who.role, assignment_refusal(connection, who, game_id))
    return seen.json(player_names(connection, game_id))
