"""Penalty ladders (17, 18), authority (16) and the event's policy for offences the rules leave open."""

from __future__ import annotations

import pytest

from engine.errors import EngineError
from engine.openings import Player
from engine.penalties import (
    DEFAULT_POLICY_LADDERS,
    OFFENCES,
    AuthorityError,
    Ladder,
    PenaltyBook,
    PenaltyKind,
    PenaltyPolicy,
    Role,
)

F, S = Player.FIRST, Player.SECOND


def report(book: PenaltyBook, offence: str, role: Role = Role.CHIEF, player: Player = F,
           policy: PenaltyPolicy | None = None) -> tuple[PenaltyBook, PenaltyKind, bool]:  # fmt: skip
    book, decision = book.decide(
        player=player, offence=offence, role=role, arbiter="x", at=0, policy=policy or PenaltyPolicy()
    )
    return book, decision.penalty.kind, decision.loses_game


@pytest.mark.parametrize("offence", [f"17.{n}" for n in range(1, 8)] + [f"18.{n}" for n in range(1, 6)])
def test_ladder_offences_warning_then_violation_then_violation_and_loss(offence: str) -> None:
    book = PenaltyBook()
    book, kind, loses = report(book, offence)
    assert (kind, loses) == (PenaltyKind.WARNING, False)
    book, kind, loses = report(book, offence)
    assert (kind, loses) == (PenaltyKind.VIOLATION, False)
    book, kind, loses = report(book, offence)
    assert (kind, loses) == (PenaltyKind.VIOLATION, True)  # two violations in one game (15.3)


def test_the_ladder_counts_each_offence_separately_and_each_player_separately() -> None:
    book = PenaltyBook()
    book, kind, _ = report(book, "17.4")
    book, kind2, _ = report(book, "17.5")
    book, kind3, _ = report(book, "17.4", player=S)
    assert (kind, kind2, kind3) == (PenaltyKind.WARNING, PenaltyKind.WARNING, PenaltyKind.WARNING)


@pytest.mark.parametrize("offence", ["17.8", "17.9", "17.10"])
def test_17_8_to_17_10_a_violation_at_once(offence: str) -> None:
    assert report(PenaltyBook(), offence)[1:] == (PenaltyKind.VIOLATION, False)


@pytest.mark.parametrize("offence", ["17.11"] + [f"18.{n}" for n in range(8, 16)])
def test_17_11_and_18_8_to_18_15_lose_at_once(offence: str) -> None:
    assert report(PenaltyBook(), offence)[1:] == (PenaltyKind.LOSS, True)


@pytest.mark.parametrize(
    ("role", "kind", "allowed"),
    [
        (Role.ARBITER, "17.1", True),  # 16.1 warning
        (Role.ARBITER, "17.8", False),  # a violation needs the chief or deputy (16.2)
        (Role.DEPUTY_CHIEF, "17.8", True),
        (Role.DEPUTY_CHIEF, "18.12", False),  # a loss needs the chief (16.3)
        (Role.CHIEF, "18.12", True),
        (Role.COMMITTEE, "17.1", False),  # the committee disqualifies; it does not run the ladders
    ],
)
def test_16_authority(role: Role, kind: str, allowed: bool) -> None:
    if allowed:
        report(PenaltyBook(), kind, role)
    else:
        with pytest.raises(AuthorityError, match="can only be given by"):
            report(PenaltyBook(), kind, role)


def test_a_refused_request_records_nothing() -> None:
    book = PenaltyBook()
    with pytest.raises(AuthorityError):
        report(book, "17.8", Role.ARBITER)
    assert book.penalties == ()


def test_18_6_18_7_and_36_have_documented_configurable_defaults() -> None:
    configurable = {article for article, offence in OFFENCES.items() if offence.configurable}
    assert configurable == set(DEFAULT_POLICY_LADDERS) >= {"18.6", "18.7", "36.2", "36.4", "36.4.1", "36.4.2"}
    assert report(PenaltyBook(), "36.2")[1] is PenaltyKind.WARNING  # earphones: the warning ladder by default
    assert report(PenaltyBook(), "36.4.3")[1] is PenaltyKind.LOSS  # help from a device: 18.10's loss


def test_an_event_may_choose_the_penalty_for_online_offences() -> None:
    strict = PenaltyPolicy({**DEFAULT_POLICY_LADDERS, "36.2": Ladder.LOSS})
    assert report(PenaltyBook(), "36.2", policy=strict)[1:] == (PenaltyKind.LOSS, True)


def test_the_rules_own_penalties_cannot_be_configured() -> None:
    with pytest.raises(EngineError, match=r"17\.4 is set by the rules"):
        PenaltyPolicy({"17.4": Ladder.WARNING})


def test_unknown_offences_are_refused() -> None:
    with pytest.raises(EngineError, match="no penalised offence"):
        report(PenaltyBook(), "99.9")


def test_penalties_name_articles_reason_and_evidence() -> None:
    _, decision = PenaltyBook().decide(
        player=F, offence="36.4.2", role=Role.ARBITER, arbiter="Li", at=5, policy=PenaltyPolicy(),
        evidence=("incident-12", "snapshot-3"),
    )  # fmt: skip
    penalty = decision.penalty
    assert penalty.articles == "36.4.2, 15.1"
    assert "first 36.4.2 in this game" in penalty.reason and "event setting" in penalty.reason
    assert penalty.evidence == ("incident-12", "snapshot-3") and penalty.arbiter == "Li"


@pytest.mark.parametrize("offence", ["17.4", "17.9", "18.12", "36.4.4"])
def test_the_step_previews_what_decide_gives_and_who_may_give_it(offence: str) -> None:
    """``step`` says, without recording anything, what ``decide`` then gives, and the refusal it gives a role (16)."""
    book, policy = PenaltyBook(), PenaltyPolicy()
    for _ in range(3):
        step = book.step(player=F, offence=offence, policy=policy)
        assert book.count(F, offence) == step.occurrence - 1  # nothing recorded
        for role in Role:
            refusal = step.refusal(role)
            assert (refusal is None) == (role in step.may_give)
            if refusal is not None:
                with pytest.raises(AuthorityError) as refused:
                    book.decide(player=F, offence=offence, role=role, arbiter="x", at=0, policy=policy)
                assert (refused.value.why, refused.value.article) == (refusal, step.authority_article)
        if step.loses_game:
            break
        book, decision = book.decide(player=F, offence=offence, role=Role.CHIEF, arbiter="x", at=0, policy=policy)
        assert (decision.penalty.kind, decision.penalty.reason, decision.loses_game) == (
            step.kind, step.reason, step.loses_game)  # fmt: skip
