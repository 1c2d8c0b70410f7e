"""A response that is a file: a game record, a standings table, a PDF report."""

from __future__ import annotations

from aiohttp import web


def attachment(text: str | bytes, content_type: str, filename: str, disposition: str = "attachment") -> web.Response:
    headers = {"Content-Disposition": f'{disposition}; filename="{filename}"', "Cache-Control": "no-store"}
    if isinstance(text, bytes):
        return web.Response(body=text, content_type=content_type, headers=headers)
    return web.Response(text=text, content_type=content_type, charset="utf-8", headers=headers)
