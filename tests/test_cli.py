"""The ``proctor`` command's JSON-lines contract, run as the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from proctor.account_log import verify_account_log
from proctor.accounts import check_password, find_arbiter, find_session, open_session
from proctor.database import create_database_engine
from proctor.settings import Settings
from tests.conftest import DATA, load_jsonl

PROCTOR = Path(sys.executable).parent / "proctor"


def run(*args: str, stdin: str = "") -> tuple[int, list[dict[str, Any]], str]:
    done = subprocess.run([str(PROCTOR), *args], input=stdin, capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_the_console_script_is_installed() -> None:
    assert PROCTOR.exists(), "install the project (pip install -e '.[test]') so that 'proctor' is on the PATH"


def test_forbidden_answers_each_line_in_order_with_labels() -> None:
    lines = [
        {"black": ["g8", "h7", "h9", "i8"], "white": []},
        {"black": ["e8", "f8", "g8", "i8", "j8"], "white": [], "rule": "renju"},
        {"black": ["e8", "f8", "g8", "i8", "j8"], "white": [], "rule": "freestyle"},
        {"black": ["e8", "g8", "i8", "k8"], "white": [], "five_eye": "strict"},
    ]
    status, answers, _ = run("forbidden", stdin="\n".join(json.dumps(line) for line in lines))
    assert status == 0
    assert answers[0]["forbidden"]["h8"] == "33"
    assert answers[1]["forbidden"]["h8"] == "overline"
    assert answers[2] == {"forbidden": {}}
    assert answers[3]["forbidden"]["h8"] == "44"


def test_forbidden_bad_lines_get_an_error_and_the_rest_go_on(tmp_path: Path) -> None:
    source = tmp_path / "positions.jsonl"
    source.write_text(
        "\n".join(
            [
                '{"black": ["h8"], "white": ["h8"]}',
                "not json",
                '{"black": ["z1"]}',
                '{"black": [], "rule": "go"}',
                '{"black": [], "five_eye": "loose"}',
                "[1, 2]",
                '{"black": ["h8", "i9"], "white": []}',
            ]
        ),
        encoding="utf-8",
    )
    status, answers, _ = run("forbidden", str(source))
    assert status == 1
    assert [("error" in a) for a in answers] == [True] * 6 + [False]
    assert "h8 is given twice" in answers[0]["error"]
    assert "line 2" in answers[1]["error"] and "not JSON" in answers[1]["error"]
    assert "'z1'" in answers[2]["error"]
    assert "unknown rule set 'go'" in answers[3]["error"]
    assert "five_eye" in answers[4]["error"]
    assert answers[6] == {"forbidden": {}}


def test_forbidden_matches_the_labelled_hand_cases() -> None:
    cases = [case for case in load_jsonl(DATA / "forbidden" / "hand_cases.jsonl") if "forbidden" in case]
    stdin = "\n".join(json.dumps({"black": c["black"], "white": c["white"]}) for c in cases)
    status, answers, _ = run("forbidden", "-", stdin=stdin)
    assert status == 0
    assert [a["forbidden"] for a in answers] == [c["forbidden"] for c in cases]


def test_replay_reports_result_reason_ply_and_illegal_moves() -> None:
    games = [
        {"rule": "renju", "moves": ["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "l8", "a9"]},
        {"rule": "renju", "moves": ["h8", "o15", "h9", "o13", "i10", "o11", "j10", "o9", "h10"]},
        {"rule": "swap2", "moves": ["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "m8", "a9", "l8"]},
        {"rule": "renju", "moves": ["h8", "h9", "h10", "i9", "a1", "pass", "pass"]},
        {"rule": "renju", "moves": ["h8", "h9", "pass"]},
        {"rule": "renju", "moves": ["h8", "h8"]},
        {"rule": "renju", "opening": "soosorv-2", "moves": ["h8", "h9", "h10", "swap", "i9", "offer:g10,j10"]},
    ]
    status, answers, _ = run("replay", stdin="\n".join(json.dumps(g) for g in games))
    assert status == 0
    assert answers[0] == {
        "result": "black",
        "reason": "five",
        "ply": 9,
        "illegal": {"ply": 10, "move": "a9", "why": answers[0]["illegal"]["why"]},
    }
    assert "game is over" in answers[0]["illegal"]["why"]
    assert answers[1] == {"result": "white", "reason": "forbidden-33", "ply": 9, "illegal": None}
    assert answers[2] == {"result": None, "reason": None, "ply": None, "illegal": None}
    assert answers[3] == {"result": "draw", "reason": "double-pass", "ply": 7, "illegal": None}
    assert answers[4]["illegal"]["ply"] == 3 and "9.4" in answers[4]["illegal"]["why"]
    assert answers[5]["illegal"]["ply"] == 2 and "occupied" in answers[5]["illegal"]["why"]
    assert answers[6] == {"result": None, "reason": None, "ply": None, "illegal": None}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"rule": "renju"}', "'moves' is required"),
        ('{"rule": "chess", "moves": []}', "unknown rule set"),
        ('{"moves": [], "opening": "swap9"}', "unknown opening"),
        ('{"moves": "h8 h9"}', "'moves' must be a list"),
        ('{"moves": [], "adjudication": "maybe"}', "'adjudication'"),
    ],
)
def test_replay_bad_lines(line: str, message: str) -> None:
    status, answers, _ = run("replay", stdin=line + '\n{"moves": ["h8"]}\n')
    assert status == 1
    assert message in answers[0]["error"]
    assert answers[1] == {"result": None, "reason": None, "ply": None, "illegal": None}


def test_a_missing_file_is_reported_on_stderr() -> None:
    status, answers, stderr = run("replay", "/nonexistent/games.jsonl")
    assert status == 2 and answers == [] and "cannot read" in stderr


TIEBREAK_DATA = DATA / "tiebreak"


def run_text(*args: str) -> tuple[int, str, str]:
    done = subprocess.run([str(PROCTOR), *args], capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


def test_standings_json_contract() -> None:
    status, out, err = run_text(
        "standings", str(TIEBREAK_DATA / "karl-mala-gedenkturnier-2005.trf"), "--tiebreaks", "PTS,BH/C1,BH/M1,WIN,DE"
    )
    assert status == 0, err
    rows = json.loads(out)
    assert len(rows) == 284
    assert set(rows[0]) == {"rank", "start_no", "name", "points", "tiebreaks"}
    assert set(rows[0]["tiebreaks"]) == {"BH/C1", "BH/M1", "WIN", "DE"}
    assert (rows[0]["rank"], rows[0]["start_no"], rows[0]["points"]) == (1, 5, 6.5)
    assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)


def test_standings_rules_and_text_format(tmp_path: Path) -> None:
    trf = TIEBREAK_DATA / "lichess-swiss-2021_03.trf"
    status, out, _ = run_text("standings", str(trf), "--rules", "fide-2026", "--format", "text", "--system", "swiss")
    assert status == 0 and out.splitlines()[0].split()[:4] == ["Rk", "No", "Name", "Pts"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tiebreaks", "PTS,BH,FOO"], "unknown tie-break 'FOO'"),
        (["--tiebreaks", "BH/X1"], "unknown modifier /X1"),
    ],
)
def test_standings_bad_tiebreaks(args: list[str], message: str) -> None:
    status, out, err = run_text("standings", str(TIEBREAK_DATA / "lichess-swiss-2021_03.trf"), *args)
    assert status == 1 and out == "" and message in err


def test_standings_malformed_line_names_the_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.trf"
    lines = (TIEBREAK_DATA / "lichess-swiss-2021_03.trf").read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("001"))
    lines[index] = lines[index][:98] + "Q" + lines[index][99:]
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, err = run_text("standings", str(broken))
    assert status == 1 and out == ""
    assert f"line {index + 1}: round 1: unknown result code 'Q'" in err


def test_arbiter_add_with_a_dashboard_password_and_sections(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    command = [str(PROCTOR), "arbiter", "add", "Li", "--role", "reviewer", "--db", db,
               "--password-stdin", "--sections", "open-2026/a, open-2026/b/3"]  # fmt: skip
    done = subprocess.run(command, input="a long enough password\n", capture_output=True, text=True, check=False)
    assert done.returncode == 0 and len(done.stdout.strip()) >= 24, done.stderr
    engine = create_engine(db)
    with engine.connect() as connection:
        role, hashed, sections = connection.execute(text("SELECT role, password_hash, sections FROM arbiter")).one()
    engine.dispose()
    assert role == "reviewer" and hashed.startswith("$argon2id$")
    assert json.loads(sections) == ["open-2026/a", "open-2026/b/3"]
    short = subprocess.run([*command[:-3], "--password-stdin"], input="short\n", capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert short.returncode == 2 and "at least 10 characters" in short.stderr


def test_arbiter_accounts_are_added_again_listed_given_a_password_and_removed(tmp_path: Path) -> None:
    """Issue 14 (8): adding again an arbiter who has logged in once crashed on their session (a raw IntegrityError);
    now their row is kept with a new token and role, their password too, and their open sessions end.  ``list``,
    ``passwd`` and ``remove`` complete the accounts; the account log verifies throughout."""
    db = f"sqlite:///{tmp_path / 'p.db'}"

    def proctor(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PROCTOR), "arbiter", *args, "--db", db], input=stdin, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip

    first = proctor("add", "Li Wei", "--role", "arbiter", "--password-stdin", stdin="a long enough password\n")
    assert first.returncode == 0, first.stderr
    engine = create_database_engine(Settings(database_url=db))
    with engine.begin() as connection:
        arbiter_id = check_password(connection, "Li Wei", "a long enough password")
        assert arbiter_id is not None
        session, _ = open_session(connection, arbiter_id, 1_000, 3600)
    again = proctor("add", "Li Wei", "--role", "deputy-chief", "--sections", "open/a")
    assert again.returncode == 0, again.stderr
    with engine.connect() as connection:
        assert find_arbiter(connection, first.stdout.strip()) is None  # the old token is gone
        identity = find_arbiter(connection, again.stdout.strip())
        assert identity is not None and identity.role.value == "deputy-chief" and identity.sections == ("open/a",)
        assert check_password(connection, "Li Wei", "a long enough password") == arbiter_id  # the password stays
        assert find_session(connection, session, 2_000) is None  # the old role's session ended
        assert verify_account_log(connection) == []
    listed = proctor("list")
    assert listed.stdout.splitlines() == ["Li Wei\tdeputy-chief\topen/a\tdashboard password"], listed.stderr
    short = proctor("passwd", "Li Wei", stdin="short\n")
    assert short.returncode == 2 and "at least 10 characters" in short.stderr
    assert proctor("passwd", "Li Wei", stdin="another long password\n").returncode == 0
    unknown = proctor("remove", "Nobody")
    assert unknown.returncode == 2 and "no arbiter 'Nobody'" in unknown.stderr
    removed = proctor("remove", "Li Wei")
    assert removed.returncode == 0, removed.stderr
    with engine.connect() as connection:
        assert find_arbiter(connection, again.stdout.strip()) is None
        assert check_password(connection, "Li Wei", "another long password") is None
        assert verify_account_log(connection) == []
    engine.dispose()
    assert proctor("list").stdout == ""
    back = proctor("add", "Li Wei", "--role", "arbiter")  # the name is free again
    assert back.returncode == 0, back.stderr


def test_a_worker_without_its_settings_says_what_is_missing_and_exits_2() -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PROCTOR_")}
    done = subprocess.run([str(PROCTOR), "worker", "--id", "w1"], capture_output=True, text=True, timeout=60,
                          check=False, env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    for setting in ("PROCTOR_BUS_URL", "PROCTOR_JANUS_URL", "PROCTOR_WORKER_SECRET", "PROCTOR_WRITER_URLS"):
        assert setting in done.stderr
    done = subprocess.run([str(PROCTOR), "worker"], capture_output=True, text=True, timeout=60, check=False,
                          env={**env, "PROCTOR_BUS_URL": "redis://127.0.0.1:1/0", "PROCTOR_JANUS_URL": "http://x/janus",
                               "PROCTOR_WORKER_SECRET": "s", "PROCTOR_WRITER_URLS": "http://127.0.0.1:1",
                               "PROCTOR_WORKER_LAYER": "medium"})  # fmt: skip
    assert done.returncode == 2 and "PROCTOR_WORKER_LAYER must be high or low" in done.stderr, done.stderr
