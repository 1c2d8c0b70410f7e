"""Team events (2021 regulations VI(2), VIII(6)2): a ``[[teams]]`` entry of the event file scored from its male and
female sections through the API: each unit's best-placed male plus best-placed female player's points, ties to the
lower sum of their places; JSON and CSV; a bad entry is an error naming it."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, load_event_file, parse_event
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import add_arbiter, bearer

pytestmark = pytest.mark.asyncio

UNITS = ("Hangzhou", "Shanghai", "Beijing", "Hainan")


def section(slug: str, gender: str, results: tuple[str, str]) -> str:
    players = "".join(
        f'\n[[sections.players]]\nstart_no = {n}\nname = "{gender.upper()}{n}"\nteam = "{unit}"\ngender = "{gender}"\n'
        for n, unit in enumerate(UNITS, start=1)
    )
    pairings = "".join(
        f'\n[[sections.pairings]]\nround = 1\nboard = {b}\nblack = {black}\nwhite = {white}\nresult = "{result}"\n'
        for b, (black, white), result in zip((1, 2), ((1, 2), (3, 4)), results, strict=True)
    )
    return (f'\n[[sections]]\nslug = "{slug}"\nname = "{slug}"\nrule = "renju"\ntime_control = "rapid-15"\n'
            f'rounds = 1\ntiebreaks = "PTS"\n{players}{pairings}')  # fmt: skip


EVENT = (
    '[event]\nslug = "teams"\nname = "Team Cup"\n'
    + section("u-m", "m", ("1-0", "½-½"))
    + section("u-f", "f", ("0-1", "1-0"))
    + '\n[[teams]]\nslug = "u-team"\nname = "Under-12 teams"\nsections = ["u-m", "u-f"]\n'
)


async def get(platform: Platformer, token: str, path: str) -> Any:
    return await platform.client.get(path, headers=bearer(token))


async def test_viii_6_2_the_youth_team_table_adds_each_units_best_male_and_female(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "teams.toml"
    path.write_text(EVENT, encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    token = add_arbiter(settings, "Chief", "chief")
    response = await get(platform, token, "/api/v1/events/teams/teams/u-team/standings")
    assert response.status == 200, await response.text()
    body = await response.json()
    assert (body["name"], body["scoring"], body["article"]) == ("Under-12 teams", "youth", "2021 regulations VIII(6)2")
    # Beijing: M3 ½ + F3 1; Hangzhou: M1 1 + F1 0; Shanghai: M2 0 + F2 1; Hainan: M4 ½ + F4 0.
    assert {row["unit"]: row["points"] for row in body["rows"]} == {
        "Beijing": "1.5", "Hangzhou": "1", "Shanghai": "1", "Hainan": "0.5"
    }  # fmt: skip
    assert body["rows"][0]["unit"] == "Beijing" and body["rows"][-1]["unit"] == "Hainan"
    first = body["rows"][0]
    assert (first["male"]["name"], first["female"]["name"], first["place"]) == ("M3", "F3", 1)
    assert first["place_sum"] == first["male"]["place"] + first["female"]["place"]
    response = await get(platform, token, "/api/v1/events/teams/teams/u-team/standings?format=csv")
    rows = list(csv.reader(io.StringIO(await response.text())))
    assert rows[0][:4] == ["place", "unit", "points", "place sum"] and rows[1][1:3] == ["Beijing", "1.5"]
    assert (await get(platform, token, "/api/v1/events/teams/teams/nope/standings")).status == 404
    assert (await get(platform, token, "/api/v1/events/teams/teams/u-team/standings?round=2")).status == 409
    assert (await get(platform, token, "/api/v1/events/teams/teams/u-team/standings?format=xml")).status == 400
    assert (await platform.client.get("/api/v1/events/teams/teams/u-team/standings")).status == 401


@pytest.mark.parametrize(
    ("teams", "message"),
    [
        ('sections = ["u-m", "u-x"]', "teams[0].sections"),
        ('sections = ["u-m"]\nscoring = "best-three"', "teams[0].scoring"),
    ],
)
async def test_a_bad_team_entry_names_itself(teams: str, message: str) -> None:
    text = EVENT.replace('sections = ["u-m", "u-f"]', teams)
    with pytest.raises(EventFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_event(text, Path("."))


async def test_the_example_event_has_a_team_event_in_each_age_group() -> None:
    example = Path(__file__).parents[2] / "examples" / "national-youth-2021.toml"
    spec = parse_event(example.read_text(encoding="utf-8"), example.parent)
    assert [(t.slug, t.sections) for t in spec.teams] == [
        ("youth-team", ["youth-m", "youth-f"]),
        ("juvenile-team", ["juvenile-m", "juvenile-f"]),
        ("children-team", ["children-m", "children-f"]),
    ]
