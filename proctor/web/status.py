"""Domain errors as HTTP responses: the one place the web layer chooses an error's status code (``STATUS`` for
the service's errors, proctor.errors; the engine's refusals by kind).  Handlers and domain code only raise."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from aiohttp import web

from engine.adjudication import AuthorityRefusedError
from engine.errors import EngineError, IllegalActionError
from proctor import errors
from proctor.server_words import refusal_words

log = logging.getLogger("proctor.web")

STATUS: Final[dict[type[errors.ServiceError], int]] = {
    errors.BadRequestError: 400,
    errors.StaleError: 400,
    errors.UnauthorizedError: 401,
    errors.ForbiddenError: 403,
    errors.NotFoundError: 404,
    errors.ConflictError: 409,
    errors.ExpiredError: 410,
    errors.OverloadedError: 429,
    errors.ConfigurationError: 500,
    errors.DatabaseBusyError: 503,
    errors.StorageError: 503,
    errors.WriterUnavailableError: 503,
    errors.MediaServerUnavailableError: 503,
    errors.WriterLostError: 502,
}


def error_body(code: str, message: str, **detail: Any) -> dict[str, Any]:
    """An error's answer: its code, its message (English, as before) and the message in both languages
    (``message_words``, proctor.server_words)."""
    return {"error": code, "message": message, "message_words": refusal_words(code, message), **detail}


@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except errors.ServiceError as error:
        status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)
        response = web.json_response(error_body(error.code, error.message, **error.detail), status=status)
        if "retry_after_s" in error.detail:
            response.headers["Retry-After"] = str(error.detail["retry_after_s"])
        return response
    except AuthorityRefusedError as error:
        return web.json_response(error_body("authority", error.why, article=error.article), status=403)
    except IllegalActionError as error:
        return web.json_response(error_body("refused", error.why, article=error.article), status=409)
    except EngineError as error:
        return web.json_response(error_body("refused", str(error)), status=409)
    except web.HTTPException as error:
        if error.status >= 400:
            return web.json_response(error_body("http", error.reason), status=error.status)
        raise
    except asyncio.CancelledError:
        raise  # the client went away (aiohttp ignores it quietly)
    except ConnectionResetError:
        # The client went away mid-answer (a closed page, a dropped connection): an ordinary event, not logged.  A
        # response returned here is never sent (aiohttp drops it quietly); re-raised, aiohttp would log a traceback
        # with the client's address.
        return web.Response(status=499, reason="Client Closed Request")
    except Exception:  # every other failure is a 500, in JSON like every error (the traceback goes to the log, with
        # the method and path but never the client's address)
        log.exception("%s %s failed", request.method, request.path)
        return web.json_response(error_body("internal", "the server failed on this request"), status=500)
