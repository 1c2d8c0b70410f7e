"""The pages' shared modules (issue 13, "complete, consistent, printable"): served under ``/assets/{name}.js`` by a
strict allow-list of names, as JavaScript with a content hash, and loaded by each page's one nonce'd module script
under the pages' unchanged Content-Security-Policy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.settings import Settings
from proctor.web.page_modules import MODULE_FOLDER, PAGE_MODULES
from tests.proctor.conftest import Platformer
from tests.proctor.test_arbiters import add_arbiter, started_game
from tests.security.test_player_page import stream_token

DASHBOARD = Path(__file__).parent.parent.parent / "dashboard"
IMPORT = re.compile(r'^import \{[^}]+\} from "/assets/([a-z0-9_]+)\.js";$', re.M)


async def test_every_listed_module_is_served_as_javascript_with_its_content_hash(platform: Platformer) -> None:
    assert {path.stem for path in MODULE_FOLDER.glob("*.js")} == PAGE_MODULES  # the folder is the list, no more
    for name in sorted(PAGE_MODULES):
        response = await platform.client.get(f"/assets/{name}.js")
        assert response.status == 200, name
        assert response.content_type == "text/javascript" and response.charset == "utf-8"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Cache-Control"] == "no-cache"
        body = await response.read()
        assert body == (MODULE_FOLDER / f"{name}.js").read_bytes()
        etag = response.headers["ETag"]
        again = await platform.client.get(f"/assets/{name}.js", headers={"If-None-Match": etag})
        assert (again.status, await again.read(), again.headers["ETag"]) == (304, b"", etag)
        changed = await platform.client.get(f"/assets/{name}.js", headers={"If-None-Match": '"0"'})
        assert changed.status == 200 and await changed.read() == body


@pytest.mark.parametrize(
    "path",
    [
        "/assets/secrets.js",  # not on the list
        "/assets/Board.js",
        "/assets/board.mjs",
        "/assets/board",
        "/assets/board.js.map",
        "/assets/..%2F..%2Fproctor%2Fsettings.py%00.js",
        "/assets/%2e%2e%2fplayer.js",
        "/assets/../dashboard/arbiter.html",
        "/assets/js/board.js",
        "/assets/%2Fetc%2Fpasswd.js",
        "/assets/.js",
    ],
)
async def test_any_other_name_or_a_path_is_not_found(platform: Platformer, path: str) -> None:
    response = await platform.client.get(path)
    assert response.status == 404, path
    assert "function" not in await response.text()


async def test_only_get_reads_a_module(platform: Platformer) -> None:
    assert (await platform.client.post("/assets/board.js")).status == 405


def module_scripts(page: str) -> list[str]:
    return re.findall(r"<script\b([^>]*)>", page)


async def test_each_page_loads_its_modules_by_its_nonce_under_the_same_policy(
    platform: Platformer, settings: Settings
) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    stream = (await (await stream_token(platform, token, "g1-b")).json())["token"]
    for path in ("/arbiter", "/review", f"/play/{stream}"):
        response = await platform.client.get(path)
        assert response.status == 200, path
        policy = response.headers["Content-Security-Policy"]
        nonce = policy.split("'nonce-", 1)[1].split("'", 1)[0]
        # The policy is as strict as before: the nonce is what loads the page's script and the modules it imports
        # (no 'self', no 'unsafe-inline' or 'strict-dynamic' for scripts); this server only, no framing.
        assert f"script-src 'nonce-{nonce}';" in policy
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy and "base-uri 'none'" in policy
        assert "connect-src 'self'" in policy and "'unsafe-eval'" not in policy
        page = await response.text()
        scripts = [attributes for attributes in module_scripts(page) if "application/json" not in attributes]
        assert scripts == [f' type="module" nonce="{nonce}"'], path  # one script, a module, with the nonce
        imported = set(IMPORT.findall(page))
        assert imported and imported <= PAGE_MODULES, path
        for name in imported:  # each import is served
            assert (await platform.client.get(f"/assets/{name}.js")).status == 200


def test_the_modules_import_only_listed_modules_by_their_one_url() -> None:
    for path in [*MODULE_FOLDER.glob("*.js"), *DASHBOARD.glob("*.html")]:
        text = path.read_text(encoding="utf-8")
        for specifier in re.findall(r'^import [^;]* from "([^"]+)";', text, re.M):
            assert re.fullmatch(r"/assets/[a-z0-9_]+\.js", specifier), (path.name, specifier)
            assert specifier.removeprefix("/assets/").removesuffix(".js") in PAGE_MODULES, (path.name, specifier)
        assert "import(" not in text, path.name  # no dynamic import


def test_the_arbiters_pages_say_an_incidents_summary_with_one_shared_function() -> None:
    """summaryText was copied into the desk and the review page; it lives in one module both import."""
    module = (MODULE_FOLDER / "incident_words.js").read_text(encoding="utf-8")
    assert "export function summaryText(" in module
    for page in ("arbiter.html", "review.html"):
        text = (DASHBOARD / page).read_text(encoding="utf-8")
        assert "function summaryText(" not in text, page
        assert 'import { INCIDENT_WORDS, summaryText } from "/assets/incident_words.js";' in text, page
        assert '"summary.clock-mismatch"' not in text, page  # its words are the module's


def test_each_pages_style_elements_are_closed() -> None:
    """An unclosed <style> swallows the next one's tag into its CSS, and the rule after it is dropped (the desk's
    #live was)."""
    for path in DASHBOARD.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert re.findall(r"<style>(.*?)</style>", text, re.S), path.name
        for css in re.findall(r"<style>(.*?)</style>", text, re.S):
            assert "<style" not in css, path.name
