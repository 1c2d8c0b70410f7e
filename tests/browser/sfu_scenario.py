"""The player's page in the distributed mode, in a real browser (issue 16), run by tests/browser/test_player_sfu.py
inside a private network namespace (``unshare -n``; Chromium gathers no ICE candidates on loopback): Debian's Janus
and redis-server, the service (``JANUS_URL``) and one analysis worker (``proctor.worker``, taking the low simulcast
layer), all here.  Chromium opens the player's page with a fake camera playing a clip in which the player walks out;
the page publishes to Janus in the player's room (640x480 and 320x240 simulcast), tells the service its feed, the
worker takes it and the left-area incident comes back through the service.  Prints one JSON line.

    unshare -n python -m tests.browser.sfu_scenario WORKDIR
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web

from proctor.app import create_app
from proctor.context import CONTEXT
from proctor.settings import Settings
from proctor.worker import Worker
from tests.browser.scenario import (
    ADDRESS,
    ARBITER_TOKEN,
    AUTH,
    PORT,
    SCRIPTS,
    THRESHOLDS,
    play,
    prepare_database,
    private_network,
    start_game,
    write_y4m,
)
from tests.proctor.redis_server import RedisServer
from tests.video.janus_server import start_janus
from video.devices import Device, StreamKey

ROOT = Path(__file__).parent.parent.parent
SECRET = "browser-sfu-secret"


async def run(workdir: Path) -> dict[str, Any]:
    clip = workdir / "camera.y4m"
    write_y4m(clip, SCRIPTS["left"], "left")
    database = f"sqlite:///{workdir / 'proctor.db'}"
    secret = prepare_database(database)
    bus = RedisServer(workdir)
    bus.start()
    (workdir / "janus").mkdir()
    janus = start_janus(workdir / "janus", ip=ADDRESS)
    base = f"http://{ADDRESS}:{PORT}"
    settings = Settings(database_url=database, host=ADDRESS, port=PORT, media_dir=str(workdir / "media"),
                        bus_url=bus.url, janus_url=janus.url, janus_admin_url=janus.admin_url,
                        janus_admin_secret=janus.admin_secret, worker_secret=SECRET)  # fmt: skip
    app = create_app(settings)
    runner = web.AppRunner(app)
    stop = asyncio.Event()
    try:
        await runner.setup()
        await web.TCPSite(runner, ADDRESS, PORT).start()
        service_ingest = app[CONTEXT].camera.ingest
        assert service_ingest is not None
        service_ingest.settings.thresholds = THRESHOLDS  # the sections' policies start from these
        worker = Worker(Settings(bus_url=bus.url, janus_url=janus.url, worker_secret=SECRET, writer_urls=base,
                                 models_dir=str(ROOT / "models"), worker_layer="low"), "browser-worker")  # fmt: skip
        working = asyncio.create_task(worker.run(stop))
        async with ClientSession() as http:
            await start_game(http, base, secret)
            async with http.post(f"{base}/api/v1/players/web-b/stream-token",
                                 headers={"Authorization": f"Bearer {ARBITER_TOKEN}"}) as response:  # fmt: skip
                link = (await response.json())["url"]
            result = await play(http, base, link, clip, "left")
            async with http.get(f"{base}/api/v1/incidents", headers=AUTH) as response:
                result["all_incidents"] = [(i["kind"], i["summary"]) for i in await response.json()]
        assert worker.ingest is not None
        session = worker.ingest.last("web-b", Device.FRONT)
        result["worker_held"] = sorted(worker.held)
        result["frame_size"] = getattr(session, "frame_size", None)
        result["frames_analysed"] = getattr(session, "frames_analysed", 0)
        result["service_streams"] = [str(k) for k in service_ingest.sessions if k == StreamKey("web-b")]
        stop.set()
        await asyncio.wait_for(working, 20)
    finally:
        stop.set()
        await runner.cleanup()
        janus.stop()
        bus.stop()
    return result


def main() -> None:
    workdir = Path(sys.argv[1])
    private_network()
    began = time.time()
    result = asyncio.run(run(workdir))
    result["took_s"] = time.time() - began
    print(json.dumps(result))


if __name__ == "__main__":
    main()
