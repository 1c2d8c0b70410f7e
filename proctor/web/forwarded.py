"""The client behind a proxy: ``X-Forwarded-For``, ``-Proto`` and ``-Host`` believed from the proxies the settings
trust (``TRUSTED_PROXIES``: the reverse proxy with TLS in front, the web processes in front of the service), and from
nobody else.

Behind them, the address a request comes from is the proxy's; the handlers need the client's (the login limit counts
failures per name and address), whether it came over TLS (the session cookie's ``Secure``) and the host it asked for
(the links a page is given).  :func:`forwarded_middleware` gives the handlers a request whose ``remote``, ``scheme``
and ``host`` are the client's, read from the right: each trusted proxy appends the address it was reached from, so the
first address from the right that is not a trusted proxy is the client (anything further left, the client could have
written itself)."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any, Final

from aiohttp import web

from proctor.errors import ConfigurationError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES: Final = frozenset({"http", "https"})
PEER: Final = web.RequestKey("peer", str)
"""Set on every request by :func:`forwarded_middleware`: the address of the connection itself (a proxy's, when one
is in front)..."""
FROM_PROXY: Final = web.RequestKey("from_proxy", bool)
"""...and whether that is a trusted proxy (so that a web process passes the ``X-Forwarded-For`` chain on)."""


def trusted_networks(setting: str) -> tuple[Network, ...]:
    """``TRUSTED_PROXIES`` read: addresses and networks, comma-separated; a wrong one is a configuration error."""
    networks = []
    for item in (part.strip() for part in setting.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ConfigurationError(f"PROCTOR_TRUSTED_PROXIES: {item!r} is not an address or a network") from None
    return tuple(networks)


def is_trusted(address: str | None, networks: tuple[Network, ...]) -> bool:
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_of(remote: str | None, forwarded_for: str, networks: tuple[Network, ...]) -> str | None:
    """The client's address: ``remote`` itself unless it is a trusted proxy; then, from the right of
    ``X-Forwarded-For``, the first address that is not one (the leftmost if all are)."""
    if not is_trusted(remote, networks):
        return remote
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not is_trusted(hop, networks):
            return hop
    return hops[0] if hops else remote


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def forwarded_middleware(networks: tuple[Network, ...]) -> Any:
    """The middleware: a request from a trusted proxy gets the client's address, scheme and host; any other is left
    as it came (its ``X-Forwarded-*`` headers are not believed)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        peer = request.remote
        if not networks or not is_trusted(peer, networks):
            request[PEER], request[FROM_PROXY] = peer or "", False
            return await handler(request)
        changes: dict[str, Any] = {}
        client = client_of(request.remote, request.headers.get("X-Forwarded-For", ""), networks)
        if client is not None and client != request.remote:
            changes["remote"] = client
        scheme = request.headers.get("X-Forwarded-Proto", "").strip().lower()
        if scheme in SCHEMES:
            changes["scheme"] = scheme
        host = request.headers.get("X-Forwarded-Host", "").strip()
        if host and all(c.isalnum() or c in ".-:[]" for c in host):
            changes["host"] = host
        seen = request.clone(**changes) if changes else request
        seen[PEER], seen[FROM_PROXY] = peer or "", True
        return await handler(seen)

    return middleware
