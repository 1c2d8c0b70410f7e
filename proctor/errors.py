"""The service layer's error hierarchy.  Domain code raises these; the web layer alone maps them to HTTP statuses."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error the service raises on purpose; ``code`` is a stable machine-readable name."""

    code = "error"

    def __init__(self, message: str, **detail: object) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class ConfigurationError(ServiceError):
    code = "configuration"


class BadRequestError(ServiceError):
    """Malformed input: not JSON, a missing or mistyped field, an unknown event type."""

    code = "bad-request"


class UnauthorizedError(ServiceError):
    """A missing, unknown or wrong signature or token."""

    code = "unauthorized"


class ForbiddenError(ServiceError):
    code = "forbidden"


class NotFoundError(ServiceError):
    code = "not-found"


class ExpiredError(ServiceError):
    """A credential that worked once and no longer does (a player's stream link past its expiry): ask for a new one."""

    code = "expired"


class ConflictError(ServiceError):
    """The request contradicts what is stored (e.g. a sequence number reused with another body)."""

    code = "conflict"


class StaleError(ServiceError):
    """A webhook timestamp outside the tolerance."""

    code = "stale"


class OverloadedError(ServiceError):
    """Too many events held for one game: the platform should retry later."""

    code = "overloaded"


class TooManyLoginsError(OverloadedError):
    """Failed logins for one name from one address: the next try must wait (``retry_after_s``)."""

    code = "too-many-logins"


class TooManyRequestsError(OverloadedError):
    """One client asks too often (a player's page): the next request must wait (``retry_after_s``)."""

    code = "too-many-requests"


class BusyError(OverloadedError):
    """More password checks at once than the pool takes: try again in a moment (``retry_after_s``)."""

    code = "busy"


class DatabaseBusyError(ServiceError):
    """The database is locked by another writer for longer than a request may wait: nothing was stored, retry."""

    code = "busy"


class WriterUnavailableError(ServiceError):
    """A web process found no service process to forward to (the standby taking over): nothing was sent, retry
    (``retry_after_s``)."""

    code = "writer-unavailable"


class WriterLostError(ServiceError):
    """The service process went away after a web process forwarded a request to it and before it answered: it may
    or may not have been stored; retry it (a platform's delivery is stored once by its id)."""

    code = "writer-lost"


class MediaServerUnavailableError(ServiceError):
    """Janus (the distributed mode's media server) refused or did not answer: nothing was set up, retry
    (``retry_after_s``)."""

    code = "media-server-unavailable"


class StorageError(ServiceError):
    """The database could not store a change (the disk full, an I/O error): nothing was stored."""

    code = "storage"
