"""A random walk of changes rebuilt into one output and one cache: after every step, the site is,
file for file and byte for byte, the site a clean build of the same photos makes.

test_incremental_tree checks one change at a time. Here a seeded sequence of changes (photos added,
deleted, edited, captioned, moved and touched; albums added, removed, renamed, retitled, redated,
given a cover, made private and public again) goes into the same output and cache, so that a mistake one
step leaves in the cache (an album's count, dates or cover, a stream page, a feed, the sitemap, a
stale file, a private album's link) shows in a later step. After each step the output is compared
with a clean build of a copy of the photo folder into an empty output, with an empty cache of its
own and the same secret (so private albums get the same p/<token>/ folders). The builds' -v
summaries are checked too, against each other and against a model of the photo folder kept by the
test (counts, warnings, what a touch or no change should do), and so are the feeds and the sitemap
(which photos, newest first) and what the public side of the site says of private albums.

A failure names the seed and the steps so far: replay them with that seed alone
(pytest -k 'walk and SEED'). Each step costs a clean build (~0.6 s, most of it fixed), so the walks
are short; to search wider, raise SEEDS and STEPS locally (30 seeds of 14 steps: ~5 minutes). The
three seeds were picked among the first twelve so that, between them, the walks catch each mistake
put on purpose into render/albumkeys.py, render/pages.py, render/stream.py, write/stale.py and
scan/arrange.py (an album's count, dates, folder or sub-album covers left out of its fingerprint,
the stream's or the album feeds' keys blind to their photos, stale files left, a kept album's
sitemap rows dropped, private albums linked or streamed): other seeds walk elsewhere, and catch less.
"""

from __future__ import annotations

import difflib
import os
import random
import re
import shutil
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import build_site, is_text, make_jpeg, write_config
from test_incremental_tree import pages, rendered

BASE = "https://example.org/gallery/"
CONFIG = f"""url = "{BASE}"
timezone = "UTC"
[stream]
page_size = 3
[feeds]
items = 3
per_album = true
[pages]
page_size = 3
[images]
sizes = [320]
[thumbnails]
height = 40
"""
FEED_ITEMS = 3
STEPS = 10
SEEDS = [1, 2, 3]  # (among the first 12, three that each catch mistakes the others miss)

# Folder names, titles and caption words are all different words, so that a leak check of one
# private album's names cannot be set off by another album's.
START = {  # album folder -> (stem prefix, photos)
    "Trips": ("trp", 2),
    "Trips/Alps": ("alp", 3),
    "Trips/Alps/Summit": ("sum", 2),
    "Trips/Beach": ("sea", 3),
    "Seasons/Winter": ("win", 2),  # Seasons has no photo of its own: its cover is a descendant's
    "Seasons/Winter/Snow": ("sno", 2),
    "Seasons/Spring": ("spr", 3),
    "City": ("cty", 3),
    "Family": ("fam", 2),
    "Cottage": ("cot", 1),
    "Archive/Attic/Boxes": ("box", 2),  # Archive and Attic show Boxes' cover
}
NEW_ALBUMS = ["Harbor", "Forest", "Desert", "Island", "Market", "Valley", "Meadow", "Canyon"]
WORDS = ["Lantern", "Pebble", "Mosaic", "Orchard", "Ripple", "Velvet", "Quartz", "Saffron"]
SIZES = [(48, 36), (36, 48), (40, 40), (60, 30)]
EPOCH = datetime(2024, 1, 1, 8, 0, 0)


@dataclass
class Photo:
    date: datetime
    size: tuple[int, int]
    color: tuple[int, int, int]
    caption: str | None = None  # the Title of its sidecar (name.md), if it has one


@dataclass
class AlbumMeta:
    """What an album's index.md says (no index.md when it says nothing)."""
    title: str | None = None
    description: str | None = None
    date: str | None = None  # 'YYYY-MM-DD'
    thumbnail: str | None = None  # a file name in the album
    private: bool = False

    def text(self) -> str | None:
        head = [f"{key}: {value}" for key, value in (
            ("Title", self.title), ("Date", self.date), ("Thumbnail", self.thumbnail),
            ("Private", "true" if self.private else None)) if value]
        if not head and not self.description:
            return None
        return "\n".join(head) + "\n\n" + (self.description + "\n" if self.description else "")


def parent(uri: str) -> str:
    return uri.rpartition("/")[0]


def slug(uri: str) -> str:
    return uri.lower()


@dataclass
class Walk:
    """The photo folder and what the test knows of it: every change goes through here."""
    src: Path
    site: Path  # the site built from it, where the covers are read
    rng: random.Random
    photos: dict[str, Photo] = field(default_factory=dict)  # 'Trips/Alps/alp03.jpg' -> Photo
    albums: dict[str, AlbumMeta] = field(default_factory=dict)  # every album folder but the root
    counter: int = 0
    clock: float = 0.0  # modification times handed out, one second apart, newer than any before
    expect_quiet: bool = False  # the step changed nothing a page shows (a touch, nothing at all)

    # -- the photo folder ---------------------------------------------------------------------

    def start(self) -> None:
        self.clock = time.time() - 10**6  # (in the past: a build may not trust a time still to come)
        for folder in ("Seasons", "Archive", "Archive/Attic", *START):
            self.albums[folder] = AlbumMeta()
        self.albums["Trips"] = AlbumMeta(title="Trips away", description="Where we went.")
        self.albums["Seasons"] = AlbumMeta(title="Seasons of it")
        self.albums["Family"] = AlbumMeta(title="Kinfolk gathering", description="Only for us.", private=True)
        self.albums["Trips/Alps"] = AlbumMeta(date="2024-02-01")
        for folder, (prefix, n) in START.items():
            for _ in range(n):
                self.new_photo(folder, prefix)
        self.albums["City"].thumbnail = self.own("City")[1].rpartition("/")[2]
        for folder in self.albums:
            self.write_index(folder)
        self.caption(next(p for p in self.photos if p.startswith("Trips/Alps/")), "Above the clouds")

    def stamp(self, path: Path) -> None:
        """Each file written or touched gets a modification time of its own (a fast test could
        otherwise write a file twice within the file system's clock tick)."""
        self.clock += 1
        os.utime(path, (self.clock, self.clock))

    def new_date(self, near: datetime | None = None) -> datetime:
        """A date no other photo has (near `near`): often the newest of all (it leads the stream and
        the feeds)."""
        taken = {p.date for p in self.photos.values()}
        if near:
            date = near
        elif self.photos and self.rng.random() < 0.4:
            date = max(taken) + timedelta(hours=self.rng.randint(1, 72))
        else:
            date = EPOCH + timedelta(minutes=self.rng.randrange(0, 300 * 24 * 60))
        while date in taken:
            date += timedelta(minutes=1)
        return date

    def write_photo(self, uri: str) -> None:
        p = self.photos[uri]
        make_jpeg(self.src / uri, size=p.size, color=p.color, date=p.date.strftime("%Y:%m:%d %H:%M:%S"))
        self.stamp(self.src / uri)

    def new_photo(self, folder: str, prefix: str | None = None) -> str:
        self.counter += 1
        prefix = prefix or (folder.rpartition("/")[2][:3].lower() if folder else "top")
        uri = f"{folder}/{prefix}{self.counter:02d}.jpg" if folder else f"{prefix}{self.counter:02d}.jpg"
        self.photos[uri] = Photo(self.new_date(), self.rng.choice(SIZES),
                                 tuple(self.rng.randrange(256) for _ in range(3)))
        self.write_photo(uri)
        return uri

    def sidecar(self, uri: str) -> Path:
        return (self.src / uri).with_suffix(".md")

    def caption(self, uri: str, text: str | None) -> None:
        self.photos[uri].caption = text
        if text is None:
            self.sidecar(uri).unlink()
        else:
            self.sidecar(uri).write_text(f"Title: {text}\n\nSeen by the {self.word()} light.\n")
            self.stamp(self.sidecar(uri))

    def write_index(self, folder: str) -> None:
        index = self.src / folder / "index.md"
        text = self.albums[folder].text()
        if text is None:
            index.unlink(missing_ok=True)
        else:
            index.parent.mkdir(parents=True, exist_ok=True)
            index.write_text(text)
            self.stamp(index)

    def word(self) -> str:
        self.counter += 1
        return f"{self.rng.choice(WORDS)} {self.counter:02d}"

    # -- the model ------------------------------------------------------------------------------

    def own(self, folder: str) -> list[str]:
        return sorted(u for u in self.photos if parent(u) == folder)

    def kids(self, folder: str) -> list[str]:
        return sorted(a for a in self.albums if parent(a) == folder)

    def below(self, folder: str) -> list[str]:
        return [u for u in self.photos if not folder or u.startswith(folder + "/")]

    def linked(self, folder: str) -> list[str]:
        """The photos an album counts and its feed shows: its own and its public sub-albums'."""
        out = self.own(folder)
        for kid in self.kids(folder):
            if not self.albums[kid].private:
                out += self.linked(kid)
        return out

    def published(self) -> list[str]:
        """The albums with pages: the home page, and each album with something of its own to show."""
        return [""] + [a for a in self.albums if self.linked(a)]

    def zone(self, folder: str) -> str | None:
        """The private album that folder is in (itself or an album above it), if any."""
        while folder:
            if self.albums[folder].private:
                return folder
            folder = parent(folder)
        return None

    def public(self) -> list[str]:
        return [u for u in self.photos if self.zone(parent(u)) is None]

    def page(self, uri: str) -> str:
        """A photo's page or an album's, as the feeds and the sitemap name it."""
        uri = uri.removesuffix(".jpg")
        return BASE + (slug(uri) + "/" if uri else "")

    def newest(self, photos: list[str]) -> list[str]:
        return [self.page(u) for u in sorted(photos, key=lambda u: self.photos[u].date, reverse=True)[:FEED_ITEMS]]

    def title(self, folder: str) -> str:
        return self.albums[folder].title or folder.rpartition("/")[2]

    def warnings(self) -> list[str]:
        """An index.md naming a thumbnail that is not in its album (deleted or moved away), or is
        behind another private link (its album or one between was made private, or public)."""
        def shown(folder: str, uri: str) -> bool:
            return uri in self.photos and self.zone(parent(uri)) == self.zone(folder)

        return sorted(f"{folder}/index.md: thumbnail '{meta.thumbnail}'" for folder, meta in self.albums.items()
                      if meta.thumbnail and self.below(folder) and not shown(folder, f"{folder}/{meta.thumbnail}"))

    # -- the steps: each changes the photo folder and says what it did --------------------------

    def pick_album(self, with_photos: bool = False, root: bool = False) -> str | None:
        """An album, the deeper the likelier: a change deep down must reach every album above it."""
        choices = sorted(a for a in self.albums if self.own(a)) if with_photos else sorted(self.albums)
        if root and (not with_photos or self.own("")):
            choices.append("")
        return self.rng.choices(choices, [1 + a.count("/") + bool(a) for a in choices])[0] if choices else None

    def covers(self, inherited: bool = False) -> list[str]:
        """The photos the public album pages show on their sub-albums' cards, or only those a card
        shows from deeper down than its album (as Seasons' cover is one of Winter's or Spring's): a
        change there must reach every album above."""
        stems = {u.rpartition("/")[2].removesuffix(".jpg"): u for u in self.photos}
        out = set()
        for page in self.site.rglob("index.html"):
            if not page.relative_to(self.site).as_posix().startswith("p/"):
                for href, img in CARD.findall(page.read_text(encoding="utf-8")):
                    uri = stems.get(img.split("/")[-2]) if "/" in img else None
                    if uri and (not inherited or img.rsplit("/", 2)[0] + "/" != href):
                        out.add(uri)
        return sorted(out)

    def pick_cover(self) -> str:
        return self.rng.choice(self.covers(inherited=True) or self.covers() or sorted(self.photos))

    def pick_photo(self) -> str:
        return self.rng.choice(self.own(self.pick_album(with_photos=True, root=True)))

    def add_photo(self) -> str:
        folder = self.pick_album(root=self.rng.random() < 0.15)
        uri = self.new_photo(folder)
        return f"add_photo {uri} ({self.photos[uri].date})"

    def delete_photo(self) -> str:
        if len(self.photos) < 8:
            return self.add_photo()
        how = self.rng.choice(["thumbnail", "newest", "any"])
        named = sorted(f"{a}/{m.thumbnail}" for a, m in self.albums.items() if f"{a}/{m.thumbnail}" in self.photos)
        if how == "thumbnail" and named:  # the cover index.md names: a warning from now on
            uri = self.rng.choice(named)
        elif how == "newest":
            uri = max(self.photos, key=lambda u: self.photos[u].date)
        else:
            uri = self.pick_photo()
        self.remove(uri)
        return f"delete_photo {uri} ({how})"

    def delete_cover(self) -> str:
        """A cover shown from deeper down deleted: the next photo or album down covers every album above."""
        if len(self.photos) < 8:
            return self.add_photo()
        uri = self.pick_cover()
        self.remove(uri)
        return f"delete_cover {uri}"

    def remove(self, uri: str) -> None:
        (self.src / uri).unlink()
        if self.photos.pop(uri).caption is not None:
            self.sidecar(uri).unlink()

    def empty_album(self) -> str:
        """Every photo of the album with the fewest is deleted: it disappears (unless it has
        sub-albums), its index.md stays."""
        if len(self.photos) < 10:
            return self.add_photo()
        folder = min((a for a in self.albums if self.own(a)), key=lambda a: (len(self.own(a)), a))
        for uri in self.own(folder):
            self.remove(uri)
        return f"empty_album {folder}"

    def edit_photo(self) -> str:
        uri = self.pick_photo()
        p = self.photos[uri]
        p.date, p.color = self.new_date(), tuple(self.rng.randrange(256) for _ in range(3))
        self.write_photo(uri)
        return f"edit_photo {uri} ({p.date})"

    def retouch_cover(self) -> str:
        """New pixels, the same date (the same place in every order): a cover shown from deeper
        down gets a new name on every album page above."""
        uri = self.pick_cover()
        self.photos[uri].color = tuple(self.rng.randrange(256) for _ in range(3))
        self.write_photo(uri)
        return f"retouch_cover {uri}"

    def redate_deep(self) -> str:
        """A photo's new date just past the dates of the album above its own: the dates of its
        album and of that one change, maybe not those higher up."""
        uri = self.pick_photo()
        above = parent(parent(uri))
        dates = [self.photos[u].date for u in self.below(above)]
        p = self.photos[uri]
        p.date = self.new_date(self.rng.choice([min(dates) - timedelta(hours=5), max(dates) + timedelta(hours=5)]))
        self.write_photo(uri)
        return f"redate_deep {uri} ({p.date}, past the dates of {above or '(home)'})"

    def edit_caption(self) -> str:
        uri = self.pick_photo()
        had = self.photos[uri].caption
        text = None if had is not None and self.rng.random() < 0.4 else self.word()
        self.caption(uri, text)
        return f"caption {uri}: {had!r} -> {text!r}"

    def edit_album(self) -> str:
        folder = self.pick_album()
        meta = self.albums[folder]
        what = self.rng.choice(["title", "description", "date", "thumbnail"])
        if what == "title":
            meta.title = None if meta.title and self.rng.random() < 0.3 else f"{folder.rpartition('/')[2]} {self.word()}"
            new = meta.title
        elif what == "description":
            meta.description = f"About {self.word()}." if self.rng.random() < 0.7 else None
            new = meta.description
        elif what == "date":  # an album's date orders it among its siblings (newest first)
            meta.date = (EPOCH + timedelta(days=self.rng.randrange(400))).strftime("%Y-%m-%d") \
                if self.rng.random() < 0.7 else None
            new = meta.date
        else:  # a photo of the album or of an album below it: the cover of every album above from there
            below = sorted(self.below(folder))
            meta.thumbnail = self.rng.choice(below)[len(folder) + 1:] if below and self.rng.random() < 0.8 else None
            new = meta.thumbnail
        self.write_index(folder)
        return f"edit_album {folder or '(home)'} {what} -> {new!r}"

    def add_album(self) -> str:
        names = [n for n in NEW_ALBUMS if not any(a.rpartition("/")[2] == n for a in self.albums)]
        if not names:
            return self.add_photo()
        where = self.rng.choice(["", *sorted(a for a in self.albums if a.count("/") < 2)])
        folder = f"{where}/{names[0]}" if where else names[0]
        self.albums[folder] = AlbumMeta(title=f"{names[0]} {self.word()}" if self.rng.random() < 0.5 else None)
        self.write_index(folder)
        for _ in range(self.rng.randint(1, 3)):
            self.new_photo(folder)
        return f"add_album {folder} ({len(self.own(folder))} photos)"

    def remove_album(self) -> str:
        if len(self.photos) < 10:
            return self.add_album()
        folder = self.rng.choice(sorted(self.albums))
        shutil.rmtree(self.src / folder)
        for uri in self.below(folder):
            del self.photos[uri]
        for gone in [a for a in self.albums if a == folder or a.startswith(folder + "/")]:
            del self.albums[gone]
        return f"remove_album {folder}"

    def rename_album(self) -> str:
        """An album folder renamed, sub-albums and all: its photos' outputs move to new names."""
        names = [n for n in NEW_ALBUMS if not any(a.rpartition("/")[2] == n for a in self.albums)]
        if not names:
            return self.add_photo()
        folder = self.pick_album()
        to = f"{parent(folder)}/{names[0]}" if parent(folder) else names[0]
        (self.src / folder).rename(self.src / to)

        def moved(uri: str) -> str:
            return to + uri[len(folder):] if uri == folder or uri.startswith(folder + "/") else uri

        self.photos = {moved(u): p for u, p in self.photos.items()}
        self.albums = {moved(a): m for a, m in self.albums.items()}
        return f"rename_album {folder} -> {to}"

    def toggle_private(self) -> str:
        marked = [a for a in self.albums if self.albums[a].private]
        folder = self.rng.choice(sorted(marked)) if marked and self.rng.random() < 0.5 \
            else self.rng.choice(sorted(self.albums))
        meta = self.albums[folder]
        meta.private = not meta.private
        self.write_index(folder)
        return f"toggle_private {folder} -> {meta.private}"

    def move_photo(self) -> str:
        uri = self.pick_photo()
        folder = self.rng.choice(sorted(a for a in self.albums if a != parent(uri)))
        to = f"{folder}/{uri.rpartition('/')[2]}"
        (self.src / folder).mkdir(parents=True, exist_ok=True)
        (self.src / uri).rename(self.src / to)
        if self.photos[uri].caption is not None:
            self.sidecar(uri).rename(self.sidecar(to))
        self.photos[to] = self.photos.pop(uri)
        return f"move_photo {uri} -> {to}"

    def touch(self) -> str:
        """A new modification time, the same bytes: nothing to make or render."""
        files = sorted(p for p in self.src.rglob("*") if p.is_file())
        path = self.rng.choice(files)
        self.stamp(path)
        self.expect_quiet = True
        return f"touch {path.relative_to(self.src).as_posix()}"

    def nothing(self) -> str:
        self.expect_quiet = True
        return "nothing"


KINDS = [Walk.add_photo, Walk.delete_photo, Walk.delete_cover, Walk.empty_album, Walk.edit_photo, Walk.retouch_cover,
         Walk.redate_deep, Walk.edit_caption, Walk.edit_album, Walk.add_album, Walk.remove_album, Walk.rename_album,
         Walk.toggle_private, Walk.move_photo, Walk.touch, Walk.nothing]
WEIGHTS = [3, 2, 2, 1, 1, 2, 2, 2, 3, 1, 1, 1, 2, 3, 1, 1]


# -- comparing and checking -----------------------------------------------------------------------

def tree(site: Path) -> tuple[dict[str, bytes], set[str]]:
    """Every file under site -> its bytes, and every folder."""
    files, folders = {}, set()
    for p in site.rglob("*"):
        name = p.relative_to(site).as_posix()
        if p.is_dir():
            folders.add(name + "/")
        else:
            files[name] = p.read_bytes()
    return files, folders


def differences(got: dict[str, bytes], want: dict[str, bytes]) -> str:
    """Which files differ, and the first lines of what differs in the first few text files."""
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    differ = sorted(n for n in set(got) & set(want) if got[n] != want[n])
    if not (missing or extra or differ):
        return ""
    out = [f"missing (in the clean build only): {missing}", f"extra (stale, in the rebuild only): {extra}",
           f"different: {differ}"]
    for name in [n for n in differ if is_text(got[n]) and is_text(want[n])][:3]:
        diff = difflib.unified_diff(want[name].decode().splitlines(), got[name].decode().splitlines(),
                                    f"clean/{name}", f"rebuilt/{name}", n=1, lineterm="")
        out += list(diff)[:30]
    return "\n".join(out)


SUMMARY = re.compile(r"^built (\d+) albums?, (\d+) photos?, (\d+) videos?, (\d+) skipped in ", re.MULTILINE)
MADE = re.compile(r"^made (\d+) derivatives?.*; rendered (\d+) pages?, wrote (\d+) files?; removed (\d+) stale files?$",
                  re.MULTILINE)
CARD = re.compile(r'<a href="([^"]*)">\s*<span class="card-image"[^>]*>\s*<img src="([^"]+)"')
STUB = re.compile(r"(^|/)page/index\.html$|^p/index\.html$")  # redirects up, the same bytes always: not rendered


def summary(result) -> tuple[tuple[int, ...], list[str]]:
    """The counts of a build's last line, and its warnings with their details cut (the warning
    says which index.md and which thumbnail; the rest of its sentence is not this test's)."""
    found = SUMMARY.findall(result.stdout)
    assert len(found) == 1, result.output
    warnings = sorted(re.sub(r"^(warning: )(\S+: thumbnail '[^']*').*$", r"\2", line)
                      for line in result.stderr.splitlines() if line.startswith("warning"))
    assert "skipped:" not in result.stderr, result.output
    return tuple(int(n) for n in found[0]), warnings


def feed_ids(path: Path) -> list[str]:
    ns = {"a": "http://www.w3.org/2005/Atom"}
    return [e.findtext("a:id", namespaces=ns) for e in ET.parse(path).getroot().findall("a:entry", ns)]


def check_model(walk: Walk, site: Path, files: dict[str, bytes], say: str) -> None:
    """What the site must say of the photo folder, whatever a build remembers: the feeds and the
    sitemap name the newest public photos and the public albums, and nothing public names a
    private album or its photos."""
    public = walk.public()
    published = walk.published()
    assert feed_ids(site / "feed.xml") == walk.newest(public), say
    shown = [a for a in published if a and walk.zone(a) is None]
    feeds = sorted(n for n in files if n.endswith("feed.xml") and n != "feed.xml")
    assert feeds == sorted(slug(a) + "/feed.xml" for a in shown), say
    for album in shown:
        assert feed_ids(site / slug(album) / "feed.xml") == walk.newest(walk.linked(album)), f"{say}\n{album}/feed.xml"
    locs = {e.text for e in ET.parse(site / "sitemap.xml").getroot().iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")}
    locs = {u for u in locs if not u.startswith(BASE + "stream/") and "/page/" not in u}
    assert locs == {walk.page(a) for a in ["", *shown]} | {walk.page(u) for u in public}, say
    hidden = [a for a in walk.albums if walk.zone(a) is not None and walk.below(a)]
    words = {walk.title(a) for a in hidden} | {walk.albums[a].description for a in hidden if walk.albums[a].description}
    stems = set()
    for uri, photo in walk.photos.items():
        if walk.zone(parent(uri)) is not None:
            stems.add(uri.rpartition("/")[2].removesuffix(".jpg"))
            words |= {photo.caption} if photo.caption else set()
    names = {slug(a.rpartition("/")[2]) for a in hidden} | stems
    for name, data in files.items():
        if name.startswith("p/"):
            continue
        assert not names & set(re.split(r"[/.]", name)), f"{say}\n{name} names a private album or photo"
        if is_text(data):
            text = re.sub(r"data:[^\s\"')]+", "", data.decode())  # (base64 holds any short word now and then)
            leaked = sorted(w for w in words | stems if w in text)
            assert not leaked, f"{say}\n{name} says {leaked}"


@pytest.mark.parametrize("seed", SEEDS)
def test_walk_of_changes_rebuilds_to_the_clean_build(tmp_path, isolated_cache, monkeypatch, seed):
    rng = random.Random(seed)
    if seed % 2:  # the rebuilds' walks made with the workers' help (see walk_source), the clean builds' not
        monkeypatch.setattr("albumen.build.PARALLEL_WALK", 1)
    site = tmp_path / "site"
    walk = Walk(tmp_path / "photos", site, rng)
    walk.start()
    conf = write_config(tmp_path, CONFIG)
    build_site(walk.src, site, "-c", str(conf))
    # that build made the secret of private links, which the next build's fingerprint reads: it
    # cannot skip its work, though it has nothing to do
    assert rendered(build_site(walk.src, site, "-c", str(conf), "-v").stdout) == set()
    first = KINDS[(seed - 1) % 3::3]  # each kind comes first in one of three seeds' walks, then any
    kinds = rng.sample(first, len(first)) + rng.choices(KINDS, WEIGHTS, k=STEPS - len(first))
    done: list[str] = []
    for step, kind in enumerate(kinds, 1):
        before, _ = tree(site)
        walk.expect_quiet = False
        done.append(kind(walk))
        say = f"seed {seed}, steps:\n" + "\n".join(f"  {i}. {d}" for i, d in enumerate(done, 1))
        result = build_site(walk.src, site, "-c", str(conf), "-v")

        clean_src = tmp_path / f"clean{step}" / "photos"  # (same name: the home page is titled after it)
        clean = tmp_path / f"clean{step}" / "site"
        shutil.copytree(walk.src, clean_src)
        monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / f"clean{step}" / "cache"))
        try:
            clean_result = build_site(clean_src, clean, "-c", str(conf), "-v")
        finally:
            monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(isolated_cache))
        (got, got_dirs), (want, want_dirs) = tree(site), tree(clean)
        diff = differences(got, want)
        assert not diff, f"{say}\n{diff}"
        assert got_dirs == want_dirs, f"{say}\nfolders only rebuilt: {sorted(got_dirs - want_dirs)}, " \
                                      f"only clean: {sorted(want_dirs - got_dirs)}"
        shutil.rmtree(tmp_path / f"clean{step}")

        counts, warnings = summary(result)
        assert (counts, warnings) == summary(clean_result), f"{say}\n{result.output}\n{clean_result.output}"
        assert counts == (len(walk.published()), len(walk.photos), 0, 0), f"{say}\n{result.output}"
        assert warnings == walk.warnings(), f"{say}\n{result.output}"
        made, rendered_count, _wrote, removed = (int(n) for n in MADE.search(result.stdout).groups())
        assert removed == len(set(before) - set(got)), f"{say}\n{result.output}"
        new_files = {n for n in set(got) - set(before) if not n.endswith((".html", ".xml", ".txt"))}
        assert made >= len(new_files) or "moved, not re-made" in result.stdout, f"{say}\n{result.output}"
        changed = {n for n, data in pages(site).items() if before.get(n) != data and not STUB.search(n)}
        listed = rendered(result.stdout)
        assert changed <= listed, f"{say}\npages changed but not listed as rendered: {sorted(changed - listed)}"
        if walk.expect_quiet:
            assert (made, rendered_count, removed) == (0, 0, 0) and got == before, f"{say}\n{result.output}"
        if done[-1] == "nothing":
            assert "nothing changed since the last build" in result.stdout, f"{say}\n{result.output}"
        check_model(walk, site, got, say)
