"""``proctor demo``: the service running on a demo copy of an example event, with games being played on it.

What it does, in order:

1. a database (a new SQLite file in a temporary folder, or ``--db``) gets the event file's demo copy
   (proctor.demo_event: slug ``…-demo``, labelled 演示 / demo, short time controls), a platform ``demo`` with a new
   secret, and three demo arbiters (a chief, a deputy chief and an arbiter assigned to the first section) with
   random passwords;
2. the service starts in this process (the same app as ``proctor serve``), and the demo prints the addresses and
   the logins;
3. a few players' cameras stream their scenes to the ingest (proctor.demo_cameras: a player leaving, a second
   person, a frozen picture), when the pictures can be had;
4. a simulated platform plays the pairings through signed webhooks (proctor.simulate, proctor.scripted_games): by
   default round 1 of each section, in real time; with ``through_end`` every round of every section as fast as the
   service answers, the later Swiss rounds paired by the demo's own step (proctor.demo_pairings, not an approved
   pairing system) and stored as the service stores a round (proctor.round_pairings), then each knockout's bracket
   drawn by the demo chief and played to its final places; and then checks the standings through the API;
5. it leaves the service running for the newcomer (until Ctrl-C), or, ``headless``, stops and says how it went.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import secrets
import shutil
import signal
import tempfile
import time
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import aiohttp
import tomli_w
from aiohttp import web
from sqlalchemy import Connection, insert, select
from sqlmodel import col

from proctor.accounts import save_arbiter, set_password
from proctor.app import create_app
from proctor.database import create_database_engine, migrate, writing
from proctor.demo_cameras import Cameras, CameraUnavailableError, Scene, clip_paths
from proctor.demo_event import DEMO_LATENESS_S, DEMO_TIME_CONTROL, demo_copy
from proctor.demo_knockouts import KnockoutStage
from proctor.demo_pairings import Played, monrad_round, round_robin_round
from proctor.errors import ServiceError
from proctor.events import EventSpec, SectionSpec, parse_event, store_event
from proctor.models import Platform, PlatformSecret, Tournament
from proctor.round_pairings import add_round
from proctor.scripted_games import Pace
from proctor.settings import Settings
from proctor.signatures import new_secret
from proctor.simulate import (
    PlayReport,
    SectionPlay,
    ServiceClient,
    SimulationError,
    first_open_round,
    play_pairings,
    print_play_report,
    unplayed_games,
)
from proctor.wall_clock import now_ms

EXAMPLES: Final = Path(__file__).resolve().parent.parent / "examples"
DEFAULT_EVENT: Final = EXAMPLES / "national-2023.toml"
"""The example the demo plays by default: the 2023 championships (preliminaries, open sections, knockout finals)."""
PLATFORM: Final = "demo"
LATE_MS: Final = 6_000
"""The demo's late player enters 6 s after the start, within the demo copy's tolerance (DEMO_LATENESS_S)."""
DEMO_BUSY_TIMEOUT_S: Final = 30.0
"""How long the demo's own writes (a round's pairings) wait for SQLite's lock held by the running service."""
SCENES: Final = (Scene.LEAVES, Scene.SECOND_PERSON, Scene.FROZEN, Scene.STILL)


class DemoError(Exception):
    """The demo could not do what it set out to: the message says what."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    event_file: Path = DEFAULT_EVENT
    database_url: str | None = None
    """None: a new SQLite file in a temporary folder, removed at the end."""
    host: str = "127.0.0.1"
    port: int = 8080
    through_end: bool = False
    """Every round of every section, as fast as the service answers, then the standings checked."""
    headless: bool = False
    """Stop once done (exit status 0, or an error) instead of leaving the service running."""
    cameras: bool = True
    seed: int = 1


@dataclass(frozen=True, slots=True)
class Login:
    name: str
    role: str
    password: str
    token: str
    sections: tuple[str, ...] = ()


@dataclass
class Setup:
    """What the demo put in the database."""

    spec: EventSpec
    secret: str
    logins: list[Login]

    @property
    def chief(self) -> Login:
        return self.logins[0]


@dataclass
class Outcome:
    """How the demo went."""

    report: PlayReport = field(default_factory=PlayReport)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cameras: Cameras | None = None


# --- Setting up ------------------------------------------------------------------------------------------------------


def _free_suffix(connection: Connection, slug: str) -> str:
    taken = set(connection.execute(select(col(Tournament.slug)).where(col(Tournament.slug).startswith(slug))).scalars())
    suffix, number = "-demo", 1
    while f"{slug}{suffix}" in taken:
        number += 1
        suffix = f"-demo-{number}"
    return suffix


def _register_platform(connection: Connection, secret: str) -> None:
    platform_id = connection.execute(select(col(Platform.id)).where(col(Platform.name) == PLATFORM)).scalar()
    if platform_id is None:
        platform_id = connection.execute(
            insert(Platform).values(name=PLATFORM, created_ms=now_ms()).returning(col(Platform.id))
        ).scalar_one()
    connection.execute(insert(PlatformSecret).values(platform_id=platform_id, secret=secret, created_ms=now_ms()))


def set_up(settings: Settings, event_file: Path) -> Setup:
    """The demo copy of the event, the platform and the demo arbiters, in one transaction."""
    try:
        raw = tomllib.loads(event_file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise DemoError(f"cannot read the event file {event_file}: {error}") from None
    engine = create_database_engine(settings)
    try:
        migrate(engine)
        with engine.begin() as connection:
            suffix = _free_suffix(connection, str(raw.get("event", {}).get("slug", "event")))
            copy = demo_copy(raw, suffix, dt.datetime.now(dt.UTC).date())
            spec = parse_event(tomli_w.dumps(copy), event_file.parent)
            store_event(connection, spec, now_ms())
            secret = new_secret()
            _register_platform(connection, secret)
            first = next((s.slug for s in spec.sections if s.system != "knockout"), spec.sections[0].slug)
            logins = [
                Login("Demo Chief", "chief", secrets.token_urlsafe(12), secrets.token_urlsafe(24)),
                Login("Demo Deputy", "deputy-chief", secrets.token_urlsafe(12), secrets.token_urlsafe(24)),
                Login("Demo Arbiter", "arbiter", secrets.token_urlsafe(12), secrets.token_urlsafe(24),
                      (f"{spec.slug}/{first}",)),
            ]  # fmt: skip
            for login in logins:
                save_arbiter(connection, login.name, login.role, login.token, list(login.sections) or None,
                             "proctor demo", now_ms())  # fmt: skip
                set_password(connection, login.name, login.password)
    except ServiceError as error:
        raise DemoError(f"the demo copy of {event_file.name} does not load: {error.message}") from None
    finally:
        engine.dispose()
    return Setup(spec, secret, logins)


# --- The service -----------------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def running_service(settings: Settings) -> AsyncIterator[str]:
    """The service (``create_app``, as ``proctor serve`` runs it) in this process; yields its base URL."""
    runner = web.AppRunner(create_app(settings), access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


def print_welcome(base: str, setup: Setup, options: DemoOptions) -> None:
    spec = setup.spec
    print(f"\nproctor demo: {spec.name} ({spec.slug}), {len(spec.sections)} section(s), time control "
          f"{DEMO_TIME_CONTROL} (a demo copy of {options.event_file.name})")  # fmt: skip
    print(f"  the service     {base}/")
    print(f"  arbiters' desk  {base}/arbiter")
    print(f"  review page     {base}/review")
    print("  logins (name / password):")
    for login in setup.logins:
        scope = f", assigned to {', '.join(login.sections)}" if login.sections else ""
        print(f"    {login.name:<13} {login.password}   ({login.role}{scope})")
    print(f"  platform '{PLATFORM}' secret: {setup.secret}", flush=True)


# --- Playing ---------------------------------------------------------------------------------------------------------


async def start_cameras(session: aiohttp.ClientSession, client: ServiceClient, base: str, settings: Settings,
                        sections: list[SectionPlay]) -> Cameras | None:  # fmt: skip
    """A camera for a few players of the first round (one scene each, on different boards); None, and a line saying
    why, when the cameras cannot run."""
    try:
        clips = await asyncio.to_thread(clip_paths, Path(settings.models_dir) / "demo")
        cameras = Cameras(clips)
    except (CameraUnavailableError, OSError, ValueError) as error:
        print(f"cameras: not started ({error}); the games are played without them", flush=True)
        return None
    chosen: list[tuple[SectionPlay, str, Scene]] = []  # the first player of each board of the first round
    for section in sections:
        standings = await client.standings(section)
        first_round = min((p["round"] for p in standings["pairings"]), default=0)
        seats = await client.seats(section)
        for pairing in standings["pairings"]:
            seat = seats.get(pairing["black"]["start_no"])
            if pairing["round"] == first_round and pairing["match_game"] == 1 and pairing["white"] and seat:
                chosen.append((section, seat.ref, SCENES[len(chosen) % len(SCENES)]))
    chosen = chosen[: len(SCENES)]
    links: dict[str, str] = {}
    for place in {(s.event, s.section) for s, _, _ in chosen}:
        issued = await client.request("POST", f"/api/v1/events/{place[0]}/sections/{place[1]}/stream-links",
                                      {"which": "all"})  # fmt: skip
        links |= {row["player"]: row["path"].rsplit("/", 1)[1] for row in issued["issued"]}
    try:
        for _section, player, scene in chosen:
            await cameras.connect(session, base, links[player], player, scene)
    except (CameraUnavailableError, KeyError, aiohttp.ClientError) as error:
        print(f"cameras: {error}; the games go on", flush=True)
    shown = ", ".join(f"{camera.scene.value} (player {camera.player})" for camera in cameras.cameras)
    print(f"cameras: {len(cameras.cameras)} streaming: {shown}", flush=True)
    return cameras


async def _pair_next_round(settings: Settings, client: ServiceClient, section: SectionPlay, round_no: int,
                           standings: dict[str, Any]) -> None:  # fmt: skip
    """The demo's own pairings for ``round_no`` (proctor.demo_pairings), stored as the service stores a round."""
    players = sorted((await client.seats(section)).keys())
    history = [Played(p["round"], p["black"]["start_no"], p["white"]["start_no"] if p["white"] else None,
                      p["result"]) for p in standings["pairings"]]  # fmt: skip
    boards = (round_robin_round(players, round_no) if section.system == "round-robin"
              else monrad_round(players, history))  # fmt: skip

    def store() -> int:
        # The demo's own write beside the running service: it may wait for the service's writer longer than a
        # request would (a busy machine's batch can hold SQLite's lock beyond the service's 3 s).
        engine = create_database_engine(
            replace(settings, sqlite_busy_timeout_s=max(settings.sqlite_busy_timeout_s, DEMO_BUSY_TIMEOUT_S))
        )
        try:
            with writing(engine).begin() as connection:  # the write lock first: the service writes meanwhile
                return add_round(connection, section.event, section.section, round_no, boards)
        finally:
            engine.dispose()

    await asyncio.to_thread(store)


async def play_section(session: aiohttp.ClientSession, client: ServiceClient, base: str, settings: Settings,
                       setup: Setup, section: SectionPlay, index: int, options: DemoOptions,
                       outcome: Outcome) -> None:  # fmt: skip
    """One section: its first open round in real time, or (through the end) every round as fast as possible."""
    pace = Pace(late_ms=LATE_MS, think_ms=900.0)
    rounds = _spec_of(setup, section).rounds
    while True:
        standings = await client.standings(section)
        round_no = first_open_round(standings)
        if round_no is None:
            paired = max((p["round"] for p in standings["pairings"]), default=0)
            if not options.through_end or paired >= rounds:
                return
            round_no = paired + 1
            await _pair_next_round(settings, client, section, round_no, standings)
            standings = await client.standings(section)
        games = unplayed_games(standings, await client.seats(section), round_no)
        await play_pairings(session, base, PLATFORM, setup.secret, section, games, seed=options.seed,
                            real_time=not options.through_end, pace=pace,
                            games_per_match=standings["games_per_match"], report=outcome.report,
                            offset=index)  # fmt: skip
        if not options.through_end:
            return


def _spec_of(setup: Setup, section: SectionPlay) -> SectionSpec:
    return next(s for s in setup.spec.sections if s.slug == section.section)


def _qualify_from(setup: Setup, section: SectionPlay) -> str:
    knockout = _spec_of(setup, section).knockout
    return knockout.qualify_from if knockout is not None else ""


async def check_standings(client: ServiceClient, setup: Setup, sections: list[SectionPlay], outcome: Outcome,
                          whole_event: bool) -> None:  # fmt: skip
    """Every section's standings through the API: complete after the rounds played, one row per player."""
    for section in sections:
        spec = _spec_of(setup, section)
        try:
            standings = await client.standings(section)
        except SimulationError as error:
            outcome.problems.append(f"{section.place}: no standings: {error}")
            continue
        wanted = spec.rounds if whole_event else 1
        rows = standings["rows"]
        if standings["complete"] < wanted or len(rows) != len(spec.players):
            outcome.problems.append(f"{section.place}: standings after round {standings['complete']} of {wanted}, "
                                    f"{len(rows)} row(s) for {len(spec.players)} player(s)")  # fmt: skip
            continue
        leaders = ", ".join(f"{row['place']}. no. {row['start_no']} {row['points']}" for row in rows[:3])
        print(f"standings {section.place} after round {standings['round']}: {leaders} …", flush=True)


async def run(options: DemoOptions) -> int:
    work = Path(tempfile.mkdtemp(prefix="proctor-demo-")) if options.database_url is None else None
    overrides: dict[str, Any] = {"host": options.host, "port": options.port}
    if work is not None:
        overrides |= {"database_url": f"sqlite:///{work / 'demo.db'}", "media_dir": str(work / "media")}
    else:
        overrides["database_url"] = options.database_url
    settings = Settings.from_env(**overrides)
    started = time.perf_counter()
    task = asyncio.current_task()
    if task is not None:  # a stop (SIGTERM) as a Ctrl-C: the service stops and the temporary folder goes
        with contextlib.suppress(NotImplementedError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        setup = await asyncio.to_thread(set_up, settings, options.event_file)
        async with running_service(settings) as base, aiohttp.ClientSession() as session:
            print_welcome(base, setup, options)
            outcome = Outcome()
            try:
                return await _play_and_wait(session, base, settings, setup, options, outcome, started)
            finally:
                if outcome.cameras is not None:
                    await outcome.cameras.close()
    except DemoError as error:
        print(f"proctor demo: {error}")
        return 1
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


async def _play_and_wait(session: aiohttp.ClientSession, base: str, settings: Settings, setup: Setup,
                         options: DemoOptions, outcome: Outcome, started: float) -> int:  # fmt: skip
    await play(session, base, settings, setup, options, outcome)
    print_play_report(outcome.report, time.perf_counter() - started)
    for note in outcome.notes:
        print(note)
    for problem in outcome.problems:
        print(f"proctor demo: {problem}")
    if options.headless:
        return 1 if outcome.problems or outcome.report.disagreed else 0
    print(f"\nThe service keeps running at {base}/ with the demo's games: open the desk ({base}/arbiter) and log "
          "in as Demo Chief. Ctrl-C stops it.", flush=True)  # fmt: skip
    await asyncio.Event().wait()
    return 0


async def play(session: aiohttp.ClientSession, base: str, settings: Settings, setup: Setup, options: DemoOptions,
               outcome: Outcome) -> None:  # fmt: skip
    client = ServiceClient(session, base, setup.chief.token)
    every = [replace(s, max_candidates=_spec_of(setup, s).max_candidates,
                     adjudication=_spec_of(setup, s).policy.adjudication)
             for s in await client.sections(setup.spec.slug)]  # fmt: skip
    sections = [s for s in every if s.system != "knockout"]
    if options.cameras:
        outcome.cameras = await start_cameras(session, client, base, settings, sections)
    try:
        mode = "every round, as fast as the service answers" if options.through_end else "round 1, in real time"
        print(f"playing {mode}: {len(sections)} section(s); a late player enters {LATE_MS // 1000} s after the "
              f"start (the demo's tolerance is {DEMO_LATENESS_S:g} s)", flush=True)  # fmt: skip
        await asyncio.gather(*(play_section(session, client, base, settings, setup, section, index, options,
                                            outcome) for index, section in enumerate(sections)))  # fmt: skip
        knockouts = [s for s in every if s.system == "knockout"]
        if knockouts and options.through_end:
            pace = Pace(late_ms=LATE_MS)
            by_slug = {s.section: s for s in every}
            stages = [KnockoutStage(session, client, base, setup.secret, _spec_of(setup, s), s,
                                    by_slug.get(_qualify_from(setup, s)), outcome.report, options.seed, pace)
                      for s in knockouts]  # fmt: skip
            for problems in await asyncio.gather(*(stage.play() for stage in stages)):
                outcome.problems.extend(problems)
        elif knockouts:
            names = ", ".join(s.section for s in knockouts)
            outcome.notes.append(f"the knockout finals ({names}) follow the preliminaries' last round: "
                                 "`proctor demo --through-end` plays them")  # fmt: skip
        await check_standings(client, setup, sections, outcome, options.through_end)
    except SimulationError as error:
        outcome.problems.append(str(error))


def main(options: DemoOptions) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(run(options))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nproctor demo: stopped")
        return 0
