"""Penalties (15), the authority to give them (16) and the escalation ladders of 17–18.

An arbiter reports an *offence* (an article such as ``"17.4"`` or ``"36.2"``); the game's :class:`PenaltyBook` works
out which penalty the ladder gives for it, checks that the arbiter's role has the authority (16), and records it with
its article, the ladder step and the evidence.  A request beyond one's authority is refused with the reason.

Ladders (counted per player, per game, per offence, as 17 and 18 say "the same behaviour"):

- ``LADDER``: 1st a warning, 2nd a violation, 3rd a violation (17.1–17.7, 18.1–18.5);
- ``VIOLATION``: a violation at once (17.8–17.10);
- ``LOSS``: the game is lost at once (17.11, 18.8–18.15);
- two violations in one game lose it, whatever the offences (15.3, 18.14).

The rules set no penalty for 18.6, 18.7 or the online offences of 36: :class:`PenaltyPolicy` holds the event's choice
for each, with the defaults explained in docs/adjudication.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Final

from engine.errors import EngineError, IllegalActionError
from engine.openings import Player


class Role(enum.Enum):
    """Who may impose penalties (16)."""

    ARBITER = "arbiter"
    DEPUTY_CHIEF = "deputy-chief"
    CHIEF = "chief"
    COMMITTEE = "committee"
    """The competition organising committee (16.4: disqualification)."""
    APPEALS_COMMITTEE = "appeals-committee"
    """The body that rules on appeals: the rules' technical appeals committee (22.2) or, in events under the
    regulations, their arbitration committee (2021 IX(3)-(4), 2023 VIII(2)); an odd number of members, at least 3.
    It records, votes on and decides appeals, and reads; it acts on no game."""
    REVIEWER = "reviewer"
    """The post-event review panel: reads everything, imposes nothing."""


class PenaltyKind(enum.Enum):
    WARNING = "warning"
    VIOLATION = "violation"
    LOSS = "loss"
    DISQUALIFICATION = "disqualification"

    @property
    def article(self) -> str:
        return {"warning": "15.1", "violation": "15.2", "loss": "15.3", "disqualification": "15.4"}[self.value]


#: 16.1–16.4: who may give each kind of penalty.
AUTHORITY: Final[dict[PenaltyKind, frozenset[Role]]] = {
    PenaltyKind.WARNING: frozenset({Role.ARBITER, Role.DEPUTY_CHIEF, Role.CHIEF}),
    PenaltyKind.VIOLATION: frozenset({Role.DEPUTY_CHIEF, Role.CHIEF}),
    PenaltyKind.LOSS: frozenset({Role.CHIEF}),
    PenaltyKind.DISQUALIFICATION: frozenset({Role.COMMITTEE}),
}

_AUTHORITY_ARTICLE: Final = {
    PenaltyKind.WARNING: "16.1",
    PenaltyKind.VIOLATION: "16.2",
    PenaltyKind.LOSS: "16.3",
    PenaltyKind.DISQUALIFICATION: "16.4",
}

_WHO: Final = {
    PenaltyKind.WARNING: "an arbiter",
    PenaltyKind.VIOLATION: "the chief or deputy chief arbiter",
    PenaltyKind.LOSS: "the chief arbiter",
    PenaltyKind.DISQUALIFICATION: "the competition organising committee",
}


class Ladder(enum.Enum):
    LADDER = "ladder"
    """Warning, then violation, then violation (and two violations lose)."""
    VIOLATION = "violation"
    LOSS = "loss"
    WARNING = "warning"
    """A warning each time (an event may choose this for minor online offences)."""


@dataclass(frozen=True, slots=True)
class Offence:
    article: str
    description: str
    ladder: Ladder
    configurable: bool = False
    """The rules give no penalty: the event chooses (PenaltyPolicy)."""


def _offences() -> dict[str, Offence]:
    table = [
        ("17.1", "playing not in accordance with the opening rules", Ladder.LADDER),
        ("17.2", "sliding a stone across the board", Ladder.LADDER),
        ("17.3", "dropping a stone onto the board", Ladder.LADDER),
        ("17.4", "pressing the clock before placing the stone, or with the other hand", Ladder.LADDER),
        ("17.5", "offering a draw not in accordance with the draw-offer provisions", Ladder.LADDER),
        ("17.6", "adjusting stones not in accordance with the provisions", Ladder.LADDER),
        ("17.7", "marking an unplayed stone on the record sheet", Ladder.LADDER),
        ("17.8", "deliberately slapping the opponent's clock", Ladder.VIOLATION),
        ("17.9", "playing two moves in succession", Ladder.VIOLATION),
        ("17.10", "lifting a placed stone and moving it", Ladder.VIOLATION),
        ("17.11", "deliberately moving stones or scattering the position", Ladder.LOSS),
        ("18.1", "disturbing a game or disrupting order", Ladder.LADDER),
        ("18.2", "pointing at the board to aid one's thinking", Ladder.LADDER),
        ("18.3", "analysing a game in the venue", Ladder.LADDER),
        ("18.4", "the side to move leaving the seat", Ladder.LADDER),
        ("18.5", "leaving one's place without permission, within the playing area", Ladder.LADDER),
        ("18.8", "refusing to sign the result sheet", Ladder.LOSS),
        ("18.9", "uncivil language towards the arbiter or the opponent", Ladder.LOSS),
        ("18.10", "consulting materials or devices, or aided calculation", Ladder.LOSS),
        ("18.11", "an electronic device that emits a sound", Ladder.LOSS),
        ("18.12", "using or looking at a communication device", Ladder.LOSS),
        ("18.13", "adjusting or stopping the clock without authorisation", Ladder.LOSS),
        ("18.14", "being the first to incur a second violation in the game", Ladder.LOSS),
        ("18.15", "refusing to comply with the rules", Ladder.LOSS),
    ]
    offences = {article: Offence(article, text, ladder) for article, text, ladder in table}
    configurable = [
        ("18.6", "leaving the playing area without permission"),
        ("18.7", "refusing to record the game where recording is required"),
        ("36.1", "inappropriate dress on camera"),
        ("36.2", "earphones in or on the ears"),
        ("36.3", "smoking on camera"),
        ("36.4", "a virtual background, or a camera that hides the surroundings"),
        ("36.4.1", "leaving the competition area without permission"),
        ("36.4.2", "another person in the competition area without permission"),
        ("36.4.3", "information or advice from a device or notes, or another board"),
        ("36.4.4", "a finished player not behaving as a spectator"),
        ("36.4.5", "accessing game analysis"),
    ]
    for article, text in configurable:
        offences[article] = Offence(article, text, DEFAULT_POLICY_LADDERS[article], configurable=True)
    return offences


#: Defaults for the offences the rules leave without a penalty (docs/adjudication.md explains each choice):
#: conduct on camera follows the warning ladder of its nearest over-the-board offence (18.5 for leaving, 18.1 for
#: disturbing); help from devices, notes or analysis is 18.10's aided calculation, a loss.
DEFAULT_POLICY_LADDERS: Final[dict[str, Ladder]] = {
    "18.6": Ladder.LADDER,
    "18.7": Ladder.LADDER,
    "36.1": Ladder.LADDER,
    "36.2": Ladder.LADDER,
    "36.3": Ladder.LADDER,
    "36.4": Ladder.LADDER,
    "36.4.1": Ladder.LADDER,
    "36.4.2": Ladder.LADDER,
    "36.4.3": Ladder.LOSS,
    "36.4.4": Ladder.WARNING,
    "36.4.5": Ladder.LOSS,
}

OFFENCES: Final = _offences()


@dataclass(frozen=True, slots=True)
class PenaltyPolicy:
    """An event's penalties for the offences the rules leave open (article → ladder)."""

    ladders: dict[str, Ladder] = field(default_factory=lambda: dict(DEFAULT_POLICY_LADDERS))

    def __post_init__(self) -> None:
        for article in self.ladders:
            if article not in OFFENCES or not OFFENCES[article].configurable:
                raise EngineError(f"the penalty for {article} is set by the rules and cannot be configured")

    def ladder_for(self, offence: Offence) -> Ladder:
        if offence.configurable:
            return self.ladders.get(offence.article, DEFAULT_POLICY_LADDERS[offence.article])
        return offence.ladder


def find_offence(article: str) -> Offence:
    try:
        return OFFENCES[article.strip()]
    except (KeyError, AttributeError):
        raise EngineError(f"no penalised offence under article {article!r}; known: {', '.join(OFFENCES)}") from None


@dataclass(frozen=True, slots=True)
class Penalty:
    """One penalty as recorded: who got it, what, for which offence, by whom, why, and on what evidence."""

    player: Player
    kind: PenaltyKind
    offence: str
    """The article of the offence (e.g. "17.4", "36.2")."""
    occurrence: int
    """How many times this player has now committed this offence in this game."""
    imposed_by: Role
    arbiter: str
    at: int
    reason: str
    """Why this kind: the ladder step and the articles applied."""
    evidence: tuple[str, ...] = ()
    """References to the incidents, events or media that led to it."""

    @property
    def articles(self) -> str:
        return f"{self.offence}, {self.kind.article}"


class AuthorityError(IllegalActionError):
    """A penalty beyond the requester's authority (16)."""


@dataclass(frozen=True, slots=True)
class PenaltyDecision:
    """What a request led to: the penalty and, when it makes two violations, the loss that follows (15.3)."""

    penalty: Penalty
    loses_game: bool


@dataclass(frozen=True, slots=True)
class PenaltyBook:
    """The penalties of one game."""

    penalties: tuple[Penalty, ...] = ()

    def count(self, player: Player, offence: str) -> int:
        return sum(1 for p in self.penalties if p.player is player and p.offence == offence)

    def violations(self, player: Player) -> int:
        return sum(1 for p in self.penalties if p.player is player and p.kind is PenaltyKind.VIOLATION)

    def step(
        self, *, player: Player, offence: str, policy: PenaltyPolicy, kind: PenaltyKind | None = None
    ) -> LadderStep:
        """What the ladder gives ``player`` for ``offence`` now (or, with ``kind=DISQUALIFICATION``, the committee's
        disqualification), before anyone's authority is checked: a preview changes nothing."""
        if kind is PenaltyKind.DISQUALIFICATION:
            found = Offence(
                offence, "serious disruption of the competition (reported by the chief arbiter)", Ladder.LOSS
            )
        else:
            found = find_offence(offence)
        occurrence = self.count(player, found.article) + 1
        ladder = policy.ladder_for(found)
        if kind is PenaltyKind.DISQUALIFICATION:
            chosen: PenaltyKind = kind
            reason = "disqualification by the competition organising committee (15.4, 16.4)"
        elif kind is not None:
            raise IllegalActionError(
                f"the penalty for {found.article} follows its ladder; ask for the offence, not for a {kind.value}",
                found.article,
            )
        else:
            chosen, reason = _ladder_step(found, ladder, occurrence)
        loses = chosen in (PenaltyKind.LOSS, PenaltyKind.DISQUALIFICATION) or (
            chosen is PenaltyKind.VIOLATION and self.violations(player) + 1 >= 2
        )
        return LadderStep(found, ladder, occurrence, chosen, reason, loses)

    def decide(
        self,
        *,
        player: Player,
        offence: str,
        role: Role,
        arbiter: str,
        at: int,
        policy: PenaltyPolicy,
        evidence: tuple[str, ...] = (),
        kind: PenaltyKind | None = None,
    ) -> tuple[PenaltyBook, PenaltyDecision]:
        """Apply the ladder for ``offence`` (or, for the committee, ``kind=DISQUALIFICATION``) and check authority."""
        step = self.step(player=player, offence=offence, policy=policy, kind=kind)
        refusal = step.refusal(role)
        if refusal is not None:
            raise AuthorityError(refusal, step.authority_article)
        penalty = Penalty(player, step.kind, step.offence.article, step.occurrence, role, arbiter, at, step.reason,
                          evidence)  # fmt: skip
        book = replace(self, penalties=(*self.penalties, penalty))
        return book, PenaltyDecision(penalty, step.loses_game)


@dataclass(frozen=True, slots=True)
class LadderStep:
    """What the ladder gives for an offence now (:meth:`PenaltyBook.step`), and who may give it (16)."""

    offence: Offence
    ladder: Ladder
    occurrence: int
    """How many times the player will have committed this offence in this game, this one included."""
    kind: PenaltyKind
    reason: str
    """The ladder step and the articles applied, as :attr:`Penalty.reason` says them."""
    loses_game: bool
    """A loss, a disqualification, or a violation that is the player's second in the game (15.3, 18.14)."""

    @property
    def may_give(self) -> frozenset[Role]:
        return AUTHORITY[self.kind]

    @property
    def authority_article(self) -> str:
        """The article of 16 that says who may give this kind of penalty."""
        return _AUTHORITY_ARTICLE[self.kind]

    @property
    def who_may(self) -> str:
        return _WHO[self.kind]

    def refusal(self, role: Role) -> str | None:
        """Why ``role`` may not give this penalty (16); None when it may."""
        if role in self.may_give:
            return None
        return f"a {self.kind.value} ({self.reason}) can only be given by {self.who_may}, not by the {role.value}"


def _ladder_step(offence: Offence, ladder: Ladder, occurrence: int) -> tuple[PenaltyKind, str]:
    article = offence.article
    source = "event setting" if offence.configurable else ("17" if article.startswith("17") else "18")
    if ladder is Ladder.LADDER:
        if occurrence == 1:
            return PenaltyKind.WARNING, f"first {article} in this game: a warning ({source})"
        return PenaltyKind.VIOLATION, f"{_ordinal(occurrence)} {article} in this game: a violation ({source})"
    if ladder is Ladder.VIOLATION:
        return PenaltyKind.VIOLATION, f"{article}: a violation at once ({source})"
    if ladder is Ladder.WARNING:
        return PenaltyKind.WARNING, f"{article}: a warning ({source})"
    return PenaltyKind.LOSS, f"{article}: the game is lost at once ({source})"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")
