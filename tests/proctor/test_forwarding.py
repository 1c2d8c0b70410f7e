"""A web process in front of the service (issue 16, proctor.forwarding), in this test's own process: a platform's
deliveries and an arbiter's reads go through it to a real service app and come back as the service answered them; the
desk's live stream is its own, fed by the bus on a real redis-server; with no service process to take a request, it
is held for ``WRITER_WAIT_S`` and refused with a 503 that says it was not sent.  And the client's address, scheme and
host as the service sees them behind trusted proxies (proctor.web.forwarded)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.database import create_database_engine
from proctor.errors import ConfigurationError
from proctor.forwarding import writer_urls
from proctor.models import Arbiter
from proctor.settings import Settings
from proctor.web.forwarded import client_of, forwarded_middleware, trusted_networks
from tests.proctor.conftest import Platformer, register_platform, seat
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_camera_controls import Page
from tests.proctor.test_crash import free_port


@pytest.fixture
def settings(database_url: str, redis_server: RedisServer) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=600_000, bus_url=redis_server.url)


def add_arbiter(database_url: str, token: str) -> None:
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Li", role="chief", token_hash=token_hash(token)))
    engine.dispose()


async def service_behind_a_web_process(settings: Settings, aiohttp_client: Any) -> tuple[Any, Any]:
    """The service's app, and a web process's app forwarding to it (each with its test client)."""
    service = await aiohttp_client(create_app(settings))
    front = create_app(Settings(database_url=settings.database_url, bus_url=settings.bus_url,
                                writer_urls=f"http://127.0.0.1:{service.port}"))  # fmt: skip
    return service, await aiohttp_client(front)


@pytest.mark.asyncio
async def test_deliveries_and_reads_go_through_a_web_process_and_its_desk_stream_hears_them(
    settings: Settings, aiohttp_client: Any
) -> None:
    secret = register_platform(settings.database_url)
    add_arbiter(settings.database_url, "li")
    service, web_process = await service_behind_a_web_process(settings, aiohttp_client)
    desk = await web_process.get("/api/v1/stream", headers={"Authorization": "Bearer li"})
    assert desk.status == 200 and desk.headers["Content-Type"] == "text/event-stream"
    assert (await asyncio.wait_for(desk.content.readline(), 10)).startswith(b": connected")
    platform = Platformer(web_process, "tourney", secret)
    status, body = await platform.create("g1", rule="freestyle")
    assert status == 200, body
    status, body = await platform.send("player.joined", "g1", {"player": "g1-b"})
    assert status == 200, body
    heard: list[str] = []

    async def until_game() -> None:
        async for raw in desk.content:
            heard.append(raw.decode().strip())
            if heard[-1].startswith("data: ") and '"g1"' in heard[-1]:
                return

    await asyncio.wait_for(until_game(), 10)  # the web process's own stream, fed through Redis
    # A reused delivery id is answered as the service answers it (stored once), through the web process.
    again, first = await platform.post(platform.body("player.joined", "g1", {"player": "g1-w"}), webhook_id="dup")
    repeat, second = await platform.post(platform.body("player.joined", "g1", {"player": "g1-w"}, seq=3), "dup")
    assert again == 200 and repeat == 200 and second["status"] == "duplicate", (first, second)
    # A bad signature is the service's 401, word for word; a read comes back with the service's headers.
    bad, refused = await platform.post(platform.body("move", "g1", {"point": "h8"}), secret="whsec_" + "A" * 32)
    assert bad == 401 and refused["error"] == "unauthorized" and "zh" in refused["message_words"]
    games = await web_process.get("/api/v1/games", headers={"Authorization": "Bearer li"})
    direct = await service.get("/api/v1/games", headers={"Authorization": "Bearer li"})
    assert games.status == 200 and await games.json() == await direct.json()
    assert games.headers["Content-Type"] == direct.headers["Content-Type"]
    # The pages are the web process's own; its health names the service process it forwards to.
    page = await web_process.get("/arbiter")
    assert page.status == 200 and "Content-Security-Policy" in page.headers
    health = await (await web_process.get("/healthz")).json()
    assert health == {"status": "ok", "process": "web", "forwarding_to": f"http://127.0.0.1:{service.port}"}
    desk.close()


@pytest.mark.asyncio
async def test_with_no_service_process_a_request_waits_then_is_refused_as_not_sent(
    settings: Settings, aiohttp_client: Any
) -> None:
    register_platform(settings.database_url)  # the database made, as the service would have
    add_arbiter(settings.database_url, "li")
    closed = [free_port(), free_port()]
    front = create_app(Settings(database_url=settings.database_url, bus_url=settings.bus_url, writer_wait_s=1.0,
                                writer_urls=",".join(f"http://127.0.0.1:{port}" for port in closed)))  # fmt: skip
    web_process = await aiohttp_client(front)
    began = time.monotonic()
    response = await web_process.post("/api/v1/webhooks/tourney", data=b"{}")
    waited = time.monotonic() - began
    body = await response.json()
    assert response.status == 503 and response.headers["Retry-After"] == "2", body
    assert body["error"] == "writer-unavailable" and "not sent" in body["message"] and body["message_words"]["zh"]
    assert 1.0 <= waited < 5.0
    # What the web process serves itself still works: the desk's stream (sessions from the database) and the pages.
    desk = await web_process.get("/api/v1/stream", headers={"Authorization": "Bearer li"})
    assert desk.status == 200
    desk.close()
    refused = await web_process.get("/api/v1/stream", headers={"Authorization": "Bearer nobody"})
    assert refused.status == 401
    assert (await web_process.get("/review")).status == 200
    assert (await (await web_process.get("/healthz")).json())["forwarding_to"] is None


def test_a_web_process_needs_the_bus_and_well_formed_service_urls(tmp_path: Any) -> None:
    database = f"sqlite:///{tmp_path / 'p.db'}"
    with pytest.raises(ConfigurationError, match="PROCTOR_BUS_URL"):
        create_app(Settings(database_url=database, writer_urls="http://127.0.0.1:8080"))
    for wrong in ("127.0.0.1:8080", "ftp://h:1", "http://h:1/api", "http://h:1?x=1", " , "):
        with pytest.raises(ConfigurationError, match="PROCTOR_WRITER_URLS"):
            writer_urls(wrong)
    assert writer_urls("http://a:8080/, https://b:8443") == ("http://a:8080", "https://b:8443")
    with pytest.raises(ConfigurationError, match="TRUSTED_PROXIES"):
        trusted_networks("10.0.0.0/8, not-an-address")


def test_the_client_is_read_from_the_right_of_the_chain_past_the_trusted_proxies() -> None:
    proxies = trusted_networks("10.0.0.0/8, 192.168.1.5")
    # Not from a proxy: its own address, whatever it wrote.
    assert client_of("203.0.113.7", "198.51.100.1", proxies) == "203.0.113.7"
    # From the web process (10.0.0.3), which appended the reverse proxy (192.168.1.5), which appended the client.
    assert client_of("10.0.0.3", "203.0.113.7, 192.168.1.5", proxies) == "203.0.113.7"
    # A client that wrote a chain of its own is still the first untrusted address from the right.
    assert client_of("10.0.0.3", "1.2.3.4, 203.0.113.7, 192.168.1.5", proxies) == "203.0.113.7"
    assert client_of("10.0.0.3", "", proxies) == "10.0.0.3"
    # Not an address: not a trusted proxy either, so it is taken as written (the login limit keys on it as on any).
    assert client_of("10.0.0.3", "garbage, 10.0.0.9", proxies) == "garbage"


@pytest.mark.asyncio
async def test_behind_a_trusted_proxy_the_handlers_see_the_clients_address_scheme_and_host(aiohttp_client: Any) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.json_response({"remote": request.remote, "scheme": request.scheme, "host": request.host,
                                  "origin": str(request.url.origin())})  # fmt: skip

    def app(trusted: str) -> web.Application:
        application = web.Application(middlewares=[forwarded_middleware(trusted_networks(trusted))])
        application.router.add_get("/who", echo)
        return application

    headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "desk.example.org"}
    behind = await aiohttp_client(app("127.0.0.1"))
    seen = await (await behind.get("/who", headers=headers)).json()
    assert seen == {"remote": "203.0.113.7", "scheme": "https", "host": "desk.example.org",
                    "origin": "https://desk.example.org"}  # fmt: skip
    exposed = await aiohttp_client(app(""))  # nobody trusted: the headers are not believed
    seen = await (await exposed.get("/who", headers=headers)).json()
    assert seen["remote"] == "127.0.0.1" and seen["scheme"] == "http" and seen["host"] != "desk.example.org"


@pytest.mark.asyncio
async def test_a_players_event_stream_is_forwarded_live_and_an_arbiters_message_arrives_on_it(
    settings: Settings, aiohttp_client: Any
) -> None:
    secret = register_platform(settings.database_url)
    add_arbiter(settings.database_url, "li")
    _, web_process = await service_behind_a_web_process(settings, aiohttp_client)
    await seat(Platformer(web_process, "tourney", secret), "m-1")
    arbiter = {"Authorization": "Bearer li"}
    issued = await web_process.post("/api/v1/players/m-1/stream-token", headers=arbiter)
    assert issued.status == 201
    token = (await issued.json())["token"]
    page = Page(await web_process.get(f"/api/v1/play/{token}/events"))  # the service's stream, through the web process
    kind, state = await page.next()
    assert kind == "state" and state["messages"] == []
    sent = await web_process.post("/api/v1/players/m-1/camera/messages", headers=arbiter,
                                  json={"text": "请把双手放在画面内"})  # fmt: skip
    assert sent.status == 201
    kind, message = await page.next()  # streamed as it came, not when the stream ends
    assert kind == "message" and message["text"] == "请把双手放在画面内"
    page.response.close()
