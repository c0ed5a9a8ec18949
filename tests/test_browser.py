"""The viewer in a real browser: Debian's Chromium driven by Playwright, over a real HTTP server."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
from datetime import datetime
from pathlib import Path

import pytest

from conftest import crawl, make_jpeg, run_cli

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/test.sh installs it)"),
]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("ALBUMEN_TEST_ARTIFACTS", "/tmp/albumen-test-artifacts")) / "screenshots"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path):
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    assert run_cli("demo", str(base / "photos")).exit_code == 0
    site = base / "site"
    result = run_cli("build", str(base / "photos"), "-o", str(site), "-j", "2")
    assert result.exit_code == 0, result.output
    server, url = serve(site)
    yield site, url
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("response", lambda r: pg.errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    yield pg
    context.close()


def test_lightbox_opens_navigates_and_closes_with_urls(demo_site, page):
    _, url = demo_site
    page.goto(url + "mountains/")
    page.click(".grid li:nth-child(2) a")
    page.wait_for_selector(".lb .lb-img", state="visible")
    assert page.url == url + "mountains/img-0002/"
    img = page.locator(".lb .lb-img")
    page.wait_for_function("() => document.querySelector('.lb .lb-img').complete")
    box = img.bounding_box()
    assert box["width"] > 600, box  # a large image, not a thumbnail
    chosen = int(re.search(r"\.(\d+)w\.", page.evaluate("() => document.querySelector('.lb .lb-img').currentSrc")).group(1))
    assert chosen >= box["width"] and chosen >= 1024  # the file for the size shown, not the thumbnail
    page.keyboard.press("ArrowRight")
    page.wait_for_url(url + "mountains/img-0003/")
    assert page.locator(".lb-count").inner_text() == "Photo 3 of 6"
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(url + "mountains/img-0002/")
    page.keyboard.press("End")
    page.wait_for_url(url + "mountains/img-0006/")
    page.keyboard.press("Home")
    page.wait_for_url(url + "mountains/img-0001/")
    page.keyboard.press("Escape")
    page.wait_for_url(url + "mountains/")
    assert page.locator(".lb").is_hidden()
    page.goto(url + "mountains/img-0003/")
    page.reload()
    assert page.locator("img.photo-image").is_visible()
    assert page.evaluate("() => document.querySelector('img.photo-image').naturalWidth") > 0
    assert page.errors == []


def test_back_button_returns_to_the_album_at_the_same_scroll(demo_site, browser):
    _, url = demo_site
    context = browser.new_context(viewport={"width": 500, "height": 500})
    page = context.new_page()
    page.goto(url + "mountains/")
    page.evaluate("() => window.scrollTo(0, 400)")
    page.wait_for_timeout(100)
    before = page.evaluate("() => scrollY")
    assert before > 0
    page.locator(".grid li:nth-child(4) a").click()
    page.wait_for_url(url + "mountains/img-0004/")
    page.go_back()
    page.wait_for_url(url + "mountains/")
    assert page.locator(".lb").is_hidden()
    assert page.evaluate("() => scrollY") == before
    context.close()


def test_focus_is_trapped_and_returned(demo_site, page):
    _, url = demo_site
    page.goto(url + "mountains/")
    link = page.locator(".grid li:nth-child(3) a")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(url + "mountains/img-0003/")
    assert page.evaluate("() => document.activeElement.dataset.lb") == "close"
    for _ in range(12):
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.querySelector('.lb').contains(document.activeElement)")
    for _ in range(3):
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("() => document.querySelector('.lb').contains(document.activeElement)")
    page.keyboard.press("Escape")
    page.wait_for_url(url + "mountains/")
    assert page.evaluate("() => document.activeElement.href").endswith("mountains/img-0003/")
    labels = page.evaluate("() => [...document.querySelectorAll('.lb button')].map(b => b.getAttribute('aria-label'))")
    assert all(labels)


def test_the_pages_own_addresses_hold_while_the_viewer_shows_a_photo_address(demo_site, page):
    """Opening the viewer puts the photo's address in the location bar (pushState), which would make
    every relative URL of the page resolve from the photo's folder: they must still lead where they did."""
    _, url = demo_site
    failed = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    page.goto(url + "mountains/")
    page.wait_for_selector("html[data-albumen=ready]", state="attached")
    before = page.evaluate("() => [...document.querySelectorAll('a[href], img[src]')].map(e => e.href || e.src)")
    page.locator(".grid li:nth-child(3) a").click()
    page.wait_for_url(url + "mountains/img-0003/")
    after = page.evaluate("() => [...document.querySelectorAll('a[href], img[src]')].map(e => e.href || e.src)")
    assert after[: len(before)] == before
    assert page.evaluate("() => document.querySelector('.grid li:nth-child(5) a').href") == url + "mountains/img-0005/"
    page.keyboard.press("ArrowRight")
    page.wait_for_url(url + "mountains/img-0004/")
    page.wait_for_timeout(300)
    assert not failed


def test_touch_swipe_moves_between_photos(demo_site, browser):
    _, url = demo_site
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, device_scale_factor=2)
    page = context.new_page()
    page.goto(url + "mountains/")
    page.wait_for_selector("html[data-albumen=ready]", state="attached")
    page.locator(".grid li:nth-child(1) a").tap()
    page.wait_for_url(url + "mountains/img-0001/")
    cdp = context.new_cdp_session(page)

    def swipe(x0, x1, y=420):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]})
        for i in range(1, 6):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x0 + (x1 - x0) * i / 5, "y": y}]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    swipe(330, 60)
    page.wait_for_url(url + "mountains/img-0002/")
    swipe(330, 60)
    page.wait_for_url(url + "mountains/img-0003/")
    swipe(60, 330)
    page.wait_for_url(url + "mountains/img-0002/")
    # on a photo page opened directly, a swipe follows the page's links
    page.goto(url + "mountains/img-0004/")
    page.wait_for_selector("html[data-albumen=ready]", state="attached")
    box = page.locator(".photo-frame").bounding_box()
    swipe(330, 60, y=box["y"] + box["height"] / 2)
    page.wait_for_url(url + "mountains/img-0005/")
    context.close()


def test_zoom_shows_the_largest_published_size(demo_site, page):
    _, url = demo_site
    page.set_viewport_size({"width": 800, "height": 600})
    page.goto(url + "mountains/")
    page.click(".grid li:nth-child(1) a")
    page.wait_for_function("() => document.querySelector('.lb .lb-img') && document.querySelector('.lb .lb-img').complete")
    fitted = page.locator(".lb .lb-img").bounding_box()["width"]
    page.keyboard.press("z")
    page.wait_for_timeout(400)
    zoomed = page.locator(".lb .lb-img").bounding_box()["width"]
    largest = json.loads(page.locator("#albumen-items").inner_text())[0]["w"]
    assert zoomed > fitted and abs(zoomed - largest) <= 2
    # and it is the largest file that is shown then, not the fitted size's file stretched
    page.wait_for_function(f"() => document.querySelector('.lb .lb-img').currentSrc.includes('.{largest}w.')", timeout=5000)
    page.keyboard.press("Escape")  # first Escape leaves zoom
    page.wait_for_timeout(300)
    assert page.locator(".lb").is_visible()


def test_no_console_errors_on_any_page(demo_site, browser):
    site, url = demo_site
    pages = sorted(crawl(site).pages)
    assert len(pages) > 30
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for rel in pages:
        page.goto(url + rel)
        page.wait_for_load_state("load")
    assert errors == []
    context.close()


def test_without_javascript_every_photo_is_reachable(demo_site, browser):
    site, url = demo_site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    seen, queue, photos = set(), [url], set()
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        seen.add(current)
        page.goto(current)
        if page.locator("img.photo-image").count():
            assert page.evaluate("() => document.querySelector('img.photo-image').naturalWidth") > 0
            photos.add(current)
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            if href.startswith(url) and "#" not in href and not href.endswith((".jpg", ".png", ".webp")):
                queue.append(href)
    assert len(photos) == 24
    context.close()


@pytest.mark.parametrize("path", ["", "mountains/", "mountains/img-0001/", "city-at-night/img-0009/", "stream/"])
def test_axe_finds_no_serious_violations(demo_site, page, path):
    from axe_playwright_python.sync_playwright import Axe

    _, url = demo_site
    page.goto(url + path)
    results = Axe().run(page)
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in results.response["violations"]
           if v["impact"] in ("serious", "critical")]
    assert bad == []


def test_axe_in_the_open_lightbox(demo_site, page):
    from axe_playwright_python.sync_playwright import Axe

    _, url = demo_site
    page.goto(url + "mountains/")
    page.click(".grid li:nth-child(1) a")
    page.wait_for_selector(".lb .lb-img", state="visible")
    results = Axe().run(page)
    bad = [(v["id"], v["impact"]) for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert bad == []


def test_no_layout_shift_and_screenshots(demo_site, browser):
    _, url = demo_site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, viewport, mobile in (("phone", {"width": 390, "height": 844}, True), ("desktop", {"width": 1440, "height": 900}, False)):
        context = browser.new_context(viewport=viewport, is_mobile=mobile, has_touch=mobile)
        page = context.new_page()
        page.add_init_script(
            "window.__cls = 0; new PerformanceObserver(l => { for (const e of l.getEntries())"
            " if (!e.hadRecentInput) window.__cls += e.value; }).observe({type: 'layout-shift', buffered: true});"
        )
        for path, shot in (("", "home"), ("mountains/", "album"), ("mountains/img-0001/", "photo")):
            page.goto(url + path)
            page.wait_for_load_state("networkidle")
            assert page.evaluate("() => window.__cls") == 0, f"layout shift on {path} ({name})"
            page.screenshot(path=str(ARTIFACTS / f"{name}-{shot}.png"), full_page=True)
        page.goto(url + "mountains/")
        page.click(".grid li:nth-child(2) a")
        page.wait_for_function("() => document.querySelector('.lb .lb-img').complete")
        page.screenshot(path=str(ARTIFACTS / f"{name}-lightbox.png"))
        context.close()
    assert len(list(ARTIFACTS.glob("*.png"))) >= 8


def test_stream_opens_the_same_lightbox_on_photo_urls(demo_site, page):
    _, url = demo_site
    page.goto(url + "stream/")
    first = page.locator(".grid li:nth-child(1) a")
    target = url + "stream/" + first.get_attribute("href")
    first.click()
    page.wait_for_selector(".lb .lb-img", state="visible")
    assert page.url == page.evaluate("(u) => new URL(u).href", target)
    assert page.locator(".lb-count").inner_text().endswith("of 24")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.lb-count').textContent.startsWith('Photo 2 ')")
    page.keyboard.press("Escape")
    page.wait_for_url(url + "stream/")
    assert page.errors == []


@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, {"width": 390, "height": 844}])
def test_stream_captions_sit_over_the_photo_and_the_tile_is_the_photo(demo_site, browser, viewport):
    """The album and date of a stream tile are drawn over the bottom of its photo, inside it, in white;
    they used to follow the image as an underlined line that made every tile taller than its photo."""
    _, url = demo_site
    context = browser.new_context(viewport=viewport)
    pg = context.new_page()
    pg.goto(url + "stream/")
    boxes = pg.evaluate("""() => [...document.querySelectorAll('.grid .tile')].map(t => {
        const r = t.getBoundingClientRect(), i = t.querySelector('img').getBoundingClientRect();
        const c = t.querySelector('.tile-caption'), cr = c.getBoundingClientRect();
        const style = getComputedStyle(c.querySelector('time') || c.querySelector('.tile-album'));  // (undated: no date)
        return {tile: [r.height, r.width], img: [i.height, i.width], cap: [cr.top, cr.bottom, cr.left, cr.right],
                imgbox: [i.top, i.bottom, i.left, i.right], colour: style.color, line: style.textDecorationLine,
                album: c.querySelector('.tile-album').getBoundingClientRect().height};
    })""")
    context.close()
    assert len(boxes) >= 10
    for b in boxes:
        assert abs(b["tile"][0] - b["img"][0]) < 1.5, b  # no strip under the photo
        top, bottom, left, right = b["cap"]
        itop, ibottom, ileft, iright = b["imgbox"]
        assert top >= itop - 0.5 and bottom <= ibottom + 0.5 and left >= ileft - 0.5 and right <= iright + 0.5, b
        assert b["colour"] == "rgb(255, 255, 255)" and b["line"] == "none", b
        assert b["album"] > 0
        covered = (bottom - top) * (right - left) / (b["tile"][0] * b["tile"][1])
        if viewport["width"] < 600:  # a phone's small thumbnails: the words are for screen readers only
            assert covered < 0.01, b
        else:  # one small line over the foot of the photo (it covered a third of a phone's thumbnails)
            assert covered < 0.2 and bottom - top < 40, b


def test_keyboard_focus_on_a_thumbnail_is_visible(demo_site, page):
    """Tabbing onto a grid thumbnail draws a ring (the tile clips anything drawn outside it)."""
    _, url = demo_site
    page.goto(url + "mountains/")
    tile = page.locator(".grid li:nth-child(2)")
    before = tile.screenshot()
    page.locator(".grid li:nth-child(1) a").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('li') === document.querySelector('.grid li:nth-child(2)')")
    after = tile.screenshot()
    from io import BytesIO

    from PIL import Image, ImageChops

    a, b = Image.open(BytesIO(before)).convert("RGB"), Image.open(BytesIO(after)).convert("RGB")
    changed = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 40 else 0)
    assert changed.getbbox() is not None, "focus drew nothing on the thumbnail"
    assert sum(1 for v in changed.getdata() if v) > 2 * (a.width + a.height)  # a ring round it, not a speck


def _image_fit(browser, url: str, selector: str, viewport: dict, dpr: int) -> list[dict]:
    context = browser.new_context(viewport=viewport, device_scale_factor=dpr, is_mobile=viewport["width"] < 600,
                                  has_touch=viewport["width"] < 600)
    pg = context.new_page()
    pg.goto(url)
    pg.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    pg.wait_for_function(f"() => [...document.querySelectorAll('{selector}')].every(i => i.complete && i.naturalWidth)")
    # the file's width is the w descriptor of the candidate chosen (naturalWidth is scaled by sizes)
    fit = pg.evaluate(f"""() => [...document.querySelectorAll('{selector}')].map(i => {{
        const cands = i.srcset.split(', ').map(s => s.split(' ')).map(([u, w]) => [new URL(u, location.href).href, parseInt(w)]);
        return {{shown: i.getBoundingClientRect().width, natural: cands.find(([u]) => u === i.currentSrc)[1],
                src: i.currentSrc, widest: Math.max(...cands.map(([, w]) => w))}};
    }})""")
    context.close()
    return fit


@pytest.mark.parametrize("viewport, dpr", [({"width": 390, "height": 844}, 3), ({"width": 1440, "height": 900}, 1),
                                           ({"width": 1440, "height": 900}, 2)])
def test_grid_and_card_images_fit_their_slots(demo_site, browser, viewport, dpr):
    """The sizes attributes follow the layout: a phone loads grid images for its small tiles (it took
    the 1600 px file for 180 px tiles), and album cards a full-width phone column gets sharp ones."""
    _, url = demo_site
    for m in _image_fit(browser, url + "mountains/", ".grid img", viewport, dpr):
        need = m["shown"] * dpr
        assert m["natural"] <= max(2 * need, 480), m  # never more than twice the pixels shown (or the thumbnail)
        assert m["natural"] >= min(need * 0.75, m["widest"]), m  # and never soft
    for m in _image_fit(browser, url, ".card img", viewport, dpr):
        need = m["shown"] * dpr
        assert m["natural"] >= min(need * 0.9, m["widest"]), m
        assert m["natural"] <= max(2 * need, 480), m


def test_the_viewer_never_enlarges_a_photo_past_its_largest_size(tmp_path, browser):
    """A small photo (640x427) is shown at its own size on a big screen, as its page shows it; it was
    stretched to fill the screen (1.8x, and 12.8x for a 100 px photo)."""
    src, site = tmp_path / "src", tmp_path / "site"
    make_jpeg(src / "Small" / "small.jpg", size=(640, 427))
    make_jpeg(src / "Small" / "big.jpg", size=(2400, 1600))
    assert run_cli("build", str(src), "-o", str(site), "-j", "1").exit_code == 0
    server, url = serve(site)
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        pg = context.new_page()
        pg.goto(url + "small/")
        sizes = {}
        for slug in ("small", "big"):
            pg.click(f"#m-{slug} a")
            pg.wait_for_function("() => document.querySelector('.lb .lb-img') && document.querySelector('.lb .lb-img').complete")
            sizes[slug] = pg.locator(".lb .lb-img").bounding_box()
            pg.keyboard.press("Escape")
            pg.wait_for_url(url + "small/")
        context.close()
    finally:
        server.shutdown()
    assert round(sizes["small"]["width"]) == 640 and round(sizes["small"]["height"]) == 427, sizes
    assert sizes["big"]["height"] > 700  # a big photo still fills the screen


@pytest.mark.parametrize("where", ["album", "stream"])
def test_the_viewer_goes_on_across_pages_and_back_leads_to_the_grid(tmp_path, browser, where):
    """At the last photo of an album or stream page, Next opens the viewer on the first photo of the
    next page (it stopped on the stream, and left the viewer for plain photo pages in albums); Back
    then leads to that page's grid, not through every photo seen."""
    src, site = tmp_path / "src", tmp_path / "site"
    for n in range(7):
        make_jpeg(src / "Trip" / f"p{n}.jpg", size=(300, 200), date=datetime(2024, 1, 1 + n, 12))
    conf = tmp_path / "albumen.toml"
    conf.write_text("[pages]\npage_size = 3\n[stream]\npage_size = 3\n")
    assert run_cli("build", str(src), "-o", str(site), "-c", str(conf), "-j", "1").exit_code == 0
    server, url = serve(site)
    first = url + ("trip/" if where == "album" else "stream/")
    try:
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        pg = context.new_page()
        pg.goto(first)
        last = pg.locator(".grid li").count()  # 3 in the album; the stream's pages hold about 3
        assert 2 <= last < 7
        pg.click(f".grid li:nth-child({last}) a")
        pg.wait_for_function("() => !document.querySelector('.lb').hidden")
        on_page_one = pg.url
        pg.keyboard.press("ArrowRight")
        pg.wait_for_url(lambda u: "/page/" not in u and u != on_page_one, timeout=10000)
        pg.wait_for_function("() => document.documentElement.dataset.albumen === 'ready' && !document.querySelector('.lb').hidden")
        count = pg.locator(".lb-count").inner_text()
        # an album's viewer counts the album's photos; the stream's, those of its page
        assert count.startswith("Photo 4 of 7" if where == "album" else "Photo 1 of "), count
        shown = pg.url
        pg.keyboard.press("ArrowLeft")  # and back across the boundary, to the last of page one
        pg.wait_for_url(lambda u: u != shown, timeout=10000)
        pg.wait_for_function("() => document.documentElement.dataset.albumen === 'ready' && !document.querySelector('.lb').hidden")
        assert pg.locator(".lb-count").inner_text().startswith("Photo 3 of 7" if where == "album" else f"Photo {last} of {last}")
        pg.go_back()  # the grid of page one, the viewer closed
        pg.wait_for_function("() => document.querySelector('.lb').hidden")
        assert pg.url == first
        context.close()
    finally:
        server.shutdown()


def test_with_webp_the_viewer_fetches_and_shows_webp_not_the_jpeg_fallbacks(tmp_path, browser):
    """The viewer preloaded its neighbours with the JPEG srcset (new Image()), which a browser that
    shows WebP never uses: every step downloaded a photo twice. It preloads what <picture> picks."""
    src, site = tmp_path / "src", tmp_path / "site"
    for n in range(4):
        make_jpeg(src / "Trip" / f"p{n}.jpg", size=(1800, 1200), color=(40 * n, 90, 160),
                  date=datetime(2024, 1, 1 + n, 12))
    conf = tmp_path / "albumen.toml"
    conf.write_text('[images]\nformats = ["jpeg", "webp"]\n')
    assert run_cli("build", str(src), "-o", str(site), "-c", str(conf), "-j", "1").exit_code == 0
    server, url = serve(site)
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        pg = context.new_page()
        pg.goto(url + "trip/")
        pg.wait_for_load_state("networkidle")
        requested: list[str] = []
        pg.on("request", lambda r: requested.append(r.url.rsplit("/", 1)[-1]))
        pg.click("#m-p0 a")
        pg.wait_for_function("() => document.querySelector('.lb .lb-img') && document.querySelector('.lb .lb-img').complete")
        pg.keyboard.press("ArrowRight")
        pg.wait_for_url(url + "trip/p1/")
        pg.wait_for_function("() => document.querySelector('.lb .lb-img').complete")
        pg.wait_for_load_state("networkidle")
        shown = pg.evaluate("() => document.querySelector('.lb .lb-img').currentSrc")
        context.close()
    finally:
        server.shutdown()
    display = [name for name in requested if re.search(r"\.\d+w\.[0-9a-f]+\.(jpg|webp)$", name)]
    assert [n for n in display if n.endswith(".jpg")] == [], display  # no JPEG fallback fetched
    webp = {n.split(".")[0] for n in display if n.endswith(".webp")}
    assert webp == {"p0", "p1", "p2"}, display  # shown p0 and p1, and p1's neighbour p2 preloaded
    assert re.search(r"/p1\.\d+w\.[0-9a-f]+\.webp$", shown), shown


def test_the_viewer_from_file_urls_opens_steps_and_closes_onto_its_album(tmp_path, page):
    """Opened from disk (links = "index.html"), Chromium refuses another file's address in the location
    bar: the viewer works without it, and closing it stays on the album instead of going back in history."""
    src = tmp_path / "photos"
    for i in range(3):
        make_jpeg(src / "Trip" / f"p{i}.jpg", size=(90, 60), color=(40 * i, 120, 200))
    config = tmp_path / "albumen.toml"
    config.write_text('[pages]\nlinks = "index.html"\n')
    site = tmp_path / "site"
    assert run_cli("build", str(src), "-o", str(site), "-c", str(config)).exit_code == 0
    home = (site / "index.html").as_uri()
    page.goto(home)
    page.click(".cards a, .grid a")
    album = (site / "trip" / "index.html").as_uri()
    page.wait_for_url(album)
    page.wait_for_selector("html[data-albumen=ready]", state="attached")
    page.click(".grid li:nth-child(1) a")
    page.wait_for_selector(".lb .lb-img", state="visible")
    assert page.evaluate("() => document.activeElement.dataset.lb") == "close"
    page.keyboard.press("ArrowRight")
    assert page.locator(".lb-count, [data-lb=count]").first.inner_text().strip().startswith(("Photo 2", "2"))
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    assert page.url == album and page.locator(".lb").is_hidden()
    assert not page.errors
