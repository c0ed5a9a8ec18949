"""The default theme in real Chromium, from a 320 px phone to a 2560 px screen, light and dark (issue 20).

Every page type of the demo and of a hostile gallery (long names and URLs, HTML in sidecars, a tiny
logo, slugs that repeat across albums, a photo called main.jpg) is checked at each size and scheme:
no wider than the window, no image shown above its natural size, no console error, no layout shift,
no axe-core violation, and the open viewer shows the whole photo in the room its bar, caption and
strip leave. One browser for the module, one page per size and scheme. Screenshots of every page
type go to $ALBUMEN_TEST_ARTIFACTS/screenshots (default /tmp/albumen-test-artifacts).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import REPO, hostile_gallery, run_cli
from test_browser import ARGS, CHROMIUM, serve

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/test.sh installs it)"),
]
SIZES = {320: 640, 390: 844, 768: 1024, 1440: 900, 2560: 1440}
SHOTS = Path(os.environ.get("ALBUMEN_TEST_ARTIFACTS", "/tmp/albumen-test-artifacts")) / "screenshots"
AXE_NPM = REPO / "tests" / "npm" / "node_modules" / "axe-core" / "axe.min.js"

@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    base = tmp_path_factory.mktemp("design")
    assert run_cli("demo", str(base / "demo")).exit_code == 0
    hostile_gallery(base / "hostile")
    out = {}
    servers = []
    for name in ("demo", "hostile"):
        site = base / f"{name}-site"
        result = run_cli("build", str(base / name), "-o", str(site), "-j", "2")
        assert result.exit_code == 0, result.output
        server, url = serve(site)
        servers.append(server)
        out[name] = (site, url)
    yield out
    for server in servers:
        server.shutdown()


def page_types(site: Path) -> dict[str, str]:
    """One page of each type: home, an album (the first with photos), the stream, a photo page, 404."""
    from conftest import soup

    home = soup(site / "index.html")
    album = next(a["href"] for a in home.select(".card a"))
    first_photo = soup(site / album / "index.html").select_one(".grid li a")["href"]
    return {"home": "", "album": album, "stream": "stream/", "photo": album + first_photo, "404": "404.html"}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def axe_script() -> str:
    """axe-core from npm (tests/npm, pinned; scripts/test.sh installs it), else the copy the
    axe-playwright-python package carries."""
    if AXE_NPM.is_file():
        return AXE_NPM.read_text()
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()


CLS = ("window.__cls = 0; window.__shifted = []; new PerformanceObserver(l => { for (const e of l.getEntries())"
       " if (!e.hadRecentInput) { window.__cls += e.value; window.__shifted.push(...e.sources.map(s => s.node ?"
       " (s.node.nodeName + '.' + s.node.className + ' ' + JSON.stringify([s.previousRect.y, s.currentRect.y,"
       " s.previousRect.width, s.currentRect.width])) : '?')); } }).observe({type: 'layout-shift', buffered: true});")

# every image of the grids and cards: its box against its largest file (the srcset's widest candidate)
OVERSIZE = """() => [...document.querySelectorAll('.grid img, .cards img')].map(i => {
  const r = i.getBoundingClientRect();
  const ws = (i.getAttribute('srcset') || '').split(',').map(c => parseInt(c.trim().split(/\\s+/)[1]) || 0);
  const w = Math.max(...ws, +i.getAttribute('width'));
  const h = w * i.getAttribute('height') / i.getAttribute('width');
  return [i.currentSrc.split('/').pop(), r.width, r.height, w, h];
}).filter(([, rw, rh, w, h]) => rw > w + 1 || rh > h + 1)"""

LIGHTBOX = """() => {
  const box = s => { const e = document.querySelector(s); if (!e || !e.offsetParent && getComputedStyle(e).display === 'none') return null;
                     const r = e.getBoundingClientRect(); return r.width && r.height ? [r.left, r.top, r.right, r.bottom] : null; };
  return {img: box('.lb .lb-img'), stage: box('.lb-stage'), bar: box('.lb-bar'), info: box('.lb-info'),
          strip: box('.lb-strip'), prev: box('.lb-prev'), next: box('.lb-next'),
          complete: document.querySelector('.lb .lb-img').complete, vw: innerWidth, vh: innerHeight};
}"""


def overlaps(a, b) -> bool:
    return a is not None and b is not None and a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def inside(a, b) -> bool:
    return a[0] >= b[0] - 1 and a[1] >= b[1] - 1 and a[2] <= b[2] + 1 and a[3] <= b[3] + 1


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", list(SIZES))
def test_every_page_type_at_every_size(sites, browser, axe_script, width, scheme):
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": SIZES[width]}, color_scheme=scheme,
                                  is_mobile=width < 700, has_touch=width < 700)
    context.add_init_script(CLS)
    page = context.new_page()
    problems: list[str] = []
    where = {"url": ""}
    page.on("console", lambda m: problems.append(f"{where['url']}: console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"{where['url']}: {e}"))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 and not r.url.endswith("404.html") else None)
    for name, (site, url) in sites.items():
        for kind, path in page_types(site).items():
            where["url"] = label = f"{name} {kind} {width}px {scheme}"
            page.goto(url + path)
            page.wait_for_load_state("load")
            page.wait_for_function("() => [...document.images].every(i => i.complete || i.loading === 'lazy')")
            wide = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            if wide[0] > wide[1]:
                problems.append(f"{label}: {wide[0]} px wide in a {wide[1]} px window")
            for shown in page.evaluate(OVERSIZE):
                problems.append(f"{label}: {shown[0]} shown at {shown[1]:.0f}x{shown[2]:.0f}, its largest file is {shown[3]}x{shown[4]:.0f}")
            unpainted = page.evaluate("() => [...document.querySelectorAll('.cards, .grid')]"
                                      ".filter(e => getComputedStyle(e).visibility !== 'visible').length")
            if unpainted:  # (kept hidden until their end marker arrives: one missing hides them for good)
                problems.append(f"{label}: {unpainted} card lists or grids left unpainted")
            cls = page.evaluate("() => [window.__cls, window.__shifted.slice(0, 4)]")
            if cls[0] > 0:
                problems.append(f"{label}: layout shift {cls[0]:.4f} of {cls[1]}")
            page.add_script_tag(content=axe_script)
            violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                                       ".map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(', '))")
            problems += [f"{label}: axe {v}" for v in violations]
            page.screenshot(path=str(SHOTS / f"{name}-{kind}-{width}-{scheme}.png"), full_page=width in (390, 1440))
        # the viewer, open on the album's second photo, its information shown (the default)
        where["url"] = label = f"{name} lightbox {width}px {scheme}"
        page.goto(url + page_types(site)["album"])
        page.wait_for_selector("html[data-albumen=ready]", state="attached")
        page.click(".grid li:nth-child(2) a")
        page.wait_for_function("() => document.querySelector('.lb .lb-img') && document.querySelector('.lb .lb-img').complete")
        page.wait_for_timeout(300)  # its fade in
        lb = page.evaluate(LIGHTBOX)
        if lb["info"] is None:
            problems.append(f"{label}: the information is not shown")
        if not inside(lb["img"], lb["stage"]) or not inside(lb["img"], [0, 0, lb["vw"], lb["vh"]]):
            problems.append(f"{label}: the photo {lb['img']} is not whole in its room {lb['stage']}")
        for part in ("bar", "info", "strip", "prev", "next"):
            if overlaps(lb["img"], lb[part]):
                problems.append(f"{label}: the {part} {lb[part]} covers the photo {lb['img']}")
        page.add_script_tag(content=axe_script)
        violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                                   ".map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(', '))")
        problems += [f"{label}: axe {v}" for v in violations]
        page.screenshot(path=str(SHOTS / f"{name}-lightbox-{width}-{scheme}.png"))
    context.close()
    assert problems == []


@pytest.mark.parametrize("count", [1, 3, 30])
def test_album_cards_share_the_width_and_keep_their_facts_on_one_line(tmp_path, browser, count):
    """With one, three or thirty albums, the home page's cards fill its width (one album left half of
    a wide screen blank), and each card's date range and counts stay on one line."""
    from conftest import make_jpeg

    src, site = tmp_path / "src", tmp_path / "site"
    for n in range(count):
        make_jpeg(src / f"Album number {n:02d}" / "p.jpg", size=(900, 600), color=(8 * n, 90, 160),
                  date=f"2024:0{1 + n % 9}:01 10:00:00")
        make_jpeg(src / f"Album number {n:02d}" / "q.jpg", size=(900, 600), date="2023:11:21 10:00:00")
    assert run_cli("build", str(src), "-o", str(site), "-j", "2").exit_code == 0
    server, url = serve(site)
    try:
        for width in (390, 1440, 2560):
            context = browser.new_context(viewport={"width": width, "height": 900})
            pg = context.new_page()
            pg.goto(url)
            got = pg.evaluate("""() => {
                const list = document.querySelector('.cards').getBoundingClientRect();
                const cards = [...document.querySelectorAll('.card')].map(c => c.getBoundingClientRect());
                const metas = [...document.querySelectorAll('.card-meta')].map(m => [m.getBoundingClientRect().height,
                    parseFloat(getComputedStyle(m).lineHeight), m.scrollWidth <= m.clientWidth, m.textContent.trim()]);
                return {list: [list.left, list.right], right: Math.max(...cards.map(c => c.right)),
                        left: Math.min(...cards.map(c => c.left)), metas, doc: document.documentElement.scrollWidth};
            }""")
            context.close()
            assert got["doc"] <= width
            assert abs(got["left"] - got["list"][0]) < 1 and abs(got["right"] - got["list"][1]) < 1, (width, got)
            for height, line, whole, text in got["metas"]:
                assert height < 1.5 * line, (width, text)  # one line
                assert whole and "·" not in text, (width, text)  # all of it (the dots are drawn by CSS)
    finally:
        server.shutdown()


def test_the_scheme_and_accent_settings_override_the_visitors_system(tmp_path, browser):
    """[theme] scheme = "dark" makes the pages dark for a visitor whose system is light (and "light"
    the other way round); the accent colours the links, made readable on that page."""
    from albumen.render.colours import DARK_PAGE, LIGHT_PAGE, readable_on
    from conftest import make_jpeg

    src = tmp_path / "src"
    make_jpeg(src / "Trip" / "a.jpg", size=(600, 400))
    (src / "index.md").write_text("A [link](https://example.org/) here.\n")
    seen = {}
    for scheme, system in (("dark", "light"), ("light", "dark"), ("auto", "dark"), ("auto", "light")):
        conf = tmp_path / f"{scheme}.toml"
        conf.write_text(f'[theme]\nscheme = "{scheme}"\naccent = "#e67e22"\n')
        site = tmp_path / f"site-{scheme}"
        assert run_cli("build", str(src), "-o", str(site), "-c", str(conf), "-j", "1").exit_code == 0
        server, url = serve(site)
        try:
            context = browser.new_context(color_scheme=system)
            pg = context.new_page()
            pg.goto(url)
            seen[scheme, system] = pg.evaluate("""() => [getComputedStyle(document.body).backgroundColor,
                getComputedStyle(document.querySelector('.description a')).color]""")
            context.close()
        finally:
            server.shutdown()

    def rgb(colour: str) -> str:
        return "rgb(" + ", ".join(str(int(colour[i:i + 2], 16)) for i in (1, 3, 5)) + ")"

    dark = [rgb(DARK_PAGE), rgb(readable_on("#e67e22", DARK_PAGE))]
    light = [rgb(LIGHT_PAGE), rgb(readable_on("#e67e22", LIGHT_PAGE))]
    assert seen["dark", "light"] == dark and seen["auto", "dark"] == dark
    assert seen["light", "dark"] == light and seen["auto", "light"] == light
    assert dark[1] != light[1]  # an orange too light for a light page is darkened there


def test_the_viewer_moves_only_for_visitors_who_accept_motion(sites, browser):
    """The viewer fades in, and its photos too; with prefers-reduced-motion nothing animates."""
    site, url = sites["demo"]
    seen = {}
    for motion in ("no-preference", "reduce"):
        context = browser.new_context(reduced_motion=motion, viewport={"width": 1024, "height": 700})
        pg = context.new_page()
        pg.goto(url + page_types(site)["album"])
        pg.wait_for_selector("html[data-albumen=ready]", state="attached")
        pg.click(".grid li:nth-child(1) a")
        pg.wait_for_selector(".lb .lb-frame")
        seen[motion] = pg.evaluate("""() => [getComputedStyle(document.querySelector('.lb')).animationName,
            getComputedStyle(document.querySelector('.lb-frame')).animationName,
            getComputedStyle(document.querySelector('.lb-img')).transitionDuration]""")
        context.close()
    assert seen["no-preference"] == ["lb-in", "lb-in", "0.2s"]
    assert seen["reduce"] == ["none", "none", "0s"]


FRAME = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const frame = document.querySelector('.photo-frame'), caption = document.querySelector('.photo-caption');
  const column = parseFloat(getComputedStyle(frame.parentElement).gridTemplateColumns);  // its first track
  const style = getComputedStyle(frame);
  return {frame: box(frame), caption: box(caption), column, vw: innerWidth, vh: innerHeight,
          ph: parseFloat(getComputedStyle(document.documentElement).fontSize) * (innerWidth > 640 ? 5.5 : 4),
          ratio: parseFloat(style.getPropertyValue('--r')), lw: parseFloat(style.getPropertyValue('--lw'))};
}"""


@pytest.mark.parametrize("width, height", [(390, 844), (1440, 900)])
def test_photos_come_first_on_album_and_photo_pages(sites, browser, width, height):
    """Images first: an album page's grid starts in the top third of the first screen and runs edge
    to edge on a phone; a photo page's photo is as large as the window allows (as wide as its column,
    as tall as the screen under the header, or its largest file) and whole on the first screen, its
    words beside it on a wide screen and under it on a phone."""
    site, url = sites["demo"]
    types = page_types(site)
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 700, has_touch=width < 700)
    pg = context.new_page()
    pg.goto(url + types["album"])
    grid = pg.evaluate("() => { const r = document.querySelector('.grid').getBoundingClientRect(); return [r.left, r.top, r.right]; }")
    assert grid[1] < height / 3, grid
    if width < 700:
        assert abs(grid[0]) < 1 and abs(grid[2] - width) < 1, grid
    pg.goto(url + types["photo"])
    pg.wait_for_load_state("load")
    got = pg.evaluate(FRAME)
    context.close()
    left, top, right, bottom = got["frame"]
    expected = min(got["column"], (got["vh"] - got["ph"]) * got["ratio"], got["lw"])
    assert abs((right - left) - expected) < 2, got
    assert bottom <= height, got  # whole on the first screen
    c_left, c_top, _, _ = got["caption"]
    if width < 700:
        assert abs(left) < 1 and abs(right - width) < 1, got  # edge to edge
        assert c_top >= bottom, got  # the words under the photo
    else:
        assert c_left >= right and c_top < bottom, got  # the words beside it


LONG_DESCRIPTION = (
    "We drove down the coast in the first week of May, stopping wherever the road met the sea. "
    "The mornings were grey and still, the afternoons bright enough to bleach the rocks white.\n\n"
    "Most of these were taken with the small camera, handheld, at the end of long walks; the harbour "
    "series at dusk from the breakwater, waiting for the boats to come in with their lights on.\n\n"
    "Thanks to Ana and Luís for the rooms above the bakery, and for the map with the good beaches on it. "
    "Prints of any of these are yours for the asking: write to me.\n"
)


def test_a_long_album_description_leaves_the_photos_on_a_phones_first_screen(tmp_path, browser):
    """On a phone a long description is cut to a few lines with "Read more" (a checkbox and its label:
    no script needed, the keyboard works), so that the grid starts on the first screen; on a wider
    screen it is whole and nothing is offered."""
    from conftest import make_jpeg

    src, site = tmp_path / "photos", tmp_path / "site"
    for i in range(6):
        make_jpeg(src / "Coast" / f"p{i}.jpg", size=(900, 600), color=(30 * i, 90, 140), date=f"2024:05:0{i + 1} 10:00:00")
    (src / "Coast" / "index.md").write_text("Title: The coast road\n\n" + LONG_DESCRIPTION)
    make_jpeg(src / "Short" / "a.jpg", size=(900, 600))
    (src / "Short" / "index.md").write_text("Title: Short\n\nOne line about these.\n")
    assert run_cli("build", str(src), "-o", str(site), "-j", "2").exit_code == 0
    server, url = serve(site)
    state = """() => { const d = document.querySelector('.album-header .description'), l = document.querySelector('.more-label');
        return {cut: d.scrollHeight > d.clientHeight + 1, grid: document.querySelector('.grid').getBoundingClientRect().top,
                label: l && l.offsetParent ? l.innerText.trim() : null}; }"""
    try:
        for width, height in ((320, 640), (390, 844)):
            context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=True, has_touch=True)
            pg = context.new_page()
            pg.goto(url + "coast/")
            got = pg.evaluate(state)
            assert got["cut"] and got["label"] == "Read more" and got["grid"] < height - 100, (width, got)
            pg.click(".more-label")
            got = pg.evaluate(state)
            assert not got["cut"] and got["label"] == "Show less", (width, got)
            pg.focus("#description-more")
            pg.keyboard.press("Space")  # and back, from the keyboard
            assert pg.evaluate(state)["cut"]
            pg.goto(url + "short/")
            got = pg.evaluate(state)
            assert not got["cut"] and got["label"] is None, got  # a short one is left alone
            context.close()
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        pg = context.new_page()
        pg.goto(url + "coast/")
        got = pg.evaluate(state)
        assert not got["cut"] and got["label"] is None, got
        assert pg.evaluate("() => getComputedStyle(document.querySelector('#description-more')).display") == "none"
        context.close()
    finally:
        server.shutdown()


def test_the_viewer_shows_the_caption_on_demand_counts_and_jumps_from_its_strip(sites, browser):
    """The viewer's caption (title, the description's Markdown rendered) is shown by default and hidden
    with its Information button or the I key, the photo taking the room it leaves; the counter says
    where the photo is; a thumbnail of the strip shows its photo."""
    site, url = sites["hostile"]
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = context.new_page()
    pg.goto(url + page_types(site)["album"])
    pg.wait_for_selector("html[data-albumen=ready]", state="attached")
    pg.click(".grid li:nth-child(1) a")  # wide.jpg, whose caption has an emphasis
    pg.wait_for_function("() => document.querySelector('.lb .lb-img') && document.querySelector('.lb .lb-img').complete")
    height = "() => document.querySelector('.lb .lb-img').getBoundingClientRect().height"
    shown = pg.evaluate("""() => [getComputedStyle(document.querySelector('.lb-info')).display,
        document.querySelector('.lb-desc em') && document.querySelector('.lb-desc em').textContent,
        document.querySelector('.lb-count').textContent]""")
    assert shown == ["block", "emphasis", "Photo 1 of 5"], shown
    before = pg.evaluate(height)
    pg.click("[data-lb=info]")
    pg.wait_for_function("() => getComputedStyle(document.querySelector('.lb-info')).display === 'none'")
    pg.wait_for_function(f"() => ({height})() > {before} + 20")
    assert pg.get_attribute("[data-lb=info]", "aria-pressed") == "false"
    pg.keyboard.press("i")
    pg.wait_for_function("() => getComputedStyle(document.querySelector('.lb-info')).display !== 'none'")
    pg.click(".lb-strip a:nth-child(4)")
    pg.wait_for_function("() => document.querySelector('.lb-count').textContent === 'Photo 4 of 5'")
    assert pg.get_attribute(".lb-strip a:nth-child(4)", "aria-current") == "true"
    assert pg.url.endswith(pg.get_attribute(".grid li:nth-child(4) a", "href").lstrip("."))
    context.close()
