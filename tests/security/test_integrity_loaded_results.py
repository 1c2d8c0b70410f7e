"""Results read from an event file are audited rows (issue 12, left from item 4): ``proctor event load`` chains each
pairing's result as loaded (proctor.loaded_results), and ``proctor audit verify`` reports a loaded result written
over, a result where none was loaded or entered, and an edit of the chain, each with its row; a result entered later
(``pairing.result``) is the one checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.cli import main as cli
from proctor.database import create_database_engine, migrate
from proctor.events import load_event_file
from proctor.models import LoadedResult, Pairing
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import add_arbiter, bearer
from tests.security.test_exports import EVENT

pytestmark = pytest.mark.asyncio


def problems(settings: Settings) -> tuple[str, ...]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        report = verify_audit(connection)
    engine.dispose()
    return report.problems


def edit(settings: Settings, statement: Any) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(statement)
    engine.dispose()


async def test_results_loaded_from_an_event_file_are_verified(
    platform: Platformer, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "csv-cup.toml"
    path.write_text(EVENT, encoding="utf-8")
    assert cli(["event", "load", str(path), "--db", settings.database_url]) == 0
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        boards = {board: pairing for board, pairing in connection.execute(select(col(Pairing.board), col(Pairing.id)))}
    engine.dispose()
    first, second = boards[1], boards[2]
    assert problems(settings) == ()

    edit(settings, update(Pairing).where(col(Pairing.id) == first).values(result="0-1"))  # "1-0" in the file
    assert problems(settings) == (f"pairing {first}: its result is '0-1' but the last one loaded from the event file "
                                  "is '1-0'",)  # fmt: skip
    edit(settings, update(Pairing).where(col(Pairing.id) == first).values(result="1-0"))

    chief = add_arbiter(settings, "Chief", "chief")  # a result entered later is the one that counts
    entered = await platform.client.post("/api/v1/events/csv-cup/sections/open/results", headers=bearer(chief),
                                         json={"round": 1, "board": 2, "result": "½-½", "reason": "sheet"})  # fmt: skip
    assert entered.status in (200, 201), await entered.text()
    assert problems(settings) == ()
    edit(settings, update(Pairing).where(col(Pairing.id) == second).values(result="0-1"))
    assert problems(settings) == (f"pairing {second}: its result is '0-1' but the last one entered is '½-½'",)
    edit(settings, update(Pairing).where(col(Pairing.id) == second).values(result="½-½"))

    edit(settings, update(LoadedResult).where(col(LoadedResult.pairing_id) == first).values(result="0-1"))
    assert any("loaded result" in problem and "changed" in problem for problem in problems(settings))
    assert cli(["audit", "verify", "--db", settings.database_url]) != 0
    assert "loaded result" in capsys.readouterr().out


async def test_a_result_written_over_an_empty_loaded_one_is_reported(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "csv-cup.toml"
    path.write_text(EVENT.replace('result = "1-0"\n', ""), encoding="utf-8")
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        load_event_file(connection, path, now=0)
    engine.dispose()
    assert problems(settings) == ()
    edit(settings, update(Pairing).where(col(Pairing.board) == 1).values(result="1-0"))
    (problem,) = problems(settings)
    assert "its result is '1-0' but the last one loaded from the event file is ''" in problem
