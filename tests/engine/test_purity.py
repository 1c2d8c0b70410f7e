"""engine/ stays pure: no I/O frameworks, no wall clock (house style)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).parents[2] / "engine"
FORBIDDEN_MODULES = {"asyncio", "aiohttp", "aiortc", "sqlmodel", "sqlalchemy", "cv2", "time", "datetime", "os",
                     "socket", "subprocess", "threading", "random"}  # fmt: skip


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_engine_imports_no_io_and_no_clock() -> None:
    files = sorted(ENGINE.glob("**/*.py"))
    assert files
    offenders = {path.name: imported_modules(path) & FORBIDDEN_MODULES for path in files}
    assert {name: mods for name, mods in offenders.items() if mods} == {}
