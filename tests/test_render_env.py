"""render.env's link writing and translations against what they were before they were made faster.

relative_url has a fast way for a page's links (its folder's ancestors worked out once); it must say
exactly what the segment-by-segment rule said, which is kept here as it was (old_relative_url), for
every kind of folder and target a page or a description can give it. The templates' gettext and
ngettext are one function each now instead of Jinja's i18n extension's layers: the same templates
must give the same text as with the extension's own callables.
"""

from __future__ import annotations

import random
import re
from urllib.parse import quote

import pytest
from jinja2 import DictLoader, Environment, select_autoescape

from albumen.render import env as render_env
from albumen.render.env import _relative_url_parts, make_environment, relative_url, rooted_url, theme_dirs
from albumen.render.i18n import CATALOGUES, gettext_for, template_gettext

_OLD_SAFE = re.compile(r"^[A-Za-z0-9/._~-]*$")


def old_relative_url(from_dir: str, target: str, links: str = "directory") -> str:
    """relative_url as it was before its fast way (commit 8074b52), word for word."""
    if target.startswith(("http://", "https://", "data:", "mailto:")):
        return target  # ('#x' is the home page's anchor x, like any target: site-root-relative)
    target, hash_, fragment = target.partition("#")
    target, qmark, query = target.partition("?")
    is_dir = target == "" or target.endswith("/")
    parts = [p for p in target.split("/") if p]
    base = [p for p in from_dir.split("/") if p]
    common = 0
    for a, b in zip(base, parts, strict=False):
        if a != b:
            break
        common += 1
    rel = "/".join([".."] * (len(base) - common) + parts[common:])
    if is_dir:
        rel = "./" if not rel else rel + "/"
        if links == "index.html":
            rel = "index.html" if rel == "./" else rel + "index.html"
    elif not rel:
        rel = parts[-1] if parts else "./"
    out = rel if _OLD_SAFE.match(rel) else quote(rel, safe="/._-~")
    if qmark:
        out += "?" + quote(query, safe="=&")
    return out + (hash_ + quote(fragment, safe="-_.") if hash_ else "")


NAMES = [
    "a", "b", "c", "trip", "2024", "2024-07-02 Event 00012", "img-1", "IMG_0001", "800.jpg", "thumb.webp",
    "_albumen", "albumen.css", "index.html", "page", "2", "..", ".", "Été", "日本の旅", "x y", "a%20b", "c&d",
    "q?x", "h#y", "tilde~", "new\nline", "end\n", "plus+", "Ünïcödé", "emoji😀", "semi;colon", "'quote'",
]
TAILS = ["", "", "", "", "?v=0123abcd", "?a=1&b=2", "?é=ü", "#lb-first", "#lb-last", "#tile-img-1", "#frag ment",
         "#é", "?v=1#x", "#a?b", "?", "#"]
EXTERNAL = ["https://example.org/x", "http://a/b c", "data:image/png;base64,AAA=", "mailto:me@example.org"]


def _folder(rng: random.Random) -> str:
    names = [rng.choice(NAMES) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4]))]
    folder = "/".join(names)
    roll = rng.random()
    if roll < 0.03:
        folder = "/" + folder
    elif roll < 0.06:
        folder += "/"
    elif roll < 0.08 and names:
        folder = folder.replace("/", "//", 1) if "/" in folder else folder + "//x"
    return folder


def _target(rng: random.Random, folder: str) -> str:
    roll = rng.random()
    if roll < 0.03:
        return rng.choice(EXTERNAL)
    names = [n for n in folder.split("/") if n]
    if roll < 0.75 and names:  # most links stay near the page: a prefix of its folder, then more
        names = names[: rng.randint(0, len(names))]
    else:
        names = []
    names += [rng.choice(NAMES) for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 3]))]
    target = "/".join(names)
    shape = rng.random()
    if shape < 0.45 and target:
        target += "/"  # a folder (a page)
    elif shape < 0.5:
        target = "/" + target
    elif shape < 0.53 and "/" in target:
        target = target.replace("/", "//", 1)
    elif shape < 0.55:
        target += "//"
    return target + rng.choice(TAILS)


def _cases(count: int, seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        folder = _folder(rng)
        for _ in range(rng.randint(1, 12)):  # several links from one page, as a page has
            cases.append((folder, _target(rng, folder), rng.choice(["directory", "index.html"])))
    return cases


# the shapes the generated cases must hold, so that a change of the generator cannot leave one out
EDGES = [
    ("", "", "directory"), ("", "", "index.html"), ("", "a/", "index.html"), ("a", "a/", "directory"),
    ("a", "a/", "index.html"), ("a/b/c", "a/b", "directory"), ("a/b/c", "a/b/", "directory"),
    ("a/b/c", "a/b/c", "directory"), ("a/b/c", "a", "directory"), ("a/b", "a/b/c/", "index.html"),
    ("a/b", "", "directory"), ("a/b", "", "index.html"), ("a/b", "#x", "directory"), ("a/b", "?v=1", "directory"),
    ("a/b", "a/b/#lb-first", "index.html"), ("a/b", "a/c/?x#y", "index.html"), ("Été/x", "Été/y/800.jpg", "directory"),
    ("Été/x", "Été/x/", "index.html"), ("a/..", "a/../b", "directory"), ("..", "../x/", "directory"),
    ("a", "a/end\n", "directory"), ("a", "b/end\n", "directory"), ("", "end\n", "directory"), ("a", "a/b/", "x"),
    ("/a", "a/b", "directory"), ("a/", "a/b", "directory"), ("a//b", "a/b/c", "directory"), ("a/b", "/a/b/c", "directory"),
    ("a/b", "a//b/c", "directory"), ("a/b", "a/b//", "directory"), ("a", "https://x/y", "directory"),
    ("a/b/c", "a/b?x", "directory"), ("a/b/c", "a/b#c", "directory"), ("a/b", "a/b", "index.html"),
]


def test_relative_url_is_the_rule_on_generated_links():
    cases = _cases(60_000, seed=24) + EDGES
    shapes = {"unicode": 0, "fragment": 0, "query": 0, "dotdot": 0, "empty": 0, "index.html": 0, "under": 0, "up": 0,
              "unclean": 0, "external": 0}
    wrong = []
    for folder, target, links in cases:
        expected = old_relative_url(folder, target, links)
        got = relative_url(folder, target, links)
        if got != expected or _relative_url_parts(folder, target, links) != expected:
            wrong.append((folder, target, links, expected, got))
        shapes["unicode"] += not target.isascii()
        shapes["fragment"] += "#" in target
        shapes["query"] += "?" in target.partition("#")[0]
        shapes["dotdot"] += ".." in target.split("/")
        shapes["empty"] += target == ""
        shapes["index.html"] += links == "index.html" and target.endswith("/")
        shapes["under"] += bool(folder) and target.startswith(folder + "/")
        shapes["up"] += expected.startswith("../")
        shapes["unclean"] += target.startswith("/") or "//" in target.split("?")[0] or folder.endswith("/")
        shapes["external"] += target.startswith(("http", "data:", "mailto:"))
    assert not wrong, f"{len(wrong)} links differ, e.g. {wrong[:5]}"
    assert min(shapes.values()) >= 100, shapes


def test_relative_url_answers_do_not_depend_on_what_came_before():
    """The folders' ancestors are kept between calls (and forgotten past a few thousand): the same
    links asked in another order, with the kept ones dropped midway, give the same answers."""
    cases = _cases(20_000, seed=7)
    first = [relative_url(*case) for case in cases]
    order = list(range(len(cases)))
    random.Random(1).shuffle(order)
    again = {}
    for n, i in enumerate(order):
        if n % 997 == 0:
            render_env._ANCESTORS.clear()
        again[i] = relative_url(*cases[i])
    assert [again[i] for i in range(len(cases))] == first


def test_relative_url_examples():
    assert relative_url("2024/trip/img-1", "2024/trip/img-1/800.jpg") == "800.jpg"
    assert relative_url("2024/trip/img-1", "2024/trip/img-2/") == "../img-2/"
    assert relative_url("2024/trip/img-1", "2024/trip/img-2/", "index.html") == "../img-2/index.html"
    assert relative_url("2024/trip/img-1", "_albumen/albumen.css?v=12ab") == "../../../_albumen/albumen.css?v=12ab"
    assert relative_url("2024/trip/img-1", "") == "../../../"
    assert relative_url("", "") == "./"
    assert relative_url("", "", "index.html") == "index.html"
    assert relative_url("Été", "Été/x y/") == "x%20y/"
    assert relative_url("a", "a/b/#lb-first") == "b/#lb-first"
    assert relative_url("a/b/c", "a/b") == ".."  # the rule's own answer for a file named as a folder above
    assert rooted_url("/gallery/", "trip/x/") == "/gallery/trip/x/"


# -- translations ------------------------------------------------------------------------------

TEMPLATES = {
    "words.html": (
        '{% autoescape false %}{{ _("<b>Bold</b>") }}{% endautoescape %}{{ _("<b>Bold</b>") }}|'
        '{{ _("Skip to content") }}|{{ _("Photos") }}|{{ gettext("Home") }}|{{ _("not in the catalogue <b>") }}|'
        '{{ _("Photo %(n)s of %(total)s", n=n, total=total) }}|{{ _("Made with %(name)s", name=evil) }}|'
        '{{ _("Photo %(n)s of %(total)s", n="%(n)s", total="%(total)s") }}|{{ _("100%% sure") }}|'
        '{{ ngettext("%(num)s photo", "%(num)s photos", n) }}|{{ ngettext("%(num)s album", "%(num)s albums", total) }}|'
        '{{ ngettext("%(num)s video", "%(num)s videos", n, num=evil) }}|{{ _(evil) }}|{{ _(evil) | length }}|'
        '{% set x = 1 %}{% for i in [0, 1, 2] %}{{ _("Next") }}{{ ngettext("%(num)s photo", "%(num)s photos", i) }}{% endfor %}|'
        '{% autoescape false %}{{ _("Made with %(name)s", name=evil) }}{{ _(evil) }}{% endautoescape %}|'
        '{% trans %}Close{% endtrans %}|{% trans name=evil %}Made with {{ name }}{% endtrans %}|'
        '{% trans count=n %}{{ count }} photo{% pluralize %}{{ count }} photos{% endtrans %}|'
        '{{ _("Skip to content") }}{{ _("Photos") }}'
    ),
    "words.txt": (
        '{{ _("Skip to content") }}|{{ _("Made with %(name)s", name=evil) }}|{{ _(evil) }}|{{ _("100%% sure") }}|'
        '{{ ngettext("%(num)s photo", "%(num)s photos", n) }}|{% trans count=n %}{{ count }} photo{% pluralize %}'
        '{{ count }} photos{% endtrans %}|{{ _("Skip to content") }}'
    ),
}


def _jinja_i18n(language: str) -> Environment:
    """The environment as it was: Jinja's extension with gettext_for's callables, new style."""
    env = Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape(["html"], default_for_string=True),
                      extensions=["jinja2.ext.i18n"])
    env.install_gettext_callables(*gettext_for(language), newstyle=True)  # type: ignore[attr-defined]
    return env


def _ours(language: str) -> Environment:
    env = Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape(["html"], default_for_string=True),
                      extensions=["jinja2.ext.i18n"])
    gettext, ngettext = template_gettext(language)
    env.newstyle_gettext = True  # type: ignore[attr-defined]
    env.globals.update(_=gettext, gettext=gettext, ngettext=ngettext, pgettext=None, npgettext=None)
    return env


@pytest.mark.parametrize("language", ["en", "fr", "de"])
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_template_translations_as_jinja_made_them(language, name):
    before, after = _jinja_i18n(language), _ours(language)
    outputs = []
    for n, total, evil in [(0, 1, "<b>&'\""), (1, 2, "Été & co"), (2, 3, "100%% <x>"), (7, 7, "Photos")]:
        old = before.get_template(name).render(n=n, total=total, evil=evil)
        for _ in range(2):  # the second time from what the first kept
            assert after.get_template(name).render(n=n, total=total, evil=evil) == old
        outputs.append(old)
    assert len(set(outputs)) == 4
    assert ("Aller au contenu" in outputs[0]) == (language == "fr")
    assert ("&lt;b&gt;&amp;" in outputs[0]) == name.endswith(".html")
    for make in (_jinja_i18n, _ours):  # a string that is not a format for no keywords fails alike
        with pytest.raises(KeyError, match="x"):
            make(language).get_template(name).render(n=1, total=1, evil="%(x)s")


def test_template_translations_escape_where_jinja_did():
    words = _ours("fr").get_template("words.html").render(n=1, total=2, evil="<i>")
    assert "Fait avec &lt;i&gt;|" in words and "{% autoescape" not in words
    assert "Fait avec <i><i>|" in words  # autoescape false: as the extension left it
    assert "1 photo|" in words and "Suivante0 photoSuivante1 photoSuivante2 photos|" in words
    text = _ours("en").get_template("words.txt").render(n=2, total=2, evil="<i>")
    assert text == "Skip to content|Made with <i>|<i>|100% sure|2 photos|2 photos|Skip to content"


def test_theme_environment_translates_through_one_call():
    env = make_environment(theme_dirs(None), "fr", "directory", "")
    gettext = env.globals["_"]
    assert env.globals["gettext"] is gettext and env.globals["ngettext"] is not None
    assert getattr(gettext, "jinja_pass_arg", None) is not None  # the eval context only: no context copied
    page = env.from_string('{{ _("Photos") }} {{ ngettext("%(num)s photo", "%(num)s photos", 1) }}').render()
    assert page == f"{CATALOGUES['fr']['Photos']} 1 photo"


def test_url_filter_links_each_page_from_its_own_folder():
    """The url filter keeps the links of the page being rendered: pages one after another, in the same
    folder or not, each get their own folder's links (and the 404 page its rooted ones)."""
    from types import SimpleNamespace

    env = make_environment(theme_dirs(None), "en", "index.html", "https://example.org/gal/")
    template = env.from_string("{% for t in targets %}{{ t | url }} {{ t | url }}|{% endfor %}")
    targets = ["", "a/", "a/b/", "a/b/x.jpg", "_albumen/albumen.css?v=1", "a/b/#lb-first", "Été/"]
    pages = [("a/b", "media"), ("a/b", "media"), ("a", "album"), ("", "album"), ("a/b", "404"), ("a/b", "media"),
             ("x/y/z", "stream"), ("", "404")]
    for folder, kind in pages:
        page = SimpleNamespace(dir=folder, kind=kind)
        got = template.render(page=page, targets=targets)
        if kind == "404":
            links = [rooted_url("/gal/", t, "index.html") for t in targets]
        else:
            links = [old_relative_url(folder, t, "index.html") for t in targets]
        assert got == "".join(f"{link} {link}|" for link in links).replace("&", "&amp;"), (folder, kind)
    with pytest.raises(Exception, match="startswith"):  # not a string: the error it always was
        template.render(page=SimpleNamespace(dir="a", kind="media"), targets=[["a"]])


def test_absolute_url_is_the_whole_path_quoted_in_every_case():
    """absolute_url quotes a page's folder once for all the pages in it (memoized) and the last part on
    its own: together, what quoting the whole path gives, for any names (checked on 20,000 random ones)."""
    import random
    from urllib.parse import quote

    from albumen.render.env import absolute_url

    rng = random.Random(3)
    alphabet = "ab /é%#?&~.-_日本😀"
    for _ in range(20000):
        target = "/".join("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(1, 4)))
        target += "/" if rng.random() < 0.5 else ""
        for links in ("directory", "index.html"):
            whole = target + ("index.html" if links == "index.html" and (target == "" or target.endswith("/")) else "")
            assert absolute_url("https://example.org/g/", target, links) == "https://example.org/g/" + quote(whole, safe="/._-~")
    assert absolute_url("", "a b/") == ""
