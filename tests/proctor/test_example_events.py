"""The two example events keep to their regulations (002: the 2023 National Gomoku Championships; 003: the 2021
National Youth Gomoku Championships), name the clause beside each value, load, and are mapped clause by clause in
docs/events.md."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from proctor.database import create_database_engine, migrate
from proctor.events import EventSpec, export_event, load_event_file, parse_event
from proctor.settings import Settings

ROOT = Path(__file__).parents[2]
YOUTH_2021 = ROOT / "examples" / "national-youth-2021.toml"
NATIONAL_2023 = ROOT / "examples" / "national-2023.toml"
DOCS = ROOT / "docs" / "events.md"

CLAUSES_002 = ("IV", "V", "VI(1)", "VI(2)", "VI(3)", "VII(1)", "VII(2)", "VII(3)", "VII(4)1", "VII(4)2", "VII(4)3",
               "VIII(1)", "VIII(2)", "IX(1)", "IX(2)", "XII(2)", "XII(3)", "XII(4)", "XIII/XIV")  # fmt: skip
"""Every clause of regulations 002 in the project's translation (IV to XIV; I-III and the omitted ones are not)."""
CLAUSES_003 = ("IV", "V", "VI(1)", "VI(2)", "VII", "VIII(1)", "VIII(2)", "VIII(3)", "VIII(4)", "VIII(5)",
               "VIII(6)1(1)", "VIII(6)1(2)", "VIII(6)2", "VIII(6)3", "IX(1)", "IX(2)", "IX(3)", "IX(4)", "X(1)",
               "X(2)", "X(3)", "X(4)", "XI(1)", "XI(2)", "XI(7)-(8)", "XI", "XI(10)", "XIII")  # fmt: skip
"""Every numbered part of regulations 003 in the project's translation (XI's team leaders' meeting is unnumbered)."""


def parsed(path: Path) -> EventSpec:
    return parse_event(path.read_text(encoding="utf-8"), path.parent)


def by_slug(spec: EventSpec) -> dict[str, Any]:
    return {section.slug: section for section in spec.sections}


def test_003_iv_viii_the_2021_example_keeps_to_its_regulations() -> None:
    spec = parsed(YOUTH_2021)
    assert (spec.starts, spec.ends, spec.time_zone) == ("2021-12-03", "2021-12-06", "Asia/Shanghai")  # IV
    sections = by_slug(spec)
    assert list(sections) == ["youth-m", "youth-f", "juvenile-m", "juvenile-f", "children-m", "children-f"]  # VIII(2)
    for slug, section in sections.items():
        assert (section.rule, section.opening, section.max_candidates) == ("renju", "five-move-two", None)  # VIII(1)
        assert section.time_control == ("youth-60" if slug.startswith("youth") else "youth-shared-60")  # VIII(5)
        assert section.tiebreaks == "PTS,BH,BH/M1,WIN"  # VIII(6)1(2), no direct encounter
        assert section.play_off_ties == "medals"  # VIII(6)1(2)
        assert section.games_per_match == 1
        assert {p.gender for p in section.players} == {slug[-1]}
    assert [t.sections for t in spec.teams] == [["youth-m", "youth-f"], ["juvenile-m", "juvenile-f"],
                                                ["children-m", "children-f"]]  # VIII(3), VIII(6)2  # fmt: skip
    roles = Counter(role for _, role in spec.arbiters)
    assert roles["chief"] == 1 and roles["appeals-committee"] == 3  # IX(2), IX(3)


def test_002_iv_vii_the_2023_example_keeps_to_its_regulations() -> None:
    spec = parsed(NATIONAL_2023)
    assert (spec.starts, spec.ends, spec.time_zone) == ("2023-05-03", "2023-05-06", "Asia/Shanghai")  # IV
    sections = by_slug(spec)
    assert list(sections) == ["men", "women", "men-open", "women-open", "men-finals", "women-finals"]  # V, VII(3)
    for slug, entries, gender in (("men", 12, "m"), ("women", 10, "f"), ("men-open", 10, "m"), ("women-open", 10, "f")):
        players = sections[slug].players
        assert len(players) == entries and {p.gender for p in players} == {gender}
        assert all(p.team and p.platform_ref for p in players)
    for slug in ("men", "women"):  # VII(2), VII(3), VII(4)2, VII(4)3
        section = sections[slug]
        assert (section.rule, section.opening, section.system) == ("renju", "soosorv", "swiss")
        assert section.rounds <= 7 and section.tiebreaks == "PTS,BH,BH/M1,WIN"
        assert section.play_off_ties == "qualification" and section.games_per_match == 1
        first_round = [p for p in section.pairings if p.round_no == 1]
        seated = sorted(n for p in first_round for n in (p.black, p.white))
        assert seated == [p.start_no for p in section.players]  # everyone plays round 1, once
        assert {p.round_no for p in section.pairings} == {1}  # later rounds: the pairing program
    for slug in ("men-open", "women-open"):  # VII(2), VII(3), VII(4)1, VII(4)3
        section = sections[slug]
        assert (section.rule, section.opening, section.system) == ("freestyle", "free", "round-robin")
        assert section.rounds <= 9 and section.tiebreaks == "PTS,SB,WIN" and section.play_off_ties == "medals"
        assert section.games_per_match == 2
        firsts = [p for p in section.pairings if p.game_no == 1]
        seconds = {(p.round_no, p.board): (p.black, p.white) for p in section.pairings if p.game_no == 2}
        assert Counter(frozenset((p.black, p.white)) for p in firsts) == Counter(
            frozenset((a, b)) for a in range(1, 11) for b in range(a + 1, 11)
        )  # every pair meets once
        assert all(seconds[(p.round_no, p.board)] == (p.white, p.black) for p in firsts)  # game 2 swapped
    for slug in ("men", "women"):  # VII(3), VII(4)3
        finals = sections[f"{slug}-finals"]
        assert finals.system == "knockout" and not finals.players and not finals.pairings
        assert finals.knockout is not None
        assert (finals.knockout.qualify_from, finals.knockout.qualifiers) == (slug, 8)
        assert finals.knockout.play_off == ("5+3", "3+2") and finals.knockout.third_place_match is False
        assert (finals.rule, finals.opening, finals.time_control) == ("renju", "soosorv", "30+10")
    roles = Counter(role for _, role in spec.arbiters)  # VIII(1), VIII(2)
    assert roles["chief"] == 1 and roles["deputy-chief"] >= 1 and roles["arbiter"] >= 1
    assert roles["committee"] == 1 and roles["appeals-committee"] == 3


@pytest.mark.parametrize("example", [YOUTH_2021, NATIONAL_2023], ids=["2021", "2023"])
def test_each_example_loads_and_exports_back(example: Path, database_url: str, tmp_path: Path) -> None:
    spec = parsed(example)
    engine = create_database_engine(Settings(database_url=database_url))
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, example, now=0)
    with engine.connect() as connection:
        again = parse_event(export_event(connection, spec.slug), tmp_path)
    engine.dispose()
    assert [(s.slug, s.system, len(s.players), len(s.pairings)) for s in again.sections] == [
        (s.slug, s.system, len(s.players), len(s.pairings)) for s in spec.sections
    ]


KEY = re.compile(r"^([A-Za-z_]+) = ")
TRACKED = {"event": {"slug", "name"}, "sections": {"slug", "players", "pairings"}, "sections.policy": set()}
"""The tables whose values must name their clause, and the keys exempt (names, and the players' and pairings' lists,
which say where they come from above them)."""
FOLLOWERS = {"ends", "rounds", "rule", "checks", "both_disconnected", "verdict_confirmation_deadline_s",
             "evidence_retention_days", "ear_checks_per_hour", "qualify_from", "qualifiers"}  # fmt: skip
"""Keys that may share the comment of the value just above them (``starts`` and ``ends``, ``system`` and ``rounds``)."""


def bare_values(text: str) -> list[str]:
    """The tracked values with no comment on their line or right above (or above the value they follow)."""
    lines = text.splitlines()
    table, bare = "", []
    for index, line in enumerate(lines):
        header = re.fullmatch(r"\[\[?([a-z.]+)\]\]?", line)
        if header:
            table = header.group(1)
            continue
        key = KEY.match(line)
        if table not in TRACKED or not key or key.group(1) in TRACKED[table] or "#" in line:
            continue
        above = index
        while (follower := KEY.match(lines[above])) and follower.group(1) in FOLLOWERS and KEY.match(lines[above - 1]):
            above -= 1
        if not lines[above - 1].startswith("#"):
            bare.append(f"{index + 1}: {line}")
    return bare


@pytest.mark.parametrize("example", [YOUTH_2021, NATIONAL_2023], ids=["2021", "2023"])
def test_each_value_names_its_clause_or_reading(example: Path) -> None:
    """Every value of [event], [[sections]] and [sections.policy] has a comment beside it: the clause it comes from,
    or the reading taken and why."""
    text = example.read_text(encoding="utf-8")
    assert bare_values(text) == []
    time_control = next(line for line in text.splitlines() if line.startswith("time_control = "))
    assert bare_values(text.replace(time_control, "\n" + time_control, 1)) != []  # the check sees a bare value


def test_002_and_003_every_clause_is_mapped_in_the_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("## The regulations, clause by clause") :].split("\n## ", 1)[0]
    missing = [f"002 {c}" for c in CLAUSES_002 if f"| 002 {c} |" not in table]
    missing += [f"003 {c}" for c in CLAUSES_003 if f"| 003 {c} |" not in table]
    assert missing == []
    rows = [line for line in table.splitlines() if line.startswith("| 00")]
    assert all(line.rstrip(" |").rsplit("|", 1)[1].strip() for line in rows)  # each says where, or why not


def test_every_key_the_examples_use_is_in_the_key_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    keys_table = text[text.index("## The file") :].split("\n## ", 1)[0]
    used: set[str] = set()
    for example in (YOUTH_2021, NATIONAL_2023):
        raw = tomllib.loads(example.read_text(encoding="utf-8"))
        used |= set(raw["event"])
        for section in raw["sections"]:
            used |= (set(section) - {"policy", "players", "pairings"}) | set(section.get("policy", {}))
    assert sorted(key for key in used if f"`{key}`" not in keys_table) == []
