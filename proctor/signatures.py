"""Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over ``id.timestamp.body``.

Secrets are ``whsec_`` + base64 of the key bytes; the ``webhook-signature`` header holds one or more space-separated
``v1,<base64>`` signatures (several while a secret is being rotated).  A platform using the PyPI ``standardwebhooks``
library works unchanged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping

from proctor.errors import BadRequestError, StaleError, UnauthorizedError

PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh secret: 32 random bytes."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def secret_key(secret: str) -> bytes:
    raw = secret[len(PREFIX) :] if secret.startswith(PREFIX) else secret
    try:
        key = base64.b64decode(raw + "==", validate=False)
    except (binascii.Error, ValueError):
        raise BadRequestError("a webhook secret must be 'whsec_' followed by base64") from None
    if not key:
        raise BadRequestError("a webhook secret may not be empty")
    return key


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for ``body``."""
    digest = hmac.new(secret_key(secret), f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(secret: str, webhook_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, webhook_id, timestamp, body),
        "content-type": "application/json",
    }


def verify(headers: Mapping[str, str], body: bytes, secrets_: Iterable[str], now_s: float, tolerance_s: int) -> str:
    """Check the Standard Webhooks headers of a delivery; returns its ``webhook-id`` (:func:`verify_secret`)."""
    return verify_secret(headers, body, secrets_, now_s, tolerance_s)[0]


def verify_secret(
    headers: Mapping[str, str], body: bytes, secrets_: Iterable[str], now_s: float, tolerance_s: int
) -> tuple[str, str]:
    """Check the Standard Webhooks headers of a delivery; returns its ``webhook-id`` and the secret that signed it.

    Raises :class:`UnauthorizedError` for missing or wrong signatures and :class:`StaleError` for timestamps outside the
    tolerance, each with a message that says which.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    missing = [name for name in ("webhook-id", "webhook-timestamp", "webhook-signature") if not lowered.get(name)]
    if missing:
        raise UnauthorizedError(f"missing header(s): {', '.join(missing)} (Standard Webhooks)")
    webhook_id = lowered["webhook-id"]
    try:
        timestamp = int(lowered["webhook-timestamp"])
    except ValueError:
        raise UnauthorizedError("webhook-timestamp must be whole seconds since the Unix epoch") from None
    if timestamp < now_s - tolerance_s:
        raise StaleError(f"webhook-timestamp {timestamp} is more than {tolerance_s} s old")
    if timestamp > now_s + tolerance_s:
        raise StaleError(f"webhook-timestamp {timestamp} is more than {tolerance_s} s in the future")
    offered = []
    for item in lowered["webhook-signature"].split():
        version, _, value = item.partition(",")
        if version == "v1" and value:
            try:
                offered.append(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                continue
    if not offered:
        raise UnauthorizedError("webhook-signature has no v1 signature")
    message = f"{webhook_id}.{timestamp}.".encode() + body
    for secret in secrets_:
        expected = hmac.new(secret_key(secret), message, hashlib.sha256).digest()
        if any(hmac.compare_digest(expected, candidate) for candidate in offered):
            return webhook_id, secret
    raise UnauthorizedError("no signature matches this platform's secrets")
