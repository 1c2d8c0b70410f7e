"""Debian's Janus (1.1.2) started for a test (issue 16's SFU): its HTTP API and admin API on free loopback ports, the
VideoRoom plugin only, token authentication on, nothing kept.  A test that needs it fails under CI when it is missing
(.ci/run installs it) and is skipped elsewhere."""

from __future__ import annotations

import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.programs import require_program

LIBRARIES = Path("/usr/lib/x86_64-linux-gnu/janus")
OTHER_PLUGINS = ("audiobridge", "duktape", "echotest", "lua", "nosip", "recordplay", "sip", "streaming", "textroom",
                 "videocall", "voicemail")  # fmt: skip
OTHER_TRANSPORTS = ("websockets", "pfunix", "mqtt", "rabbitmq", "nanomsg")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class JanusServer:
    folder: Path
    api_port: int
    admin_port: int
    admin_secret: str
    process: subprocess.Popen[bytes] | None = None
    ip: str = "127.0.0.1"
    """Where its API listens (a browser test's namespace address: Chromium's page calls it)."""

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.api_port}/janus"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}/admin"

    def write_configs(self) -> None:
        plugins = ",".join(f"libjanus_{name}.so" for name in OTHER_PLUGINS)
        transports = ",".join(f"libjanus_{name}.so" for name in OTHER_TRANSPORTS)
        (self.folder / "janus.jcfg").write_text(
            "general: {\n"
            f'  configs_folder = "{self.folder}"\n  plugins_folder = "{LIBRARIES / "plugins"}"\n'
            f'  transports_folder = "{LIBRARIES / "transports"}"\n  events_folder = "{LIBRARIES / "events"}"\n'
            f'  loggers_folder = "{LIBRARIES / "loggers"}"\n  debug_level = 4\n'
            f'  admin_secret = "{self.admin_secret}"\n  token_auth = true\n  server_name = "proctor-test"\n'
            "}\n"
            f'plugins: {{\n  disable = "{plugins}"\n}}\n'
            f'transports: {{\n  disable = "{transports}"\n}}\n'
            "events: {\n  broadcast = false\n}\n"
        )
        (self.folder / "janus.transport.http.jcfg").write_text(
            'general: {\n  json = "compact"\n  base_path = "/janus"\n  http = true\n'
            f'  port = {self.api_port}\n  ip = "{self.ip}"\n  https = false\n}}\n'
            'admin: {\n  admin_base_path = "/admin"\n  admin_http = true\n'
            f'  admin_port = {self.admin_port}\n  admin_ip = "127.0.0.1"\n  admin_https = false\n}}\n'
        )
        (self.folder / "janus.plugin.videoroom.jcfg").write_text("general: {\n}\n")

    def start(self) -> None:
        self.write_configs()
        log = open(self.folder / "janus.log", "ab")  # noqa: SIM115 - handed to the child process
        self.process = subprocess.Popen(
            ["janus", "-C", str(self.folder / "janus.jcfg"), "-F", str(self.folder), "-o"], stdout=log, stderr=log
        )
        for _ in range(200):
            try:
                with socket.create_connection((self.ip, self.api_port), timeout=0.2):
                    return
            except OSError:
                assert self.process.poll() is None, (self.folder / "janus.log").read_text()[-2000:]
                time.sleep(0.05)
        raise AssertionError("Janus did not open its API")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process = None


def start_janus(folder: Path, ip: str = "127.0.0.1") -> JanusServer:
    """A Janus started with its configuration in ``folder``, its API on ``ip`` (the caller stops it)."""
    server = JanusServer(folder, _free_port(), _free_port(), secrets.token_hex(16), ip=ip)
    server.start()
    return server


@pytest.fixture
def janus_server(tmp_path: Path) -> Iterator[JanusServer]:
    require_program("janus", "janus")
    folder = tmp_path / "janus"
    folder.mkdir()
    server = start_janus(folder)
    try:
        yield server
    finally:
        server.stop()
