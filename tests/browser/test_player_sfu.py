"""The player's page publishing to Janus in a real browser (issue 16's distributed mode): Chromium's page sends its
camera as two simulcast layers to the player's own room, the analysis worker takes the low one (320x240) and the
player walking out is raised (36.4.1) through the service, with the service itself holding no stream.  Each run is
tests/browser/sfu_scenario.py in a private network namespace of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.browser.chromium import require
from tests.browser.scenario import THRESHOLDS
from tests.programs import require_program

ROOT = Path(__file__).parent.parent.parent


def test_the_page_publishes_simulcast_to_janus_and_a_worker_raises_the_player_leaving(tmp_path: Path) -> None:
    require(unshare=True)
    require_program("janus", "janus")
    require_program("redis-server", "redis-server")
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-m", "tests.browser.sfu_scenario", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "connected" and result["connected_after_s"] < 10, result
    assert result["worker_held"] == ["web-b|front"] and result["service_streams"] == [], result
    assert result["frame_size"] == [320, 240], result  # the low layer: the page's simulcast reached the worker
    incident = result["incident"]
    assert incident is not None, (result, done.stderr[-3000:])
    assert (incident["kind"], incident["article"], incident["source"]) == ("left-area", "36.4.1", "detector:camera")
    assert incident["evidence"]["detail"] == "nobody in front of the camera" and incident["evidence"]["media"]
    assert THRESHOLDS.absence_s <= result["detected_after_change_s"] <= THRESHOLDS.absence_s + 6.0, result
    assert [kind for kind, _ in result["all_incidents"]] == ["left-area"], result
