"""Exports opened in spreadsheets (item 16 of issue 12): a standings CSV never carries a cell a spreadsheet would run
as a formula (OWASP, CSV injection): names and teams starting with =, +, -, @, a tab or a carriage return get a
leading single quote."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from proctor.database import create_database_engine, migrate
from proctor.events import load_event_file
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import add_arbiter, bearer

pytestmark = pytest.mark.asyncio

NAMES = ('=HYPERLINK("http://evil.example","x")', "+1+2", "-3+4", "@SUM(A1:A9)")

EVENT = (
    """
[event]
slug = "csv-cup"
name = "CSV Cup"

[[sections]]
slug = "open"
name = "Open"
rule = "renju"
opening = "free"
time_control = "rapid-15"
system = "swiss"
rounds = 1
tiebreaks = "PTS"
"""
    + "".join(
        f"""
[[sections.players]]
start_no = {number}
name = '{name}'
team = '{name}'
platform_ref = "p-{number}"
"""
        for number, name in enumerate(NAMES, 1)
    )
    + """
[[sections.pairings]]
round = 1
board = 1
black = 1
white = 2
result = "1-0"

[[sections.pairings]]
round = 1
board = 2
black = 3
white = 4
result = "0-1"
"""
)


async def test_the_standings_csv_neutralises_formulas(platform: Platformer, settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "csv-cup.toml"
    path.write_text(EVENT, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    token = add_arbiter(settings, "Chief", "chief")
    response = await platform.client.get("/api/v1/events/csv-cup/sections/open/standings.csv", headers=bearer(token))
    assert response.status == 200
    rows = list(csv.reader(io.StringIO(await response.text())))
    header, body = rows[0], rows[1:]
    name, team = header.index("name"), header.index("team")
    assert sorted(row[name] for row in body) == sorted("'" + n for n in NAMES)
    assert sorted(row[team] for row in body) == sorted("'" + n for n in NAMES)
    json_rows = await (await platform.client.get("/api/v1/events/csv-cup/sections/open/standings",
                                                 headers=bearer(token))).json()  # fmt: skip
    assert sorted(row["name"] for row in json_rows["rows"]) == sorted(NAMES)  # JSON keeps the names as they are
