"""A player behind a network that lets nothing through but a TURN server (issue 16): Debian's coturn, started here
with the TURN REST secret the service mints credentials from, over TCP (a network that blocks UDP).  The player's
peer (aiortc) may use relayed candidates only (``iceTransportPolicy: relay``: its host candidates are never tried,
as if blocked) and takes its ICE servers from ``/api/v1/rtc/config``; its camera reaches the service's checks
through coturn.  Credentials the service did not mint are refused by coturn."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.rtcconfiguration import RTCIceTransportPolicy

from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_camera import issue_token
from tests.programs import require_program
from tests.video.tracks import MovingPicture

pytestmark = pytest.mark.asyncio

SECRET = "turn-test-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def coturn(folder: Path, relay_ip: str = "127.0.0.1") -> Iterator[int]:
    """coturn listening on 127.0.0.1 (TCP and UDP on one port), TURN REST auth, relaying from ``relay_ip`` (loopback
    peers allowed: the service is on loopback here) over a small port range; its port, stopped after."""
    require_program("turnserver", "coturn")
    port, low = free_port(), 40_000 + free_port() % 20_000
    process = subprocess.Popen(
        ["turnserver", "-n", "--listening-ip=127.0.0.1", f"--relay-ip={relay_ip}", f"--listening-port={port}",
         "--use-auth-secret", f"--static-auth-secret={SECRET}", "--realm=proctor.test", "--no-tls", "--no-dtls",
         "--no-cli", "--allow-loopback-peers", f"--min-port={low}", f"--max-port={low + 200}",
         f"--log-file={folder / 'turn.log'}", "--simple-log", f"--pidfile={folder / 'turn.pid'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("coturn did not start")
        yield port
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def turn_port(tmp_path: Path) -> Iterator[int]:
    """coturn on loopback for the test."""
    with coturn(tmp_path) as port:
        yield port


@pytest.fixture
def settings(database_url: str, turn_port: int) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=600_000,
                    ice_servers=f"turn:127.0.0.1:{turn_port}?transport=tcp", turn_secret=SECRET)  # fmt: skip


async def relay_only_offer(platform: Platformer, token: str, servers: list[dict[str, Any]]) -> RTCPeerConnection:
    ice = [RTCIceServer(s["urls"], s.get("username"), s.get("credential")) for s in servers]
    pc = RTCPeerConnection(RTCConfiguration(iceServers=ice, iceTransportPolicy=RTCIceTransportPolicy.RELAY))
    pc.addTrack(MovingPicture(5))
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    response = await platform.client.post("/api/v1/rtc/offer", json={"sdp": sdp, "type": "offer", "token": token})
    assert response.status == 200, await response.text()
    answer = await response.json()
    await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
    return pc


def candidate_types(pc: RTCPeerConnection) -> list[str]:
    """The types of the player's own candidates in its offer."""
    return sorted({line.split()[7] for line in pc.localDescription.sdp.splitlines() if line.startswith("a=candidate")})


async def test_a_player_who_can_only_reach_turn_streams_through_coturn_over_tcp(
    platform: Platformer, settings: Settings
) -> None:
    token = await issue_token(platform, settings, "p1")
    config = await (await platform.client.get(f"/api/v1/rtc/config?token={token}")).json()
    (server,) = config["iceServers"]
    assert server["urls"].startswith("turn:") and server["username"].endswith(":p1") and server["credential"]
    pc = await relay_only_offer(platform, token, config["iceServers"])
    try:
        assert candidate_types(pc) == ["relay"]  # no host candidate offered: only coturn's relay
        ingest = app_context(platform).camera.ingest
        ends = time.monotonic() + 20
        while time.monotonic() < ends:
            session = ingest.live("p1")
            if session is not None and session.frames_analysed >= 4:
                break
            await asyncio.sleep(0.2)
        session = ingest.live("p1")
        assert session is not None and session.frames_analysed >= 4, "no frames through the TURN relay"
        assert pc.connectionState == "connected"
    finally:
        await pc.close()


async def test_credentials_the_service_did_not_mint_are_refused_by_coturn(turn_port: int) -> None:
    forged = RTCIceServer(f"turn:127.0.0.1:{turn_port}?transport=tcp", f"{int(time.time()) + 600}:p1",
                          "bm90IG1pbnRlZCBieSB0aGUgc2VydmljZQ==")  # fmt: skip
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[forged], iceTransportPolicy=RTCIceTransportPolicy.RELAY))
    pc.addTrack(MovingPicture(5))
    try:
        await pc.setLocalDescription(await pc.createOffer())
        assert candidate_types(pc) == []  # coturn gave no relay: nothing to connect with
    finally:
        await pc.close()
