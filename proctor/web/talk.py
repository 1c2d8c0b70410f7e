"""Talking to a player (proctor.talk): the desk's offer answered with the player's page listening (in the
distributed mode: where the desk publishes its microphone on Janus, and its feed told back), and the talk ended."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from proctor import errors
from proctor.talk import Talks
from proctor.web.inputs import context_of, json_body
from proctor.web.live_views import desk_offer
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter


def _talks(request: web.Request) -> Talks:
    talks = context_of(request).camera.talks
    if talks is None:
        raise errors.ConflictError("the camera service is not running")
    return talks  # type: ignore[no-any-return]


async def post_talk(request: web.Request) -> web.Response:
    """An arbiter's offer ``{sdp, type}`` (a sound to send) answered; the player's page plays it.  In the distributed
    mode the body is ``{}``: the answer says where to publish the sound (``janus``: Janus's address, the arbiter's
    token, the player's room and PIN)."""
    who = arbiter(request)
    body = await json_body(request)
    talks = _talks(request)
    if talks.rooms is not None and "sdp" not in body:
        talk, grant = await talks.open_in_room(who, request.match_info["player"])
        return web.json_response({**talk.describe(), "janus": grant}, status=201)
    sdp, kind = desk_offer(body, "audio")
    try:
        talk, answer = await talks.open(who, request.match_info["player"], sdp, kind)
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    result: dict[str, Any] = {**talk.describe(), "sdp": answer.sdp, "type": answer.type}
    return web.json_response(result, status=201)


async def post_talk_published(request: web.Request) -> web.Response:
    """The distributed mode: the desk publishes its microphone in the player's room as ``{feed}``; checked with
    Janus, then the player's page subscribes to it."""
    who = arbiter(request)
    feed = (await json_body(request)).get("feed")
    if isinstance(feed, bool) or not isinstance(feed, int) or feed <= 0:
        raise errors.BadRequestError("'feed' must be the feed's id on the media server (a positive integer)")
    talks = _talks(request)
    talk = talks.talks.get(request.match_info["talk"])
    if talk is None or talk.player_ref != request.match_info["player"] or talks.rooms is None:
        raise errors.NotFoundError(f"no talk {request.match_info['talk']!r} with this player through the media server")
    talk = await talks.published(talk.id, who, feed)
    return web.json_response({**talk.describe(), "feed": feed})


async def delete_talk(request: web.Request) -> web.Response:
    """The arbiter ends their talk: audited with how long it lasted."""
    who = arbiter(request)
    talks = _talks(request)
    talk = talks.talks.get(request.match_info["talk"])
    if talk is None or talk.player_ref != request.match_info["player"]:
        raise errors.NotFoundError(f"no talk {request.match_info['talk']!r} with this player")
    return web.json_response(await talks.end(talk.id, who, "closed by the arbiter"))


PLAYER: Final = (("player", "path", "the player's id on the platform"),)

ROUTES: Final = (
    Route(
        "POST", "/api/v1/players/{player}/talk", post_talk,
        "Speak to a player {sdp, type: offer}: the desk's offer (its microphone, an audio track to send) answered; "
        "the sound goes on to the player's front-camera connection and their page plays it and says an arbiter is "
        "speaking (session and X-CSRF-Token, or bearer token; audited camera.talk; no sound is kept).  In the "
        "distributed mode the body is {} and the desk publishes its microphone on the media server (janus)",
        {"201": "the talk's id, player, start and arbiter, and the answer {sdp, type} (distributed mode: janus "
                "{url, token, room, pin})",
         "400": "malformed body, or an offer that cannot be used (no audio)", "401": "no or unknown arbiter token",
         "403": "a reviewer (reads only), or outside the arbiter's assigned sections or boards (16)",
         "409": "the player has no live camera whose page can play sound, or another arbiter is speaking to them"},
        PLAYER,
    ),
    Route(
        "POST", "/api/v1/players/{player}/talk/{talk}/published", post_talk_published,
        "The distributed mode: the desk publishes its microphone in the player's room as {feed} (checked with the "
        "media server); the player's page subscribes to it and plays it",
        {"200": "the talk and its feed", "400": "'feed' is not a positive integer",
         "401": "no or unknown arbiter token", "403": "missing or wrong CSRF token",
         "404": "no such talk of this arbiter's through the media server",
         "409": "the feed does not publish the arbiter's microphone in the player's room"},
        (*PLAYER, ("talk", "path", "the talk's id, as its opening gave it")),
    ),
    Route(
        "DELETE", "/api/v1/players/{player}/talk/{talk}", delete_talk,
        "End one's talk with a player (its connection closing ends it too; audited camera.talk-end with its length)",
        {"200": "the talk and how many seconds it lasted", "401": "no or unknown arbiter token",
         "403": "missing or wrong CSRF token", "404": "no such talk of this arbiter's"},
        (*PLAYER, ("talk", "path", "the talk's id, as its opening gave it")),
    ),
)  # fmt: skip
