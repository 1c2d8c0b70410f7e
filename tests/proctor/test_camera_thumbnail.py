"""``GET /api/v1/players/{player}/camera/thumbnail.jpg``: the last analysed frame of a live stream, small, for the
arbiters' dashboard; streamed by a real aiortc peer."""

from __future__ import annotations

import asyncio

import cv2
import numpy as np
import pytest

from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_camera import CAM, ScriptedCamera, connect, issue_token

pytestmark = pytest.mark.asyncio

THUMBNAIL = "/api/v1/players/{player}/camera/thumbnail.jpg"


async def test_the_thumbnail_is_the_streams_last_analysed_frame(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "thumb-b")
    url = THUMBNAIL.format(player="thumb-b")
    assert (await platform.client.get(url)).status == 401  # arbiters and the review panel only
    response = await platform.client.get(url, headers=CAM)
    assert response.status == 404 and "no live camera stream" in (await response.json())["message"]
    assert (await platform.client.get(THUMBNAIL.format(player="nobody"), headers=CAM)).status == 404

    pc = await connect(platform, token, ScriptedCamera([(60, 1)]))
    try:
        for _ in range(100):
            await asyncio.sleep(0.1)
            response = await platform.client.get(url, headers=CAM)
            if response.status == 200:
                break
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"] == "image/jpeg"
        assert response.headers["Cache-Control"] == "no-store"
        first = await response.read()
        assert first[:2] == b"\xff\xd8"
        image = cv2.imdecode(np.frombuffer(first, np.uint8), cv2.IMREAD_COLOR)
        assert image is not None and image.shape == (240, 320, 3)
        for _ in range(30):  # one per stream, overwritten by each analysed frame (2 a second)
            await asyncio.sleep(0.1)
            later = await (await platform.client.get(url, headers=CAM)).read()
            if later != first:
                break
        assert later != first and later[:2] == b"\xff\xd8"
    finally:
        await pc.close()
    for _ in range(100):  # the stream has ended: no thumbnail
        await asyncio.sleep(0.1)
        if (await platform.client.get(url, headers=CAM)).status == 404:
            break
    assert (await platform.client.get(url, headers=CAM)).status == 404
