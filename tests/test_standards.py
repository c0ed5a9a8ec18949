"""Every page Albumen writes is valid HTML: the W3C Nu HTML Checker (vnu-jar from npm, pinned in
tests/npm/package.json, run with the machine's Java) over every page of the demo and of a hostile
gallery (long names, HTML sidecars, slugs repeated across albums, a photo called main.jpg), and no
page has an id twice (the stream's tiles once repeated their slugs). scripts/test.sh installs Java
(Debian's default-jre-headless) and the npm tools; without them the checker's test skips, saying why."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, crawl, hostile_gallery, make_jpeg, run_cli, soup

VNU = REPO / "tests" / "npm" / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("standards")
    assert run_cli("demo", str(base / "demo")).exit_code == 0
    hostile_gallery(base / "hostile")
    # a private album's pages and a password album's unlock page are checked too
    make_jpeg(base / "hostile" / "Family" / "kids.jpg", size=(900, 600), date="2024:02:01 10:00:00")
    (base / "hostile" / "Family" / "index.md").write_text("Title: Family\nprivate: true\n\nOnly ours.\n")
    make_jpeg(base / "hostile" / "Vault" / "deed.jpg", size=(900, 600), date="2024:02:02 10:00:00")
    (base / "hostile" / "Vault" / "index.md").write_text("Title: Vault\npassword: correct horse battery staple\n")
    (base / "albumen.toml").write_text('url = "https://photos.example.org/"\n[images]\nformats = ["jpeg", "webp"]\n')
    out = {}
    for name in ("demo", "hostile"):
        site = base / f"{name}-site"
        result = run_cli("build", str(base / name), "-o", str(site), "-j", "2", "-c", str(base / "albumen.toml"))
        assert result.exit_code == 0, result.output
        out[name] = site
    return out


def test_no_page_has_an_id_twice_and_every_anchor_leads_somewhere(sites):
    for site in sites.values():
        pages = sorted(site.rglob("*.html"))
        assert len(pages) > 10
        for page in pages:
            ids = Counter(tag["id"] for tag in soup(page).select("[id]"))
            assert [i for i, n in ids.items() if n > 1] == [], page
        walk = crawl(site)
        assert walk.broken == []  # "Back to the album" (ALBUM/#m-SLUG) lands on its tile
    stream = soup(sites["hostile"] / "stream" / "index.html")
    ids = [li["id"] for li in stream.select(".grid li")]
    assert len(ids) == 8 and len(set(ids)) == 8  # IMG_0001 of two albums: two tiles, two ids
    album = next(sites["hostile"].glob("unicode-*"))
    main_tile = soup(album / "index.html").select_one("#m-main")
    assert main_tile is not None and main_tile.name == "li"  # main.jpg's tile, not <main id="main">


def test_every_page_validates_with_the_nu_html_checker(sites):
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java to run the Nu HTML Checker (scripts/test.sh installs Debian's default-jre-headless)")
    if not VNU.is_file():
        pytest.skip(f"vnu-jar is not installed at {VNU} (scripts/test.sh runs npm ci in tests/npm)")
    done = subprocess.run([java, "-jar", str(VNU), "--errors-only", "--format", "json", "--skip-non-html",
                           *(str(s) for s in sites.values())], capture_output=True, text=True, timeout=600)
    report = json.loads(done.stderr or done.stdout)
    errors = [f"{m.get('url', '').rsplit('-site/', 1)[-1]}:{m.get('lastLine')}: {m.get('message')}"
              for m in report["messages"] if m.get("type") == "error" or m.get("subType") == "fatal"]
    assert errors == []
    checked = sum(1 for s in sites.values() for _ in s.rglob("*.html"))
    assert checked > 40
    private = [p.relative_to(sites["hostile"]).as_posix() for p in (sites["hostile"] / "p").rglob("index.html")]
    assert len(private) >= 3, private  # the private album's page, its photo's, the password album's unlock page


def test_the_open_viewer_is_valid_html_too(sites):
    """What albumen.js builds (the photo, its caption with a <time>, the strip of thumbnails), as the
    browser holds it with the viewer open, passes the checker as the pages do."""
    java = shutil.which("java")
    if java is None or not VNU.is_file():
        pytest.skip("the Nu HTML Checker needs Java and tests/npm (scripts/test.sh installs both)")
    from test_browser import ARGS, CHROMIUM, serve

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it)")
    from playwright.sync_api import sync_playwright

    markup = []
    servers = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for site in sites.values():
            server, url = serve(site)
            servers.append(server)
            page = browser.new_page()
            album = next(a["href"] for a in soup(site / "index.html").select(".card a"))
            page.goto(url + album)
            page.wait_for_selector("html[data-albumen=ready]", state="attached")
            page.click(".grid li:nth-child(1) a")
            page.wait_for_selector(".lb .lb-img")
            assert page.locator(".lb-strip a").count() > 1 and page.locator(".lb-date time").count() == 1
            markup.append("<!DOCTYPE html>\n" + page.evaluate("() => document.documentElement.outerHTML"))
        browser.close()
    for server in servers:
        server.shutdown()
    for html in markup:
        done = subprocess.run([java, "-jar", str(VNU), "--errors-only", "--format", "json", "-"], input=html,
                              capture_output=True, text=True, timeout=300)
        report = json.loads(done.stderr or done.stdout)
        assert [f"{m.get('lastLine')}: {m.get('message')}" for m in report["messages"]] == []
