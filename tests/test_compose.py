"""docker/compose.yaml, the distributed mode's stack (issue 16), as ``docker-compose config`` resolves it (Debian's
docker-compose, installed by .ci/run; no Docker engine runs here, so the behaviour itself is shown by
tests/proctor/test_web_processes.py on processes).  Its parts must agree with each other and with the service's
settings: every ``PROCTOR_*`` is a setting the service reads and takes, the web processes forward to the services that
hold the writer's lease, every process of the service shares one database and one bus, the proxy and the web processes
are trusted where they stand, and coturn's secret is the one the writers mint credentials with."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from yarl import URL

from proctor.forwarding import writer_urls
from proctor.settings import Settings
from proctor.web.forwarded import trusted_networks
from tests.programs import require_program

COMPOSE = Path(__file__).resolve().parent.parent / "docker" / "compose.yaml"
DOCKERFILE = Path(__file__).resolve().parent.parent / "docker" / "Dockerfile"
SECRET = "0123456789abcdef" * 4


@pytest.fixture(scope="module")
def stack() -> dict[str, Any]:
    require_program("docker-compose", "docker-compose")
    env = {**os.environ, "TURN_SECRET": SECRET, "PUBLIC_HOST": "desk.example.org"}
    run = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env,
                         timeout=60, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    resolved: dict[str, Any] = yaml.safe_load(run.stdout)
    return resolved


def image_settings() -> dict[str, str]:
    """The ``PROCTOR_*`` the image sets itself (docker/Dockerfile's ENV)."""
    text = DOCKERFILE.read_text().split("ENV ", 1)[1].split("\nVOLUME", 1)[0]
    pairs = [part.strip().rstrip("\\").strip() for part in text.splitlines()]
    return dict(pair.split("=", 1) for pair in pairs if pair)


def settings_of(service: dict[str, Any]) -> Settings:
    """The settings the process of ``service`` runs with: the image's, then the file's."""
    env = {**image_settings(), **service.get("environment", {})}
    known = {f"PROCTOR_{field.name.upper()}" for field in dataclasses.fields(Settings)}
    assert [name for name in env if name.startswith("PROCTOR_") and name not in known] == []
    return Settings.from_env(env)


def test_without_the_secret_the_stack_is_refused() -> None:
    require_program("docker-compose", "docker-compose")
    env = {key: value for key, value in os.environ.items() if key != "TURN_SECRET"}
    run = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env,
                         timeout=60, check=False)  # fmt: skip
    assert run.returncode != 0 and "TURN_SECRET" in run.stderr


def test_the_web_processes_forward_to_the_writer_and_its_standby(stack: dict[str, Any]) -> None:
    services = stack["services"]
    processes = {name: settings_of(service) for name, service in services.items() if service.get("build")}
    writers = {name for name, settings in processes.items() if settings.writer_lease}
    webs = {name for name, settings in processes.items() if settings.writer_urls}
    assert len(writers) == 2 and len(webs) == 2 and writers | webs == set(processes)
    for name in webs:
        targets = {URL(url) for url in writer_urls(processes[name].writer_urls)}
        assert {(url.host, url.port) for url in targets} == {(writer, processes[writer].port) for writer in writers}
    # One database and one bus for every process; PostgreSQL (the lease is PostgreSQL's).
    assert len({settings.database_url for settings in processes.values()}) == 1
    assert next(iter(processes.values())).database_url.startswith("postgresql://")
    assert {settings.bus_url for settings in processes.values()} == {"redis://redis:6379/0"}
    # One evidence store, shared by the writers (either may be the one that holds the lease).
    stores = {tuple(services[name].get("volumes", [])) for name in writers}
    assert len(stores) == 1 and all(processes[name].media_dir == "/media" for name in writers)
    assert any(volume.startswith("media:/media") for volume in next(iter(stores)))


def test_the_proxy_spreads_over_the_web_processes_which_are_trusted_where_they_stand(stack: dict[str, Any]) -> None:
    services = stack["services"]
    command = services["proxy"]["command"]
    targets = {command[i + 1] for i, word in enumerate(command) if word == "--to"}
    webs = {name for name, service in services.items() if "PROCTOR_WRITER_URLS" in service.get("environment", {})}
    assert targets == {f"{name}:8080" for name in webs}
    (subnet,) = (ipaddress.ip_network(config["subnet"]) for config in stack["networks"]["backend"]["ipam"]["config"])
    for name, service in services.items():
        if service.get("build"):
            trusted = trusted_networks(settings_of(service).trusted_proxies)
            assert any(subnet.subnet_of(network) for network in trusted), name  # type: ignore[arg-type]
    assert all(list(service["networks"]) == ["backend"] for service in services.values())


def test_coturn_and_the_writers_share_the_turn_secret(stack: dict[str, Any]) -> None:
    services = stack["services"]
    assert f"--static-auth-secret={SECRET}" in services["turn"]["command"]
    for service in services.values():
        if service.get("build") and settings_of(service).writer_lease:
            settings = settings_of(service)
            assert settings.turn_secret == SECRET
            assert settings.ice_servers.split(",") == [
                "turn:desk.example.org:3478?transport=udp", "turn:desk.example.org:3478?transport=tcp"]  # fmt: skip
