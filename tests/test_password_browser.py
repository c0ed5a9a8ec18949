"""Password albums in a real browser: Debian's Chromium driven by Playwright, over a real HTTP server on
127.0.0.1 (a secure context, where Web Crypto is offered), decrypting what a build sealed."""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path

import pytest
from PIL import Image

from conftest import run_cli, write_config
from sealing import open_unit, sealed_folders
from test_browser import ARGS, CHROMIUM, serve

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/test.sh installs it)"),
]
PASSWORD = "correct horse battery staple"
COLOURS = [((200, 30, 30), (20, 20, 200)), ((30, 160, 40), (240, 240, 20)), ((250, 250, 250), (10, 10, 10)),
           ((120, 0, 160), (0, 200, 200)), ((255, 140, 0), (60, 60, 60))]


def two_tone(path: Path, size, left, right) -> None:
    """A photo whose halves differ: a decoded copy that is turned, cropped or mixed up shows it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new("RGB", size, left)
    img.paste(Image.new("RGB", (size[0] // 2, size[1]), right), (size[0] // 2, 0))
    img.save(path, "JPEG", quality=95)


def write_photos(src: Path, passwords: bool) -> None:
    album = src / "Wedding"
    sizes = [(1200, 800), (800, 1200), (1000, 1000), (1600, 900), (900, 600)]
    for i, (size, (left, right)) in enumerate(zip(sizes, COLOURS, strict=True)):
        two_tone(album / f"p{i + 1}.jpg", size, left, right)
        (album / f"p{i + 1}.md").write_text(f"Title: Photo number {i + 1}\n")
    two_tone(album / "Day two" / "q1.jpg", (600, 400), (0, 0, 0), (255, 255, 255))
    two_tone(album / "Inner" / "r1.jpg", (600, 400), (9, 9, 9), (99, 99, 99))
    (album / "index.md").write_text("Title: The wedding\n" + (f"password: {PASSWORD}\n" if passwords else "") + "\nHello.\n\n![the first](p1.jpg)\n")
    if passwords:
        (album / "Inner" / "index.md").write_text("password: another one entirely\n")


@pytest.fixture(scope="module")
def sealed_site(tmp_path_factory):
    base = tmp_path_factory.mktemp("sealed-browser")
    env = {"ALBUMEN_HOME": str(base / "home"), "ALBUMEN_CACHE_DIR": str(base / "cache"), "ALBUMEN_SECRET": None}
    (base / "cfg").mkdir()
    cfg = write_config(base / "cfg", '[images]\nformats = ["jpeg", "webp"]\n')
    for name, passwords in (("photos", True), ("twin", False)):
        write_photos(base / name, passwords)
        out = base / ("site" if passwords else "public")
        result = run_cli("build", str(base / name), "-o", str(out), "-j", "2", "-c", str(cfg), env=env)
        assert result.exit_code == 0, result.output
    folders = sealed_folders(base / "site")
    opened = next(o for o in (_open(f, PASSWORD) for f in folders) if o)
    inner = next(f for f in folders if f != opened.folder)
    server, url = serve(base / "site")
    yield base, url, opened, inner
    server.shutdown()


def _open(folder, password):
    try:
        return open_unit(folder, password)
    except ValueError:
        return None


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


COUNT_BLOBS = """
window.blobUrls = 0;
const made = URL.createObjectURL.bind(URL);
URL.createObjectURL = function (o) { window.blobUrls++; return made(o); };
"""


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.add_init_script(COUNT_BLOBS)
    yield ctx
    ctx.close()


def new_page(context):
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    return page


def unlock(page, password=PASSWORD, remember=False):
    page.fill("#sealed-password", password)
    if remember:
        page.check("input[name=remember]")
    page.click(".sealed-lock button")


def grid_of(pixels: list[int], width: int, height: int, n: int = 4) -> list[tuple[float, float, float]]:
    """Average colour of each cell of an n x n grid over RGBA pixels (row-major)."""
    cells = []
    for gy in range(n):
        for gx in range(n):
            xs = range(gx * width // n + 2, (gx + 1) * width // n - 2)
            ys = range(gy * height // n + 2, (gy + 1) * height // n - 2)
            total, count = [0, 0, 0], 0
            for y in ys[::3]:
                for x in xs[::3]:
                    at = 4 * (y * width + x)
                    for c in range(3):
                        total[c] += pixels[at + c]
                    count += 1
            cells.append(tuple(t / max(count, 1) for t in total))
    return cells


def grid_of_file(path: Path) -> list[tuple[float, float, float]]:
    img = Image.open(path).convert("RGBA")
    return grid_of(list(img.tobytes()), img.width, img.height)


PIXELS = """(img) => {
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const W = c.width, H = c.height, d = g.getImageData(0, 0, W, H).data, n = 4, cells = [];
  for (let gy = 0; gy < n; gy++) for (let gx = 0; gx < n; gx++) {  // as grid_of does
    const x0 = Math.floor(gx * W / n) + 2, x1 = Math.floor((gx + 1) * W / n) - 2;
    const y0 = Math.floor(gy * H / n) + 2, y1 = Math.floor((gy + 1) * H / n) - 2;
    const t = [0, 0, 0]; let k = 0;
    for (let y = y0; y < y1; y += 3) for (let x = x0; x < x1; x += 3) {
      const a = 4 * (y * W + x); t[0] += d[a]; t[1] += d[a + 1]; t[2] += d[a + 2]; k++;
    }
    cells.push(t.map(v => v / Math.max(k, 1)));
  }
  return {w: W, h: H, src: img.currentSrc || img.src, grid: cells};
}"""


def close_to(a, b, tolerance=12.0) -> bool:
    return all(abs(x - y) <= tolerance for ca, cb in zip(a, b, strict=True) for x, y in zip(ca, cb, strict=True))


def public_image(base: Path, width: int, height: int, number: int) -> Path:
    """The public build's image of photo number N with that size."""
    found = [p for p in (base / "public" / "wedding" / f"p{number}").iterdir()
             if p.suffix in (".jpg", ".webp") and Image.open(p).size == (width, height)]
    assert found, (number, width, height)
    return found[0]


def test_the_right_password_shows_the_photos_as_the_public_build_does(sealed_site, context):
    base, url, opened, _inner = sealed_site
    page = new_page(context)
    page.goto(url + f"p/{opened.folder.name}/")
    assert page.get_attribute("html", "data-sealed-state") == "locked"
    assert page.title().startswith("Protected album")
    unlock(page)
    page.wait_for_selector("html[data-sealed-state=open]")
    assert page.text_content(".album-header h1") == "The wedding"
    tiles = page.locator(".grid .tile img")
    assert tiles.count() == 5
    page.wait_for_function("[...document.querySelectorAll('.grid .tile img')].every(i => i.complete && i.naturalWidth > 0)")
    for i in range(5):
        img = tiles.nth(i)
        assert img.get_attribute("alt") == f"Photo number {i + 1}"
        got = img.evaluate(PIXELS)
        assert got["src"].startswith("blob:")
        want = grid_of_file(public_image(base, got["w"], got["h"], i + 1))
        assert close_to(got["grid"], want), i
    # the description's picture of one of the album's photos is decrypted too
    page.wait_for_function("document.querySelector('.album-header .description img').src.startsWith('blob:')")
    # the sub-album sealed with it opens from its card; the one with its own password is a locked card
    assert page.locator(".card.is-locked").count() == 1
    locked_href = page.get_attribute(".card.is-locked a", "href")
    assert locked_href.startswith("../") and locked_href != f"../{opened.folder.name}/"
    page.click(".card:not(.is-locked) a")
    page.wait_for_function("document.querySelector('.album-header h1').textContent === 'Day two'")
    assert page.locator(".grid .tile").count() == 1 and page.locator(".sealed-crumbs a").count() == 1
    page.go_back()
    page.wait_for_function("document.querySelector('.album-header h1').textContent === 'The wedding'")
    assert not page.errors, page.errors


def test_the_viewer_keyboard_and_deep_links_work_once_unlocked(sealed_site, context):
    base, url, opened, _inner = sealed_site
    page = new_page(context)
    page.goto(url + f"p/{opened.folder.name}/")
    unlock(page)
    page.wait_for_selector("html[data-sealed-state=open]")
    page.click(".grid .tile:nth-child(2) a")
    page.wait_for_selector(".sv:not([hidden]) .sv-img")
    ids = [page.get_attribute(f".grid .tile:nth-child({n})", "id") for n in range(1, 6)]
    assert page.url.endswith("#" + ids[1])
    assert page.text_content(".sv-count") == "Photo 2 of 5" and page.text_content(".sv-title") == "Photo number 2"
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"location.hash === '#{ids[2]}'")
    page.wait_for_function("(() => { const i = document.querySelector('.sv-img'); return i.complete && i.naturalWidth > 0 })()")
    assert page.text_content(".sv-count") == "Photo 3 of 5"
    got = page.locator(".sv-img").evaluate(PIXELS)
    assert got["src"].startswith("blob:")
    assert close_to(got["grid"], grid_of_file(public_image(base, got["w"], got["h"], 3)))
    page.keyboard.press("End")
    page.wait_for_function(f"location.hash === '#{ids[4]}'")
    page.keyboard.press("Escape")
    page.wait_for_selector(".sv", state="hidden")
    assert page.evaluate("document.activeElement.closest('.tile').id") == ids[4]
    # a deep link: the password is asked, then that photo opens
    other = new_page(context)
    other.goto(url + f"p/{opened.folder.name}/#{ids[3]}")
    unlock(other)
    other.wait_for_selector(".sv:not([hidden]) .sv-img")
    assert other.text_content(".sv-count") == "Photo 4 of 5" and other.text_content(".sv-title") == "Photo number 4"
    other.keyboard.press("ArrowLeft")
    other.wait_for_function(f"location.hash === '#{ids[2]}'")
    assert not page.errors and not other.errors, page.errors + other.errors


def test_a_wrong_password_says_so_and_decrypts_nothing(sealed_site, context):
    _base, url, opened, _inner = sealed_site
    page = new_page(context)
    page.goto(url + f"p/{opened.folder.name}/")
    unlock(page, "not the password at all")
    page.wait_for_selector("html[data-sealed-state=wrong]")
    assert "Wrong password" in page.text_content(".sealed-status")
    assert page.evaluate("window.blobUrls") == 0
    assert page.locator(".grid").count() == 0 and page.is_visible("#sealed-password")
    # then the right one works on the same page
    unlock(page)
    page.wait_for_selector("html[data-sealed-state=open]")
    page.wait_for_function("window.blobUrls > 0")  # (the thumbnails are decrypted as they come)


def test_remember_opens_after_a_reload_until_forget(sealed_site, context):
    _base, url, opened, _inner = sealed_site
    page = new_page(context)
    page.goto(url + f"p/{opened.folder.name}/")
    unlock(page, remember=True)
    page.wait_for_selector("html[data-sealed-state=open]")
    page.reload()
    page.wait_for_selector("html[data-sealed-state=open]")  # without asking
    assert not page.is_visible("#sealed-password") and page.locator(".grid .tile").count() == 5
    stored = page.evaluate("""() => new Promise(r => { const o = indexedDB.open('albumen-sealed');
        o.onsuccess = () => { const t = o.result.transaction('keys').objectStore('keys').getAll();
        t.onsuccess = () => r(t.result.map(k => [k.constructor.name, k.extractable, k.algorithm.name, k.usages])); }; })""")
    assert stored == [["CryptoKey", False, "AES-GCM", ["unwrapKey"]]]
    # another password album of the site is not opened by it
    other = new_page(context)
    other.goto(url + f"p/{_inner.name}/")
    other.wait_for_selector("html[data-sealed-state=locked]")
    page.click("[data-sealed-forget]")
    page.wait_for_selector("html[data-sealed-state=locked]")
    assert page.is_visible("#sealed-password")


def test_a_password_sent_before_the_lock_file_came_is_not_lost(sealed_site, context):
    """On a slow network the visitor may type the password and press Enter before sealed.json arrives:
    the album opens once it does (the submit was dropped, and the page sat locked)."""
    _base, url, opened, _inner = sealed_site
    page = new_page(context)
    held = []
    page.route("**/sealed.json", lambda route: held.append(route))
    page.goto(url + f"p/{opened.folder.name}/", wait_until="domcontentloaded")
    for _ in range(100):  # the page has asked for it, and waits
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    unlock(page)
    page.wait_for_timeout(300)
    assert page.get_attribute("html", "data-sealed-state") != "open"
    held[0].continue_()
    page.wait_for_selector("html[data-sealed-state=open]")
    assert page.locator(".grid .tile").count() == 5 and not page.errors, page.errors


def test_a_network_error_is_not_a_wrong_password(sealed_site, context):
    _base, url, opened, _inner = sealed_site
    page = new_page(context)
    page.route("**/sealed.json", lambda route: route.abort())
    page.goto(url + f"p/{opened.folder.name}/")
    page.wait_for_selector("html[data-sealed-state=error]")
    assert "network error" in page.text_content(".sealed-status")
    page.unroute("**/sealed.json")
    manifest = opened.lock["manifest"]
    page.route(f"**/{manifest}", lambda route: route.fulfill(status=503, body="busy"))
    page.reload()
    unlock(page)
    page.wait_for_selector("html[data-sealed-state=error]")
    status = page.text_content(".sealed-status")
    assert "network error: HTTP 503" in status and "Wrong" not in status


def from_disk(site: Path):
    """A Playwright route handler that answers every request of a named host from the site's files."""

    def answer(route):
        path = site / route.request.url.split("://", 1)[1].split("/", 1)[1].split("?")[0].split("#")[0]
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            return route.fulfill(status=404, body="")
        route.fulfill(status=200, body=path.read_bytes(),
                      content_type=mimetypes.guess_type(path.name)[0] or "application/octet-stream")

    return answer


def test_from_an_https_host_it_opens(sealed_site, context):
    """A named host over HTTPS (GitHub Pages, a store behind a domain) is a secure context: the album
    opens there as on 127.0.0.1, every image decrypted in the page (served here from the site's files)."""
    base, _url, opened, _inner = sealed_site
    page = new_page(context)
    page.route("https://photos.example.test/**", from_disk(base / "site"))
    page.goto(f"https://photos.example.test/p/{opened.folder.name}/")
    assert page.evaluate("window.isSecureContext") and page.get_attribute("html", "data-sealed-state") == "locked"
    unlock(page)
    page.wait_for_selector("html[data-sealed-state=open]")
    page.wait_for_function("[...document.querySelectorAll('.grid .tile img')].every(i => i.complete && i.naturalWidth > 0"
                           " && i.src.startsWith('blob:'))")
    assert page.locator(".grid .tile").count() == 5 and page.text_content(".album-header h1") == "The wedding"
    assert not page.errors, page.errors


def test_over_plain_http_the_page_says_why_it_cannot_decrypt(sealed_site, context):
    """Browsers offer Web Crypto to secure contexts only: http://127.0.0.1 is one, a named host over
    plain HTTP is not (served here from the site's files)."""
    base, _url, opened, _inner = sealed_site
    page = new_page(context)
    page.route("http://photos.example.test/**", from_disk(base / "site"))
    page.goto(f"http://photos.example.test/p/{opened.folder.name}/")
    page.wait_for_selector("html[data-sealed-state=insecure]")
    assert "HTTPS" in page.text_content(".sealed-status")
    assert page.is_disabled("#sealed-password")
    assert json.loads((opened.folder / "sealed.json").read_text())["version"] == 1


def test_albumen_serve_opens_it(sealed_site, context):
    """`albumen serve`'s HTTP server (with its live-reload script in the page) serves a password album
    that opens as from any host."""
    from albumen.serve.http import SiteServer

    base, _url, opened, _inner = sealed_site
    server = SiteServer(str(base / "site"), port=0)
    server.start()
    try:
        page = new_page(context)
        page.goto(server.url + f"p/{opened.folder.name}/")
        unlock(page)
        page.wait_for_selector("html[data-sealed-state=open]")
        page.wait_for_function("[...document.querySelectorAll('.grid .tile img')].every(i => i.src.startsWith('blob:'))")
        assert page.locator(".grid .tile").count() == 5
    finally:
        server.stop()
