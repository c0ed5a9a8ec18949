"""Descriptions from sidecars: Markdown with inline HTML (as Sigal galleries write it), sanitized to a
short allow-list; images only of the album's own published photos; links that lead where they should;
plain text where a description feeds metadata (meta and og: tags, alt texts, feed titles)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import feedparser
import pytest
from bs4 import BeautifulSoup

from albumen.render.richtext import Picture, RichText, relative_path, resolve_description
from conftest import build_site, crawl, make_jpeg, soup, write_config

# (case, sidecar body): each is the body of one photo's sidecar in the album Trip, beside a.jpg
HOSTILE = [
    ("script", "<script>alert(1)</script>\n\nafter"),
    ("script-inline", "text <script>alert(1)</script> more"),
    ("onerror", '<img src="nothing.jpg" onerror="alert(1)">'),
    ("onerror-on-photo", '<img src="a.jpg" onerror="alert(1)" onload="alert(2)">'),
    ("handler-on-text", '<b onmouseover="alert(1)">bold</b> <p onclick="alert(2)">para</p>'),
    ("javascript-link", '<a href="javascript:alert(1)">js</a> [md](javascript:alert(2))'),
    ("javascript-case", '<a href="JaVaScRiPt:alert(1)">js</a>'),
    ("data-link", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>'),
    ("data-image", '![x](data:image/png;base64,iVBORw0KGgo=) <img src="data:image/svg+xml,<svg onload=alert(1)>">'),
    ("svg", '<svg onload="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">s</a></svg>after'),
    ("svg-image", '<img src="x.svg"> <svg><image href="https://evil.example/x.png"/></svg>'),
    ("style", '<style>body{display:none}</style><p style="position:fixed;top:0">styled</p>'),
    ("iframe", '<iframe src="https://evil.example/" srcdoc="<script>alert(1)</script>">inside</iframe>after'),
    ("entity-tab", '<a href="jav&#x09;ascript:alert(1)">tab</a>'),
    ("entity-decimal", '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">dec</a>'),
    ("entity-padded", '<a href="javascript&#0000058;alert(1)">pad</a>'),
    ("entity-newline", '<a href="java\nscript:alert(1)">nl</a>'),
    ("base", '<base href="https://evil.example/">base'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=https://evil.example/">meta'),
    ("form", '<form action="https://evil.example/"><input name="pw"><button formaction="x">Go</button></form>'),
    ("picture", '<picture><source srcset="https://evil.example/a.jpg"><img src="a.jpg"></picture>'),
    ("srcset", '<img src="a.jpg" srcset="https://evil.example/x.jpg 2x, //evil.example/y.jpg 3x">'),
    ("protocol-relative", '![pr](//evil.example/a.jpg) <img src="//evil.example/b.jpg">'),
    ("backslash", '<img src="/\\evil.example/a.jpg"> <img src="\\\\evil.example\\a.jpg">'),
    ("rooted", '<img src="/etc/passwd"> <img src="/trip/a.jpg">'),
    ("absolute-image", '![abs](https://evil.example/track.gif)'),
    ("leaving-album", "![up](../Other/o.jpg) ![top](../../a.jpg) ![deep](../Trip/../Other/o.jpg)"),
    ("private-image", "![secret](../Secret/s.jpg)"),
    ("private-link", "[secret album](../Secret/) [secret photo](../Secret/s.jpg)"),
    ("source-file", "![source](a.jpg)"),
    ("target-rel", '<a href="https://example.org/" target="_blank" rel="opener">out</a>'),
    ("noscript", "<noscript><p>hidden</p></noscript>after"),
    ("comment", "<!-- <script>alert(1)</script> -->after"),
    ("object", '<object data="https://evil.example/x.swf"><embed src="https://evil.example/x.swf"></object>'),
    ("details", '<details open ontoggle="alert(1)"><summary>s</summary>d</details>'),
    ("link-tag", '<link rel="stylesheet" href="https://evil.example/x.css">link'),
    ("mixed-quotes", '<a href="https://example.org/" title=\'x" onmouseover="alert(1)\'>q</a>'),
    ("unclosed", '<a href="https://example.org/">open <em>em'),
    ("broken-tag", '<img src=a.jpg <script>alert(1)</script>'),
    ("template", "<template><img src=x onerror=alert(1)></template>after"),
    ("math", '<math><mi xlink:href="javascript:alert(1)">m</mi></math>after'),
]
CASE = {name: f"c{n:02d}" for n, (name, _) in enumerate(HOSTILE)}  # case -> photo slug (and sidecar name)
TEXT_ONLY = {"noscript", "iframe", "comment", "template", "svg", "math", "script"}  # nothing of them is shown as text

ALLOWED = {
    "a": {"href", "title", "rel"}, "img": {"src", "alt", "title", "width", "height", "loading", "decoding"},
    "abbr": {"title"}, "ol": {"start"},
    **{tag: set() for tag in ("b", "blockquote", "br", "cite", "code", "dd", "del", "dl", "dt", "em", "h1", "h2",
                              "h3", "h4", "h5", "h6", "hr", "i", "ins", "kbd", "li", "mark", "p", "pre", "q", "s",
                              "small", "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th",
                              "thead", "tr", "u", "ul")},
}


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("hostile")
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "a.jpg", size=(1600, 1200), date="2024:07:01 10:00:00")
    for n, (_, body) in enumerate(HOSTILE):
        make_jpeg(src / "Trip" / f"c{n:02d}.jpg", date=f"2024:07:02 10:{n:02d}:00")
        (src / "Trip" / f"c{n:02d}.md").write_text(f"Title: case {n}\n\n{body}\n")
    make_jpeg(src / "Other" / "o.jpg", date="2024:06:01 10:00:00")
    make_jpeg(src / "Secret" / "s.jpg", date="2024:06:01 10:00:00")
    (src / "Secret" / "index.md").write_text("Private: true\n\nThe family.\n")
    make_jpeg(src / "a.jpg")  # a photo of the top album, not of Trip
    site = tmp_path / "site"
    conf = 'url = "https://photos.example.org/"\n[feeds]\nitems = 200\n'
    result = build_site(src, site, "-c", str(write_config(tmp_path, conf)))
    return site, result


def _check_fragment(site: Path, page_dir: str, fragment: BeautifulSoup, where: str) -> None:
    """A description as a page shows it: only allowed tags and attributes, links and images that lead
    to the site's own published files (or to http(s) and mailto addresses)."""
    for tag in fragment.find_all(True):
        assert tag.name in ALLOWED, (where, str(tag))
        assert set(tag.attrs) <= ALLOWED[tag.name], (where, str(tag))
        for attr in ("href", "src"):
            value = tag.get(attr)
            if value is None:
                continue
            parts = urlsplit(value)
            assert "\\" not in value and not value.startswith("//"), (where, value)
            if parts.scheme:
                if parts.netloc == "photos.example.org":  # a feed's absolute URL to the site itself
                    value = parts.path.removeprefix("/")
                    page_dir = ""
                else:
                    assert attr == "href" and parts.scheme in ("http", "https", "mailto"), (where, value)
                    assert tag.get("rel") == ["noopener", "nofollow"] or parts.scheme == "mailto", (where, str(tag))
                    continue
            assert not value.startswith("/"), (where, value)
            target = (site / page_dir / unquote(value)).resolve()
            if value.endswith("/"):
                target = target / "index.html"
            assert target.is_file() and site.resolve() in target.parents, (where, value)
            if attr == "src":  # a published image of Trip/a.jpg, never the source file, nor another album's
                assert tag.name == "img" and target.parent == (site / "trip" / "a").resolve(), (where, value)
                assert re.fullmatch(r"a\.\d+w\.[0-9a-f]+\.jpg", target.name), (where, value)
            else:
                assert "p/" not in str(target.relative_to(site.resolve()))[:2], (where, value)  # no private link


def test_hostile_sidecars_are_rendered_harmless_everywhere(hostile_site):
    site, result = hostile_site
    album = soup(site / "trip" / "index.html")
    viewer = {item["n"]: item for item in json.loads(album.select_one("#albumen-items").string)}
    atom = feedparser.parse((site / "feed.xml").read_bytes())
    rss = feedparser.parse((site / "rss.xml").read_bytes())
    assert not atom.bozo and not rss.bozo
    atom_by_title = {e.title: e for e in atom.entries}
    rss_by_title = {e.title: e for e in rss.entries}
    for n, (case, _) in enumerate(HOSTILE):
        slug = f"c{n:02d}"
        page = soup(site / "trip" / slug / "index.html")
        # the whole page: no script but the theme's, no handler, no base, no refresh, no frame
        for script in page.find_all("script"):
            assert script.get("src", "").startswith("../../static/") or script.get("type") == "application/json", case
        for tag in page.find_all(True):
            assert not any(a.lower().startswith("on") for a in tag.attrs), (case, str(tag)[:200])
        assert page.find("base") is None and page.find("meta", attrs={"http-equiv": True}) is None, case
        assert page.find(["iframe", "object", "embed", "form", "input"]) is None, case
        description = page.select_one(".photo-caption .description")
        shown = [("page", f"trip/{slug}", description)] if description is not None else []
        index = next(i for i, m in viewer.items() if m["t"] == f"case {n}")
        shown.append(("viewer", "trip", BeautifulSoup(viewer[index]["d"], "html.parser")))
        for where, entry in (("atom", atom_by_title[f"case {n}"]), ("rss", rss_by_title[f"case {n}"])):
            content = BeautifulSoup(entry.summary, "html.parser")
            content.p.decompose()  # the thumbnail linking to the photo's page, then the description
            shown.append((where, "", content))
        for where, folder, fragment in shown:
            _check_fragment(site, folder, fragment, f"{case} ({where})")
            if case in TEXT_ONLY:  # neither run nor shown as text
                text = fragment.get_text()
                assert not re.search("<|alert|hidden|inside", text), (case, where, text)
        meta = page.find("meta", attrs={"name": "description"})
        if meta is not None and case != "broken-tag":  # (CommonMark reads that one's '<img src=a.jpg' as text)
            assert not re.search(r"<\s*/?[a-zA-Z!]", meta["content"]), (case, meta["content"])  # no tag as text
    assert crawl(site).broken == []
    # what was left out is said, naming the sidecar
    assert f"Trip/{CASE['source-file']}.md: image" not in result.stderr  # the album's own photo is shown
    assert (f"warning: Trip/{CASE['private-image']}.md: image '../Secret/s.jpg' is not a published photo of this "
            "album") in result.stderr
    assert (f"warning: Trip/{CASE['private-link']}.md: link '../Secret/' leads to no photo or album of the "
            "gallery") in result.stderr


def test_a_sidecar_image_shows_the_published_photo_of_its_album(hostile_site):
    site, _ = hostile_site
    slug = CASE["source-file"]  # "![source](a.jpg)"
    page = soup(site / "trip" / slug / "index.html")
    img = page.select_one(".photo-caption .description img")
    assert img is not None and img["alt"] == "source"
    assert img["src"].startswith("../a/a.1024w.") and (img["width"], img["height"]) == ("1024", "768")
    assert (site / "trip" / slug / img["src"]).is_file()
    assert not list(site.rglob("a.jpg"))  # the source file is never published by it
    # the same description in the album's viewer links from the album's page
    album = soup(site / "trip" / "index.html")
    items = json.loads(album.select_one("#albumen-items").string)
    shown = BeautifulSoup(next(i["d"] for i in items if i["t"] == f"case {int(slug[1:])}"), "html.parser").img
    assert shown["src"].startswith("a/a.1024w.") and (site / "trip" / shown["src"]).is_file()
    # other albums, private ones, other hosts, the server's root: nothing shown
    for case in ("leaving-album", "private-image", "protocol-relative", "absolute-image", "rooted", "backslash"):
        assert soup(site / "trip" / CASE[case] / "index.html").select(".description img") == [], case


SIGAL = """Title: Lisbon
Author: Ana

Photos by <a href="https://example.org/ana">Ana</a>, <em>summer</em> <strong>2019</strong>.<br>
See <a href="https://en.wikipedia.org/wiki/Lisbon">Lisbon</a> &amp; <i>Sintra</i>.

<p>A <b>second</b> paragraph, as HTML.</p>
"""


def test_sigal_sidecar_links_and_emphasis_are_rendered_as_such(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Lisbon" / "tram.jpg", size=(1600, 1200), date="2019:07:01 10:00:00")
    (src / "Lisbon" / "index.md").write_text(SIGAL)
    (src / "Lisbon" / "tram.md").write_text(
        'A <a href="https://example.org/tram">tram</a> in <em>Alfama</em>, near [the album](./) and '
        "[itself](tram.jpg)\n"
    )
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://photos.example.org/"\n')))
    header = soup(site / "lisbon" / "index.html").select_one(".album-header .description")
    links = {a.get_text(): a for a in header.select("a")}
    assert set(links) == {"Ana", "Lisbon"}
    assert links["Ana"]["href"] == "https://example.org/ana" and links["Ana"]["rel"] == ["noopener", "nofollow"]
    assert [e.get_text() for e in header.select("em")] == ["summer"]
    assert [e.get_text() for e in header.select("strong, b, i")] == ["2019", "Sintra", "second"]
    assert header.select("br") and len(header.select("p")) == 2
    assert "<" not in header.get_text() and "Lisbon & Sintra" in header.get_text()
    # the photo's description: relative links lead to the album's and the photo's own pages
    photo = soup(site / "lisbon" / "tram" / "index.html")
    description = photo.select_one(".photo-caption .description")
    hrefs = {a.get_text(): a["href"] for a in description.select("a")}
    assert hrefs == {"tram": "https://example.org/tram", "the album": "../", "itself": "./"}
    # where the description becomes text: meta, og: and twitter: descriptions, the alt text, feed titles
    text = "A tram in Alfama, near the album and itself"
    assert photo.find("meta", attrs={"name": "description"})["content"] == text
    assert photo.find("meta", attrs={"property": "og:description"})["content"] == text
    assert photo.find("meta", attrs={"name": "twitter:description"})["content"] == text
    assert photo.select_one("img.photo-image")["alt"] == text
    album = soup(site / "lisbon" / "index.html")
    assert album.find("meta", attrs={"name": "description"})["content"] == (
        "Photos by Ana, summer 2019. See Lisbon & Sintra. A second paragraph, as HTML.")
    feed = feedparser.parse((site / "feed.xml").read_bytes())
    entry = feed.entries[0]
    assert entry.title == text
    content = BeautifulSoup(entry.summary, "html.parser")
    assert {a.get_text(): a["href"] for a in content.select("a") if a.get_text()} == {
        "tram": "https://example.org/tram", "the album": "https://photos.example.org/lisbon/",
        "itself": "https://photos.example.org/lisbon/tram/"}
    assert crawl(site).broken == []


def test_relative_references_stay_inside_the_photo_folder():
    assert relative_path("Trip", "a.jpg") == "Trip/a.jpg"
    assert relative_path("Trip", "./a%20b.jpg") == "Trip/a b.jpg"
    assert relative_path("Trip", "../Other/") == "Other"
    assert relative_path("Trip", "..") == ""
    assert relative_path("", "../x.jpg") is None
    assert relative_path("Trip", "../../x.jpg") is None
    for ref in ("//evil.example/x.jpg", "/x.jpg", "/\\evil.example/x", "a\\b.jpg", "https://x.org/a.jpg",
                "javascript:alert(1)", "", "a.jpg%00.png"):
        assert relative_path("Trip", ref) is None, ref


def test_a_description_links_from_the_page_that_shows_it():
    text = resolve_description(
        '<p><a href="b.jpg">b</a> <img src="a.jpg" alt=""> <a href="#x">x</a> <a href="nowhere">n</a></p>',
        "trip/a", "directory",
        picture=lambda ref: Picture("trip/a/a.640w.1.jpg", 640, 480, "alt") if ref == "a.jpg" else None,
        page=lambda ref: "trip/b/" if ref == "b.jpg" else None,
    )
    assert isinstance(text, RichText)
    assert str(text) == ('<p><a href="../b/">b</a> <img src="a.640w.1.jpg" width="640" height="480" alt="alt" '
                         'loading="lazy" decoding="async"> <a href="#x">x</a> n</p>')
    assert str(text.render(lambda target: "https://x.org/" + target)).startswith('<p><a href="https://x.org/trip/b/">')
    assert not RichText(("",)) and text


def _levels(fragment) -> list[int]:
    return [int(h.name[1]) for h in fragment.find_all(re.compile(r"^h[1-6]$"))]


def _skips(levels: list[int]) -> list[int]:
    """The positions of headings more than one level below the heading before them (the page's h1 first)."""
    return [i for i, (before, level) in enumerate(zip([0, *levels], levels, strict=False)) if level > before + 1]


def test_sidecar_headings_never_skip_a_level_after_the_pages_own(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "a.jpg", date="2024:07:01 10:00:00")
    make_jpeg(src / "Trip" / "b.jpg", date="2024:07:02 10:00:00")
    (src / "Trip" / "index.md").write_text(
        "Title: Trip\n\n### Where\n\nThe coast.\n\n##### Detail\n\nx\n\n# Top again\n\n## Under it\n\n"
        "<h4>as HTML</h4>\n")
    (src / "Trip" / "a.md").write_text("Title: A\n\n### Notes\n\n###### Deep\n\n<h2 title='t'>two</h2>\n")
    site = tmp_path / "site"
    build_site(src, site)
    album = soup(site / "trip" / "index.html")
    description = album.select_one(".album-header .description")
    assert _levels(description) == [2, 3, 2, 3, 4]  # ###, #####, #, ##, <h4>
    assert [h.get_text() for h in description.find_all(re.compile("^h"))] == [
        "Where", "Detail", "Top again", "Under it", "as HTML"]
    assert _levels(album)[0] == 1 and _skips(_levels(album)) == []
    photo = soup(site / "trip" / "a" / "index.html")
    assert _levels(photo.select_one(".photo-caption .description")) == [2, 3, 2]
    assert _levels(photo)[0] == 1 and _skips(_levels(photo)) == []
    # the viewer: the description follows the photo's title, an h2 under the page's h1
    items = json.loads(album.select_one("#albumen-items").string)
    shown = BeautifulSoup(next(item["d"] for item in items if item["t"] == "A"), "html.parser")
    assert _levels(shown) == [3, 4, 3]
    assert _skips([1, 2, *_levels(shown)]) == []
    assert _skips([1, 2, 3, 6]) == [3]  # the check itself


def test_headings_are_renumbered_in_document_order():
    text = resolve_description("<h3>a</h3><p>x</p><h5>b</h5><h1>c</h1><h2>d</h2><h6>e</h6><h4>f</h4>",
                               "", "directory", lambda ref: None, lambda ref: None)
    assert str(text) == "<h2>a</h2><p>x</p><h3>b</h3><h2>c</h2><h3>d</h3><h4>e</h4><h4>f</h4>"
    assert str(text.render(str, depth=1)) == "<h3>a</h3><p>x</p><h4>b</h4><h3>c</h3><h4>d</h4><h5>e</h5><h5>f</h5>"
    deep = resolve_description("<h1>1</h1><h2>2</h2><h3>3</h3><h4>4</h4><h5>5</h5><h6>6</h6>", "", "directory",
                               lambda ref: None, lambda ref: None)
    assert str(deep.render(str, depth=1)) == "<h3>1</h3><h4>2</h4><h5>3</h5><h6>4</h6><h6>5</h6><h6>6</h6>"
    # text that reads like a tag stays text
    assert str(resolve_description("<h3>&lt;h1&gt;</h3>", "", "directory", lambda r: None, lambda r: None)) == (
        "<h2>&lt;h1&gt;</h2>")
