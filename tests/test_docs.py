"""The docs keep up with the code: every setting, rule set and opening is documented."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from engine.adjudication import AdjudicationSettings
from engine.clock import PRESETS
from engine.game import GameSettings
from engine.openings import OPENING_NAMES
from engine.penalties import DEFAULT_POLICY_LADDERS
from engine.rules import RULE_SETS
from proctor.settings import Settings
from proctor.web.routes import ROUTES

DOCS = Path(__file__).parent.parent / "docs"


def test_every_game_setting_is_documented() -> None:
    text = (DOCS / "rules-engine.md").read_text(encoding="utf-8")
    missing = [f.name for f in dataclasses.fields(GameSettings) if f"| `{f.name}` |" not in text]
    assert missing == []


def test_every_rule_set_and_opening_is_documented() -> None:
    engine_doc = (DOCS / "rules-engine.md").read_text(encoding="utf-8")
    cli_doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in RULE_SETS:
        assert f"`{name}`" in engine_doc, name
    for name in OPENING_NAMES:
        assert f"`{name}`" in engine_doc and f"`{name}`" in cli_doc, name


def test_every_adjudication_setting_preset_and_configurable_offence_is_documented() -> None:
    text = (DOCS / "adjudication.md").read_text(encoding="utf-8")
    assert [f.name for f in dataclasses.fields(AdjudicationSettings) if f"| `{f.name}` |" not in text] == []
    assert [name for name in PRESETS if f"`{name}`" not in text] == []
    assert [article for article in DEFAULT_POLICY_LADDERS if f"| {article} |" not in text] == []


def test_every_service_setting_and_route_is_documented() -> None:
    text = (DOCS / "service.md").read_text(encoding="utf-8")
    assert [f.name for f in dataclasses.fields(Settings) if f"`{f.name.upper()}`" not in text] == []
    assert [r.path for r in ROUTES if r.path.split("{")[0].rstrip("/") not in text] == []


def test_every_key_of_the_desk_is_documented_and_said_in_both_languages() -> None:
    """The desk's keys (dashboard/arbiter.html's KEYS, which its "?" help lists) are each in docs/service.md's Keys
    paragraph and have their help's words in the Chinese and the English table."""
    page = (Path(__file__).parent.parent / "dashboard" / "arbiter.html").read_text(encoding="utf-8")
    keys = re.findall(r'"([^"]+)"', re.search(r"^const KEYS = \[(.*)\];$", page, re.M).group(1))  # type: ignore[union-attr]
    assert {"/", "j", "k", "Enter", "x", "r", "?", "Escape"} <= set(keys)
    service = (DOCS / "service.md").read_text(encoding="utf-8")
    paragraph = service[service.index("- Keys (outside text fields") :].split("\n- ", 1)[0]
    for key in keys:
        shown = {"Escape": ["Esc"], "↑ ↓": ["↑", "↓"], "Enter": ["Enter"]}.get(key, [f"`{key}`"])
        assert all(word in paragraph for word in shown), key
        assert page.count(f'"keys.{key}":') == 2, key  # in both tables
