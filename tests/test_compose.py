"""docker/compose.yaml, the distributed mode's stack (issue 16), as ``docker-compose config`` resolves it (Debian's
docker-compose, installed by .ci/run; no Docker engine runs here, so the behaviour itself is shown by
tests/proctor/test_web_processes.py and tests/proctor/test_workers.py on processes).  Its parts must agree with each
other and with the service's settings: every ``PROCTOR_*`` is a setting the service reads and takes, the web processes
forward to the services that hold the writer's lease, every process of the service shares one database and one bus,
the proxy and the web processes are trusted where they stand, coturn's secret is the one the writers mint credentials
with, and the workers, the writers and Janus share one Janus, one workers' secret and one admin secret, with the
pages reaching Janus through the proxy."""

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
SECRETS = {"TURN_SECRET": SECRET, "WORKER_SECRET": "w" * 64, "JANUS_ADMIN_SECRET": "j" * 64, "PUBLIC_IP": "203.0.113.7"}
JANUS_CONFIG = Path(__file__).resolve().parent.parent / "docker" / "janus"
CADDYFILE = Path(__file__).resolve().parent.parent / "docker" / "Caddyfile"


@pytest.fixture(scope="module")
def stack() -> dict[str, Any]:
    require_program("docker-compose", "docker-compose")
    env = {**os.environ, **SECRETS, "PUBLIC_HOST": "desk.example.org"}
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


@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_without_a_secret_the_stack_is_refused(missing: str) -> None:
    require_program("docker-compose", "docker-compose")
    env = {**{key: value for key, value in os.environ.items() if key not in SECRETS}, **SECRETS}
    del env[missing]
    run = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env,
                         timeout=60, check=False)  # fmt: skip
    assert run.returncode != 0 and missing in run.stderr


def proctor_processes(stack: dict[str, Any]) -> dict[str, Settings]:
    """The service's image's processes (writers, web processes, workers) and their settings."""
    return {name: settings_of(service) for name, service in stack["services"].items()
            if service.get("image") == "gomoku-proctor"}  # fmt: skip


def workers_of(stack: dict[str, Any]) -> set[str]:
    return {name for name, service in stack["services"].items() if service.get("command") == ["worker"]}


def test_the_web_processes_forward_to_the_writer_and_its_standby(stack: dict[str, Any]) -> None:
    services = stack["services"]
    processes = proctor_processes(stack)
    workers = workers_of(stack)
    writers = {name for name, settings in processes.items() if settings.writer_lease}
    webs = {name for name, settings in processes.items() if settings.writer_urls and name not in workers}
    assert len(writers) == 2 and len(webs) == 2 and len(workers) == 1
    assert writers | webs | workers == set(processes)
    processes = {name: settings for name, settings in processes.items() if name not in workers}
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


def caddy_routes() -> dict[str, set[str]]:
    """docker/Caddyfile's routes: each ``handle`` path (``*``: the rest) and the addresses it proxies to."""
    routes: dict[str, set[str]] = {}
    path = None
    for line in CADDYFILE.read_text().splitlines():
        words = line.split()
        if words[:1] == ["handle"]:
            path = words[1] if len(words) > 2 else "*"
        elif words[:1] == ["reverse_proxy"] and path is not None:
            routes[path] = set(words[1:])
    return routes


def test_the_proxy_spreads_over_the_web_processes_which_are_trusted_where_they_stand(stack: dict[str, Any]) -> None:
    services = stack["services"]
    proxy = services["proxy"]
    assert any(volume.endswith(":/etc/caddy/Caddyfile:ro") for volume in proxy["volumes"])
    assert "/etc/caddy/Caddyfile" in proxy["command"]
    webs = {name for name, service in services.items()
            if "PROCTOR_WRITER_URLS" in service.get("environment", {}) and name not in workers_of(stack)}  # fmt: skip
    assert caddy_routes()["*"] == {f"{name}:8080" for name in webs}
    (subnet,) = (ipaddress.ip_network(config["subnet"]) for config in stack["networks"]["backend"]["ipam"]["config"])
    for name, service in services.items():
        if service.get("image") == "gomoku-proctor" and name not in workers_of(stack):
            trusted = trusted_networks(settings_of(service).trusted_proxies)
            assert any(subnet.subnet_of(network) for network in trusted), name  # type: ignore[arg-type]
    assert all(list(service["networks"]) == ["backend"] for service in services.values())


def test_coturn_and_the_writers_share_the_turn_secret(stack: dict[str, Any]) -> None:
    services = stack["services"]
    assert f"--static-auth-secret={SECRET}" in services["turn"]["command"]
    for service in services.values():
        if service.get("image") == "gomoku-proctor" and settings_of(service).writer_lease:
            settings = settings_of(service)
            assert settings.turn_secret == SECRET
            assert settings.ice_servers.split(",") == [
                "turn:desk.example.org:3478?transport=udp", "turn:desk.example.org:3478?transport=tcp"]  # fmt: skip


def test_the_workers_the_writers_and_janus_share_one_media_server_and_its_secrets(stack: dict[str, Any]) -> None:
    services = stack["services"]
    processes = proctor_processes(stack)
    writers = {name for name, settings in processes.items() if settings.writer_lease}
    (worker,) = workers_of(stack)
    janus = services["janus"]
    # One Janus, one workers' secret: the writers give rooms on it, the workers take the streams from it.
    assert {processes[name].janus_url for name in [*writers, worker]} == {"http://janus:8088/janus"}
    assert {processes[name].worker_secret for name in [*writers, worker]} == {SECRETS["WORKER_SECRET"]}
    # The workers report to the writers (whichever holds the lease), on the one bus.
    targets = {(URL(url).host, URL(url).port) for url in writer_urls(processes[worker].writer_urls)}
    assert targets == {(name, processes[name].port) for name in writers}
    assert processes[worker].bus_url == "redis://redis:6379/0"
    # The writers add tokens with Janus's admin secret, which its entrypoint writes into its configuration.
    assert all(processes[name].janus_admin_secret == SECRETS["JANUS_ADMIN_SECRET"] for name in writers)
    assert janus["environment"]["JANUS_ADMIN_SECRET"] == SECRETS["JANUS_ADMIN_SECRET"]
    general = (JANUS_CONFIG / "janus.jcfg").read_text()
    assert 'admin_secret = "@JANUS_ADMIN_SECRET@"' in general and "token_auth = true" in general
    assert "@JANUS_ADMIN_SECRET@" in (JANUS_CONFIG / "Dockerfile").read_text()
    assert all(URL(processes[name].janus_admin_url).port == 7088 for name in writers)
    assert "admin_port = 7088" in (JANUS_CONFIG / "janus.transport.http.jcfg").read_text()
    # The pages reach Janus through the proxy, at /janus on the desk's own address; its media over UDP.
    assert caddy_routes()["/janus*"] == {"janus:8088"}
    assert {processes[name].janus_public_url for name in writers} == {"https://desk.example.org/janus"}
    assert 'rtp_port_range = "20000-20400"' in general
    published = {(port["published"], port["protocol"]) for port in janus["ports"]}
    assert (20000, "udp") in published and (20400, "udp") in published
    # The admin API is never published.
    assert all(port["target"] != 7088 for port in janus["ports"])
