from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.video.janus_server import janus_server  # noqa: F401 - a fixture for the tests of the SFU (issue 16)

DATA = Path(__file__).parent / "data"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
