"""A web process (issue 16, ``WRITER_URLS``): one of several in front of the service, each serving the pages and
the desk's live stream itself and forwarding every other request to the one service process that writes.

The service's state is one writer's (the games in memory, the writer thread, the camera ingest): a web process does
not hold it, it holds what a busy event needs many of, the arbiters' open live streams (from the database, which says
whose session is open, and the bus on Redis, which carries every committed change) and the pages.  Everything else
goes to the service as it came, its answer comes back as it went (streamed: a player's event stream, a download), and
the service reads the client's address, scheme and host from the ``X-Forwarded-*`` headers this process adds
(``TRUSTED_PROXIES`` there: proctor.web.forwarded).

Which service process: ``WRITER_URLS`` names the active one and its standby, whose port stays closed until it holds
the writer's lease (proctor.writer_lease).  A request goes to the one that last answered; a refused connection
(nothing was sent) goes to the next, round and round, for up to ``WRITER_WAIT_S`` (15 s) while a standby takes over
(about a second after the active one dies), then a 503 with ``Retry-After``.  A request the service received and did
not answer (it died meanwhile) is never sent again from here, since it may have been stored: a 502 says so, and the
client retries (a platform's delivery is stored once by its id).  Each request opens its own connection, so that a
connection to a process that has died is never taken from a pool and mistaken for one that refused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from sqlalchemy import select
from yarl import URL

from proctor.context import WEB_CONTEXT, WebContext
from proctor.database import create_database_engine
from proctor.errors import ConfigurationError, WriterLostError, WriterUnavailableError
from proctor.redis_bus import RedisBus
from proctor.settings import Settings
from proctor.web import dashboards, page_modules, stream
from proctor.web.forwarded import FROM_PROXY, PEER, forwarded_middleware, trusted_networks
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.status import error_middleware

log = logging.getLogger("proctor.forwarding")

RETRY_AFTER_S: Final = 2
"""The ``Retry-After`` of the 503 when none did."""
CONNECT_TIMEOUT_S: Final = 3.0
"""A connection not accepted within this is a refused one (nothing was sent)."""
HOP_BY_HOP: Final = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
    "upgrade", "host", "content-length",
})  # fmt: skip
"""Headers that belong to one connection, not to the request or the answer (RFC 9110, 7.6.1)."""
FORWARDED: Final = frozenset({"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"})
"""What this process writes itself (a client's own are dropped unless it came through a trusted proxy)."""


def writer_urls(setting: str) -> tuple[str, ...]:
    """``WRITER_URLS`` read: ``http(s)://host:port`` each, comma-separated, without a path."""
    urls = []
    for item in (part.strip().rstrip("/") for part in setting.split(",")):
        if not item:
            continue
        url = URL(item)
        if url.scheme not in ("http", "https") or not url.host or url.path not in ("", "/") or url.query_string:
            raise ConfigurationError(f"PROCTOR_WRITER_URLS: {item!r} is not http(s)://host:port")
        urls.append(item)
    if not urls:
        raise ConfigurationError("PROCTOR_WRITER_URLS: no service process named")
    return tuple(urls)


class WriterLink:
    """The web process's way to the service: which process answered last, and the forwarding itself."""

    def __init__(self, urls: Sequence[str], wait_s: float) -> None:
        self.urls = list(urls)
        self.wait_s = wait_s
        self.current = 0
        """The index of the process that answered last (tried first)."""
        self.answered: str | None = None
        """Its URL, once one has answered (``/healthz``)."""
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        connector = aiohttp.TCPConnector(force_close=True, limit=0)
        timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT_S, sock_connect=CONNECT_TIMEOUT_S)
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _open(self, request: web.Request, body: bytes, headers: CIMultiDict[str]) -> aiohttp.ClientResponse:
        """The service's answer's head, from the first process that accepts the request."""
        assert self._session is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        while True:
            for offset in range(len(self.urls)):
                index = (self.current + offset) % len(self.urls)
                try:
                    upstream = await self._session.request(
                        request.method, self.urls[index] + request.rel_url.raw_path_qs, data=body, headers=headers,
                        allow_redirects=False,
                    )  # fmt: skip
                except (TimeoutError, aiohttp.ClientConnectorError):
                    continue  # refused or never accepted: nothing was sent; the next
                except aiohttp.ClientError as error:
                    raise WriterLostError(
                        "the service process went away before answering: the request may or may not have been "
                        "stored; retry it",
                    ) from error
                if self.current != index or self.answered is None:
                    log.info("forwarding to %s", self.urls[index])
                self.current, self.answered = index, self.urls[index]
                return upstream
            if loop.time() >= deadline:
                raise WriterUnavailableError(
                    f"no service process accepted the request within {self.wait_s:g} s (a standby may be taking "
                    "over): it was not sent; retry", retry_after_s=RETRY_AFTER_S,
                )  # fmt: skip
            await asyncio.sleep(0.2)

    async def forward(self, request: web.Request) -> web.StreamResponse:
        """Send ``request`` to the service and its answer back, streamed."""
        body = await request.read()
        upstream = await self._open(request, body, _outgoing_headers(request))
        async with upstream:
            headers = CIMultiDict((k, v) for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP)
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason, headers=headers)
            if upstream.content_length is not None and request.method != "HEAD":
                response.content_length = upstream.content_length
            await response.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
            except (TimeoutError, aiohttp.ClientError):
                # The service went away mid-answer (its process ended): the client sees the answer end early.
                log.warning("the service's answer ended early (%s %s)", request.method, _route(request))
                return response
            await response.write_eof()
            return response


def _outgoing_headers(request: web.Request) -> CIMultiDict[str]:
    """The request's headers as the service gets them: without those of this connection, and with who asked
    (``X-Forwarded-For`` the chain so far, believed by proctor.web.forwarded only from a trusted proxy, with this
    client appended), how (``-Proto``) and which host (``-Host``)."""
    headers = CIMultiDict(
        (k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP and k.lower() not in FORWARDED
    )
    chain = request.headers.get("X-Forwarded-For", "") if request.get(FROM_PROXY) else ""
    headers["X-Forwarded-For"] = ", ".join(part for part in (chain, request.get(PEER) or "") if part)
    headers["X-Forwarded-Proto"] = request.scheme
    headers["X-Forwarded-Host"] = request.host
    return headers


def _route(request: web.Request) -> str:
    return request.match_info.route.resource.canonical if request.match_info.route.resource is not None else "-"


LINK: Final = web.AppKey("writer_link", WriterLink)


async def forward(request: web.Request) -> web.StreamResponse:
    """Every request this process does not serve itself."""
    return await request.app[LINK].forward(request)


async def healthz(request: web.Request) -> web.Response:
    """A web process's health: 200 while the database answers, with the service process it forwards to (None until
    one has answered)."""
    context = request.app[WEB_CONTEXT]
    await read(context, lambda connection: connection.execute(select(1)))
    return web.json_response({"status": "ok", "process": "web", "forwarding_to": request.app[LINK].answered})


LOCAL_ROUTES: Final[tuple[Route, ...]] = (*stream.ROUTES, *dashboards.ROUTES, *page_modules.ROUTES)
"""What a web process serves itself: the desk's live stream and the pages (the rest is forwarded)."""


def create_web_app(settings: Settings) -> web.Application:
    """A web process's app: the pages and the live stream here, everything else forwarded to ``WRITER_URLS``."""
    urls = writer_urls(settings.writer_urls)
    if not settings.bus_url:
        raise ConfigurationError("a web process (PROCTOR_WRITER_URLS) needs the shared bus: PROCTOR_BUS_URL")
    networks = trusted_networks(settings.trusted_proxies)
    app = web.Application(client_max_size=256 * 1024, middlewares=[error_middleware, forwarded_middleware(networks)])
    app.cleanup_ctx.append(_resources(settings, urls))
    for route in LOCAL_ROUTES:
        assert route.handler is not None
        app.router.add_route(route.method, route.path, route.handler)
    app.router.add_route("GET", "/healthz", healthz)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


def _resources(settings: Settings, urls: tuple[str, ...]) -> Any:
    async def context(app: web.Application) -> AsyncIterator[None]:
        engine = create_database_engine(settings)
        bus = RedisBus(asyncio.get_running_loop(), settings.bus_url)
        bus.start()
        link = WriterLink(urls, settings.writer_wait_s)
        await link.start()
        app[WEB_CONTEXT] = WebContext(settings, engine, bus)
        app[LINK] = link
        log.info("web process ready: forwarding to %s", ", ".join(urls))
        yield
        await link.close()
        await bus.close()
        engine.dispose()

    return context
