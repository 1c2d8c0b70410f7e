"""The Debian programs some tests start (redis-server, coturn, janus, docker-compose): a test that needs one that is
missing fails under CI, which installs them all (.ci/run), and is skipped elsewhere, never passed by skipping."""

from __future__ import annotations

import os
import shutil

import pytest


def require_program(program: str, package: str) -> None:
    """Skip (or under CI fail) unless ``program`` (from Debian's ``package``) is on the PATH."""
    if shutil.which(program) is None:
        reason = f"Debian's {package} is missing (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
