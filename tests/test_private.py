"""Private albums: unguessable links that nothing public leaks."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import (
    albumen_process,
    build_site,
    crawl,
    example_plugin_files,
    install_plugin,
    make_jpeg,
    may_hold,
    refuse_reading,
    run_cli,
    run_cli_bounded,
    soup,
    write_config,
)

SECRET_STRINGS = [
    "Zanzibar", "Secretwedding", "zanzibar-secretwedding", "Karamazov", "Hushhush", "hushhush",
    "Sanctum", "sanctum", "Qqq", "qqq", "Vault", "vault", "Ppp", "ppp", "Kkk", "kkk",
    "xq-secret", "xq_secret", "SecretCamZyx", "Privatus", "Artisticus", "clandestine", "ShellFolderMmm",
    "shellfoldermmm",
]



def secret_photo(path: Path, n: int) -> None:
    make_jpeg(path, size=(300, 200), color=(10 * n, 80, 120), make="Hasselblad", model="SecretCamZyx",
              artist="Privatus Artisticus", description=f"clandestine-caption-{n}", date=f"2024:05:0{n} 12:00:00")


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "Trips" / "Beach" / "sun.jpg", date="2024:01:01 10:00:00")
    make_jpeg(src / "Trips" / "Beach" / "sand.jpg", date="2024:01:02 10:00:00")
    make_jpeg(src / "home.jpg", date="2023:01:01 10:00:00")
    wedding = src / "Trips" / "Zanzibar Secretwedding"
    secret_photo(wedding / "xq-secret-photo-1.jpg", 1)
    secret_photo(wedding / "xq_secret_photo_2.jpg", 2)
    (wedding / "index.md").write_text("Title: Karamazov celebration\nPrivate: true\n\nOnly for family.\n")
    secret_photo(wedding / "Day Two Hushhush" / "xq-secret-photo-3.jpg", 3)
    inner = wedding / "Inner Sanctum Qqq"
    secret_photo(inner / "xq-secret-photo-4.jpg", 4)
    (inner / "index.md").write_text("---\nprivate: true\ntitle: Sanctum Qqq\n---\n")
    secret_photo(src / "Family Vault Ppp" / "xq-secret-photo-5.jpg", 5)
    secret_photo(src / "ShellFolderMmm" / "Only Private Kkk" / "xq-secret-photo-6.jpg", 6)
    (src / "ShellFolderMmm" / "Only Private Kkk" / "index.md").write_text("Private: yes\n")
    # symbolic links from a public album (named to be walked first) into the private albums: a folder's and a
    # file's privacy is its own, whichever name leads to it
    make_jpeg(src / "AAA Links" / "aaa-public.jpg", date="2023:02:01 10:00:00")
    (src / "AAA Links" / "Alias").symlink_to("../Trips/Zanzibar Secretwedding/Day Two Hushhush")
    secret_photo(src / "Family Vault Ppp" / "Deep Vault" / "xq-secret-photo-7.jpg", 7)
    (src / "AAA Links" / "Deeper").symlink_to("../Family Vault Ppp/Deep Vault")
    (src / "AAA Links" / "best.jpg").symlink_to("../Family Vault Ppp/xq-secret-photo-5.jpg")
    return src


CONFIG = 'url = "https://photos.example.org/"\nprivate = ["Family Vault Ppp"]\n[feeds]\nper_album = true\n'


def private_roots(site: Path) -> list[Path]:
    return sorted(p for p in (site / "p").iterdir() if p.is_dir())


def listed_links(src: Path, site: Path, *extra: str) -> dict[str, Path]:
    """What `albumen links` lists: album -> its private folder in the site."""
    result = run_cli("links", str(src), "-o", str(site), *extra)
    assert result.exit_code == 0, result.output
    found = {}
    for line in result.stdout.splitlines():
        uri, sep, link = line.partition(": ")
        if sep and link.startswith(("p/", "https://")):
            found[uri] = site / "p" / link.split()[0].rstrip("/").rsplit("/", 1)[1]
    return found


def readable(path: Path):
    """What a file holds as a visitor gets it: (what, bytes) of its own bytes, of a .gz or .br copy
    decompressed, and of each member of a ZIP archive (its name with its bytes)."""
    import gzip
    import zipfile

    import brotli

    data = path.read_bytes()
    yield "", data
    if path.suffix == ".gz":
        yield "gunzipped", gzip.decompress(data)
    elif path.suffix == ".br":
        yield "unbrotlied", brotli.decompress(data)
    elif path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                yield f"member {info.filename}", info.filename.encode() + b"\0" + archive.read(info)


def assert_nowhere_public(site: Path, words: list[str]) -> int:
    """No file outside the private folders (pages, feeds, sitemap, stream, images' names, compressed copies
    decompressed, archives' members and their names...) holds any of the words, nor names a private
    folder; returns how many files and members were read."""
    roots = private_roots(site) if (site / "p").is_dir() else []
    forbidden = [w.encode() for w in words] + [root.name.encode() for root in roots]
    checked = 0
    for path in site.rglob("*"):
        if path.is_file() and not any(root in path.parents for root in roots):
            name = str(path.relative_to(site)).encode()
            for what, data in readable(path):
                for word in forbidden:
                    assert word not in name, f"{word!r} leaks in the name {path.relative_to(site)}"
                    if may_hold(word, data):
                        assert word not in data, f"{word!r} leaks in {path.relative_to(site)} {what}"
                checked += 1
    return checked


def test_nothing_public_mentions_a_private_album(tree, tmp_path):
    site = tmp_path / "site"
    result = build_site(tree, site, "-c", str(write_config(tmp_path, CONFIG)))
    assert "created the secret for private links in" in result.stdout
    roots = private_roots(site)
    assert len(roots) == 4  # the wedding, its inner sanctum, the vault, the one in the shell
    tokens = [p.name for p in roots]
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22,}", token), token
    forbidden = [s.encode() for s in SECRET_STRINGS + tokens]
    checked = 0
    public_seen = set()
    for path in site.rglob("*"):
        if not path.is_file() or any(root in path.parents for root in roots):
            continue
        data = path.read_bytes()
        for word in forbidden:
            if may_hold(word, data):
                assert word not in data, f"{word!r} leaks in {path.relative_to(site)}"
        public_seen |= {w for w in (b"Beach", b"sand", b"trips/beach/sun") if w in data}
        checked += 1
    assert checked > 20
    assert public_seen == {b"Beach", b"sand", b"trips/beach/sun"}  # the scan does see what pages show
    # while inside the private folders, the private things are really there
    inside = b"".join(p.read_bytes() for root in roots for p in root.rglob("*.html"))
    assert b"Karamazov" in inside and b"SecretCamZyx" in inside and b"clandestine-caption-3" in inside
    names = {str(p.relative_to(site)) for p in site.rglob("*")}
    assert "feed.xml" in names and "sitemap.xml" in names and "rss.xml" in names and "stream/index.html" in names
    assert (site / "p" / "index.html").is_file()
    for root in roots:  # no directory listing can enumerate tokens
        for folder in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
            assert (folder / "index.html").is_file(), folder
    # counts and cover of the public parent ignore the private album
    trips = soup(site / "trips" / "index.html")
    assert "2 photos" in trips.select_one(".album-meta").get_text()
    assert [c.select_one(".card-title").get_text() for c in trips.select(".card")] == ["Beach"]
    assert "Disallow" not in (site / "robots.txt").read_text()
    assert crawl(site).broken == []
    # the links from the public album published nothing they lead to (the photos are under their albums'
    # private links: see the next test), each said why; its own photo is published
    assert "aaa-public" in (site / "aaa-links" / "index.html").read_text()
    assert not {"alias", "deeper", "best"} & {p.name for p in (site / "aaa-links").iterdir()}
    for link in ("AAA Links/Alias", "AAA Links/Deeper"):
        assert f"{link}: symbolic link into a private album; not published here" in result.stderr
    assert "AAA Links/best.jpg: symbolic link to a file of a private album; not published here" in result.stderr


def test_no_public_page_or_file_a_plugin_adds_holds_anything_of_a_private_album(tree, tmp_path):
    """The guide's example plugin (docs/PLUGINS.md, installed by its entry point) adds a public page and
    a public file made from the public albums, and a page inside each private album's folder: the
    leak scan reads the plugin's public files with the rest (issue 21)."""
    plugins = install_plugin(tmp_path / "site-packages", example_plugin_files())
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'plugins = ["tint"]\n' + CONFIG)
    done = albumen_process(tmp_path, "build", str(tree), "-o", str(site), "-c", str(conf), pythonpath=plugins)
    assert done.returncode == 0, done.stdout + done.stderr
    tokens = [root.name for root in private_roots(site)]
    public = [site / "tints" / "index.html", site / "tints.json"]
    assert all(path.is_file() for path in public)
    assert b"Beach" in public[0].read_bytes() and b"Beach" in public[1].read_bytes()  # what the scan reads
    inside = sorted(site.glob("p/*/tints/index.html")) + sorted(site.glob("p/*/*/tints/index.html"))
    assert len(inside) == 6 and any(b"Karamazov" in page.read_bytes() for page in inside)  # those with photos
    assert assert_nowhere_public(site, SECRET_STRINGS + tokens) > 20


def test_no_public_archive_page_or_compressed_copy_holds_anything_of_a_private_album(tree, tmp_path):
    """The bundled zip, compress and documents plugins: every public archive (its members' names and
    bytes), every .gz and .br copy (decompressed) and every page is read by the leak scan; each private
    album's archive and copies are in its own folder, where its photos really are (so the scan would see
    them if they leaked); a public album's links into private albums put nothing of them in its archive."""
    import zipfile

    from test_documents import make_pdf

    make_pdf(tree / "Trips" / "Zanzibar Secretwedding" / "xq-secret-plan.pdf")
    (tree / "Trips" / "Zanzibar Secretwedding" / "xq-secret-plan.pdf.md").write_text("title: Karamazov seating plan\n")
    make_pdf(tree / "Trips" / "Beach" / "tide-table.pdf")
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'plugins = ["documents", "zip", "compress"]\n' + CONFIG)
    build_site(tree, site, "-c", str(conf))
    tokens = [root.name for root in private_roots(site)]
    public_zips = sorted(p for p in site.rglob("*.zip") if p.parts[len(site.parts)] != "p")
    assert {str(p.relative_to(site)) for p in public_zips} == {"album.zip", "aaa-links/album.zip", "trips/beach/album.zip"}
    with zipfile.ZipFile(site / "aaa-links" / "album.zip") as archive:
        assert archive.namelist() == ["aaa-public.jpg"]  # not the links into private albums
    with zipfile.ZipFile(site / "trips" / "beach" / "album.zip") as archive:
        assert archive.namelist() == ["sun.jpg", "sand.jpg", "tide-table.pdf"]
    private_zips = sorted(site.glob("p/*/album.zip")) + sorted(site.glob("p/*/*/album.zip"))
    assert len(private_zips) == 6  # the wedding, its second day, its sanctum, the vault, its deep vault, the shell's
    inside = b"".join(data for path in private_zips for _, data in readable(path))
    assert b"Privatus Artisticus" in inside and b"xq-secret-plan.pdf" in inside  # the artist is kept in published images
    assert list(site.glob("p/*/index.html.br")) and list(site.glob("p/*/index.html.gz"))
    assert b"Karamazov" in b"".join(data for p in site.glob("p/*/index.html.gz") for _, data in readable(p))
    checked = assert_nowhere_public(site, SECRET_STRINGS + tokens)
    assert checked > 100


def test_private_pages_are_marked_and_do_not_link_other_private_albums(tree, tmp_path):
    site = tmp_path / "site"
    build_site(tree, site, "-c", str(write_config(tmp_path, CONFIG)))
    links = {}
    for line in run_cli("links", str(tree), "-o", str(site), "-c", str(tmp_path / "cfg" / "albumen.toml")).stdout.splitlines():
        if ": https://" in line:
            uri, _, url = line.partition(": ")
            links[uri] = url
    assert set(links) == {"Trips/Zanzibar Secretwedding", "Trips/Zanzibar Secretwedding/Inner Sanctum Qqq",
                          "Family Vault Ppp", "ShellFolderMmm/Only Private Kkk"}
    wedding_dir = site / links["Trips/Zanzibar Secretwedding"].removeprefix("https://photos.example.org/")
    inner_token = links["Trips/Zanzibar Secretwedding/Inner Sanctum Qqq"].rstrip("/").rsplit("/", 1)[1]
    page = soup(wedding_dir / "index.html")
    assert page.h1.get_text() == "Karamazov celebration"
    assert page.find("meta", attrs={"name": "robots"})["content"] == "noindex,nofollow"
    assert page.find("meta", attrs={"name": "referrer"})["content"] == "no-referrer"
    assert [c.select_one(".card-title").get_text() for c in page.select(".card")] == ["Day Two Hushhush"]
    assert [a.get_text() for a in page.select(".breadcrumbs a")] == ["photos", "Trips"]  # public links are fine
    for path in wedding_dir.rglob("*.html"):
        assert inner_token not in path.read_text(), f"{path} links the separately private album"
    inner = soup(site / links["Trips/Zanzibar Secretwedding/Inner Sanctum Qqq"].removeprefix("https://photos.example.org/") / "index.html")
    assert [a.get_text() for a in inner.select(".breadcrumbs a")] == ["photos", "Trips"]  # not the wedding
    photo = next(wedding_dir.glob("*/index.html"))
    assert soup(photo).find("meta", attrs={"name": "referrer"})["content"] == "no-referrer"
    # the private album's pages work on their own
    walk = crawl(site, str(wedding_dir.relative_to(site) / "index.html"))
    assert walk.broken == []
    assert len([p for p in walk.pages if "xq-secret" in p]) == 3  # two photos + the linked sub-album's one
    # the vault's link shows its photo that a public album links to, and its sub-album that one links to
    vault = site / links["Family Vault Ppp"].removeprefix("https://photos.example.org/")
    walk = crawl(site, str(vault.relative_to(site) / "index.html"))
    assert walk.broken == []
    assert {p.split("/")[-2] for p in walk.pages if "xq-secret" in p} == {"xq-secret-photo-5", "xq-secret-photo-7"}
    assert any("/deep-vault/" in p for p in walk.pages)


def test_tokens_are_stable_per_secret_and_rotate(tree, tmp_path, monkeypatch):
    conf = write_config(tmp_path, 'private = ["Family Vault Ppp"]\n')
    monkeypatch.setenv("ALBUMEN_SECRET", "correct horse battery staple 0123456789")
    a, b = tmp_path / "a", tmp_path / "b"
    build_site(tree, a, "-c", str(conf))
    build_site(tree, b, "-c", str(conf))  # a clean build elsewhere: same tokens
    first = [p.name for p in private_roots(a)]
    assert first == [p.name for p in private_roots(b)]
    monkeypatch.setenv("ALBUMEN_SECRET", "another secret, another set of links 42")
    c = tmp_path / "c"
    build_site(tree, c, "-c", str(conf))
    assert not set(first) & {p.name for p in private_roots(c)}
    monkeypatch.setenv("ALBUMEN_SECRET", "correct horse battery staple 0123456789")
    before = {line.split(": ")[0]: line.split(": ")[1] for line in run_cli("links", str(tree), "-o", str(a), "-c", str(conf)).stdout.splitlines() if line.startswith(("Trips", "Family", "Shell"))}
    result = run_cli("links", str(tree), "-o", str(a), "-c", str(conf), "--rotate", "Family Vault Ppp")
    assert result.exit_code == 0, result.output
    after = {line.split(": ")[0]: line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if line.startswith(("Trips", "Family", "Shell"))}
    assert after["Family Vault Ppp"] != before["Family Vault Ppp"]
    assert after["Trips/Zanzibar Secretwedding"] == before["Trips/Zanzibar Secretwedding"]
    old = a / before["Family Vault Ppp"]
    assert old.is_dir()
    build_site(tree, a, "-c", str(conf))
    assert not old.exists() and (a / after["Family Vault Ppp"] / "index.html").is_file()
    build_site(tree, tmp_path / "d", "-c", str(conf))  # a clean rebuild keeps the rotated link
    assert (tmp_path / "d" / after["Family Vault Ppp"] / "index.html").is_file()
    bad = run_cli("links", str(tree), "-o", str(a), "-c", str(conf), "--rotate", "Trips/Beach")
    assert bad.exit_code == 2 and "not a private album" in bad.stderr


def test_making_an_album_public_again_moves_it_back(tree, tmp_path):
    site = tmp_path / "site"
    build_site(tree, site)
    wedding = tree / "Trips" / "Zanzibar Secretwedding"
    roots = {p.name for p in private_roots(site)}
    (wedding / "index.md").write_text("Title: Karamazov celebration\n")
    build_site(tree, site)
    assert (site / "trips" / "zanzibar-secretwedding" / "index.html").is_file()
    assert (site / "trips" / "zanzibar-secretwedding" / "day-two-hushhush" / "index.html").is_file()
    remaining = {p.name for p in private_roots(site)}
    assert len(remaining) == len(roots) - 1  # its token folder is gone; the inner one keeps its own
    trips = soup(site / "trips" / "index.html")
    assert "Karamazov celebration" in [c.select_one(".card-title").get_text() for c in trips.select(".card")]
    assert crawl(site).broken == []


def test_config_private_paths_must_stay_inside(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg")
    result = build_site(src, tmp_path / "s", "-c", str(write_config(tmp_path, 'private = ["../outside"]\n')), expect=2)
    assert "private: '../outside' must be a folder path inside the photo folder" in result.stderr
    result = build_site(src, tmp_path / "s", "-c", str(write_config(tmp_path, 'private = ["Nope"]\n')), expect=2)
    assert "private: 'Nope' names no album folder" in result.stderr and "cannot be kept private" in result.stderr
    assert not (tmp_path / "s").exists()  # stopped before anything was written


def test_a_config_private_entry_that_names_no_album_exactly_fails_closed(tmp_path):
    """'./Family' was only a warning and Family was published publicly (while '/Family' was refused
    and 'Family/' normalised); so was an entry for a folder the walk reached first through a symbolic
    link under another name ('Best -> Family'). Entries are now spelled as album paths, matched by the
    folder they name too, and one that still names no album stops the build before anything is written."""
    src = tmp_path / "p"
    secret_photo(src / "Family" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Trips" / "trip.jpg")
    for entry in ("./Family", "Family//", ".\\\\Family", "Family/."):
        site = tmp_path / f"site-{len(entry)}-{entry.count('/')}"
        build_site(src, site, "-c", str(write_config(tmp_path, f'private = ["{entry}"]\n')))
        assert not (site / "family").exists() and len(private_roots(site)) == 1, entry
        assert b"xq-secret" not in (site / "index.html").read_bytes()
    site = tmp_path / "typo"
    conf = write_config(tmp_path, 'private = ["family", "Trips", "Nowhere"]\n')
    result = build_site(src, site, "-c", str(conf), "--strict", expect=2)
    assert str(conf) in result.stderr and "2 problems" in result.stderr
    assert "private: 'family' names no album folder" in result.stderr and "did you mean 'Family'?" in result.stderr
    assert "private: 'Nowhere' names no album folder" in result.stderr and "albums: Family, Trips" in result.stderr
    assert not site.exists()
    result = run_cli("links", str(src), "-o", str(site), "-c", str(conf))
    assert result.exit_code == 2 and "private: 'family' names no album folder" in result.stderr
    # a link inside the photo folder that sorts first: the folder is walked under its own name, and private
    (src / "Best").symlink_to("Family", target_is_directory=True)
    conf = write_config(tmp_path, 'private = ["Family"]\n')
    site = tmp_path / "linked"
    build_site(src, site, "-c", str(conf))
    assert not (site / "best").exists() and not (site / "family").exists()
    roots = private_roots(site)
    assert len(roots) == 1 and list(roots[0].glob("*/index.html"))
    assert assert_nowhere_public(site, ["xq-secret"])
    assert listed_links(src, site, "-c", str(conf)) == {"Family": roots[0]}
    # --rotate and --force-album spell album paths the same way
    result = run_cli("links", str(src), "-o", str(site), "-c", str(conf), "--rotate", "./Family/")
    assert result.exit_code == 0, result.output


SECRET_LINKED = ["Famzq", "famzq", "Kidzq", "kidzq", "Cfgzq", "cfgzq", "Subzq", "subzq", "Deepzq", "deepzq",
                 "Erzq", "erzq", "xq-secret", "SecretCamZyx", "clandestine"]


@pytest.mark.parametrize("first", [True, False])
def test_a_link_into_a_private_album_never_publishes_it_whatever_the_names_order(tmp_path, first):
    """A folder not marked itself, inside a private album, was published publicly through a link from a
    public album when the link's name sorted first: the walk went through each folder once, under the
    first name met, and the private album lost the photos. The same with the config's 'private' and with
    a mark further up. Folders are now walked under their own names, and such links are left out; when the
    link sorts last, the folder was walked under its own name already, and the link was said to be a
    duplicate."""
    src = tmp_path / "p"
    secret_photo(src / "Famzq" / "Kidzq" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Famzq" / "fam.jpg")
    (src / "Famzq" / "index.md").write_text("Title: Famzq\nprivate: true\n")
    secret_photo(src / "Cfgzq" / "Subzq" / "xq-secret-photo-2.jpg", 2)
    secret_photo(src / "Deepzq" / "Erzq" / "Subzq" / "xq-secret-photo-3.jpg", 3)
    (src / "Deepzq" / "index.md").write_text("---\nprivate: true\n---\n")
    public = src / ("AAA" if first else "Zzz")
    make_jpeg(public / "pub.jpg")
    (public / "Alias").symlink_to("../Famzq/Kidzq")
    (public / "Config").symlink_to("../Cfgzq/Subzq")
    (public / "Deep").symlink_to("../Deepzq/Erzq")
    conf = write_config(tmp_path, 'url = "https://ex.org/"\nprivate = ["Cfgzq"]\n')
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(conf))
    assert assert_nowhere_public(site, SECRET_LINKED) > 10
    assert sorted(p.name for p in (site / public.name.lower()).iterdir() if p.is_dir()) == ["pub"]
    links = listed_links(src, site, "-c", str(conf))
    assert set(links) == {"Famzq", "Cfgzq", "Deepzq"}
    for album, photo in (("Famzq", "kidzq/xq-secret-photo-1"), ("Cfgzq", "subzq/xq-secret-photo-2"),
                         ("Deepzq", "erzq/subzq/xq-secret-photo-3")):
        assert (links[album] / photo / "index.html").is_file(), album
    for name in ("Alias", "Config", "Deep"):
        assert f"{public.name}/{name}: symbolic link into a private album; not published here" in result.stderr
    assert "Famzq" not in result.stderr  # the report names the link, not the album it leads to
    build_site(src, tmp_path / "strict", "-c", str(conf), "--strict", expect=1)  # a link that does nothing is a warning


def test_a_file_link_into_a_private_album_is_not_published_outside_it(tmp_path):
    """'Public/best.jpg -> ../Famzq/fam.jpg' published the private album's photo on a public page, with no
    warning; a link to a photo's sidecar carried its text across the same way, and one to a private album's
    index.md its title. Files are left out of any album outside the private album they are in, and an
    album whose index.md is such a link is kept private; links between public places still work."""
    src = tmp_path / "p"
    secret_photo(src / "Famzq" / "xq-secret-photo-1.jpg", 1)
    (src / "Famzq" / "xq-secret-photo-1.jpg.md").write_text("Title: Kidzq at the beach\n")
    (src / "Famzq" / "index.md").write_text("private: true\n")
    secret_photo(src / "Cfgzq" / "xq-secret-photo-2.jpg", 2)
    (src / "Cfgzq" / "index.md").write_text("Title: Cfgzq and Subzq\n")
    make_jpeg(src / "Titled" / "titled.jpg")
    (src / "Titled" / "index.md").symlink_to("../Cfgzq/index.md")
    make_jpeg(src / "Trips" / "trip.jpg")
    public = src / "Public"
    make_jpeg(public / "pub.jpg")
    (public / "best.jpg").symlink_to("../Famzq/xq-secret-photo-1.jpg")
    (public / "pub.jpg.md").symlink_to("../Famzq/xq-secret-photo-1.jpg.md")
    (public / "cfg.jpg").symlink_to("../Cfgzq/xq-secret-photo-2.jpg")
    (public / "shared.jpg").symlink_to("../Trips/trip.jpg")  # public to public: published in both
    conf = write_config(tmp_path, 'url = "https://ex.org/"\nprivate = ["Cfgzq"]\n')
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(conf))
    assert assert_nowhere_public(site, SECRET_LINKED) > 10
    assert sorted(p.name for p in (site / "public").iterdir() if p.is_dir()) == ["pub", "shared"]
    assert (site / "trips" / "trip" / "index.html").is_file()
    links = listed_links(src, site, "-c", str(conf))
    assert (links["Famzq"] / "xq-secret-photo-1" / "index.html").is_file()
    assert "Kidzq at the beach" in (links["Famzq"] / "xq-secret-photo-1" / "index.html").read_text()
    assert (links["Cfgzq"] / "xq-secret-photo-2" / "index.html").is_file()
    assert "Cfgzq and Subzq" in (links["Titled"] / "index.html").read_text()
    for name in ("best.jpg", "pub.jpg.md", "cfg.jpg"):
        assert f"Public/{name}: symbolic link to a file of a private album; not published here" in result.stderr
    assert "Titled/index.md: symbolic link to the index.md of a private album; this album is kept private" in result.stderr
    assert "shared.jpg" not in result.stderr


def test_a_link_from_one_private_album_into_another_shows_nothing_of_it(tmp_path):
    """A link inside private album A to a folder or a photo of private album B showed B's photos to whoever
    has A's link. Links inside one private album, and from a private album to public photos, still work."""
    src = tmp_path / "p"
    make_jpeg(src / "Aaa" / "a.jpg", color=(10, 200, 10))
    make_jpeg(src / "Aaa" / "Ownzq" / "ownzq.jpg", color=(10, 10, 200))
    (src / "Aaa" / "index.md").write_text("private: true\n")
    secret_photo(src / "Famzq" / "Kidzq" / "xq-secret-photo-1.jpg", 1)
    secret_photo(src / "Famzq" / "xq-secret-photo-2.jpg", 2)
    (src / "Famzq" / "index.md").write_text("private: true\n")
    make_jpeg(src / "Trips" / "trip.jpg")
    (src / "Aaa" / "From Fam").symlink_to("../Famzq/Kidzq")
    (src / "Aaa" / "fam.jpg").symlink_to("../Famzq/xq-secret-photo-2.jpg")
    (src / "Aaa" / "again.jpg").symlink_to("Ownzq/ownzq.jpg")  # inside A: shown twice, as before
    (src / "Aaa" / "trip.jpg").symlink_to("../Trips/trip.jpg")  # a public photo: no secret to keep
    site = tmp_path / "site"
    result = build_site(src, site)
    links = listed_links(src, site)
    assert set(links) == {"Aaa", "Famzq"}
    a_pages = b"".join(p.read_bytes() for p in links["Aaa"].rglob("*") if p.is_file())
    for word in SECRET_LINKED:
        assert word.encode() not in a_pages, word
    assert sorted(p.name for p in links["Aaa"].iterdir() if p.is_dir()) == ["a", "again", "ownzq", "trip"]
    assert (links["Famzq"] / "kidzq" / "xq-secret-photo-1" / "index.html").is_file()
    assert (links["Famzq"] / "xq-secret-photo-2" / "index.html").is_file()
    assert assert_nowhere_public(site, SECRET_LINKED + ["ownzq"])
    assert "Aaa/From Fam: symbolic link into a private album; not published here" in result.stderr
    assert "Aaa/fam.jpg: symbolic link to a file of a private album; not published here" in result.stderr


def test_a_link_to_a_folder_the_walk_does_not_reach_keeps_its_real_privacy(tmp_path):
    """A link to a folder that is hidden, ignored or under a .nomedia folder is the only way to it, so the
    folder is walked under the link's name; a private mark in an index.md above it (in a folder the walk
    does not list) was never read, and the folder was published. Those marks are read now, and a later
    mark there is seen by the next build (the no-change shortcut knows those files too). A public folder
    reached both by its own path and through a link is walked under its own name, though the link sorts
    first."""
    src = tmp_path / "p"
    secret_photo(src / ".Hidzq" / "Kidzq" / "xq-secret-photo-1.jpg", 1)
    (src / ".Hidzq" / "index.md").write_text("private: true\n")
    secret_photo(src / "Draftzq" / "Subzq" / "xq-secret-photo-2.jpg", 2)
    (src / "Draftzq" / "Index.md").write_text("Private: yes\n")
    secret_photo(src / "Nomedzq" / "Erzq" / "xq-secret-photo-3.jpg", 3)
    (src / "Nomedzq" / ".nomedia").write_text("")
    (src / "Nomedzq" / "index.md").write_text("---\nprivate: true\n")  # unclosed: kept private all the same
    make_jpeg(src / ".Stash" / "Trip" / "stashed.jpg")
    make_jpeg(src / "Trips" / "Beach" / "sun.jpg")
    public = src / "Aaa Public"
    make_jpeg(public / "pub.jpg")
    (public / "Hidden").symlink_to("../.Hidzq/Kidzq")
    (public / "Draft").symlink_to("../Draftzq/Subzq")
    (public / "Nomedia").symlink_to("../Nomedzq/Erzq")
    (public / "Stash").symlink_to("../.Stash/Trip")  # public where it is: published through the link, as before
    (public / "Beach").symlink_to("../Trips/Beach")  # reached by its own path too: walked under that name
    conf = write_config(tmp_path, 'ignore = ["Draftzq"]\n')
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(conf))
    assert assert_nowhere_public(site, SECRET_LINKED) > 5
    assert sorted(p.name for p in (site / "aaa-public").iterdir() if p.is_dir()) == ["pub", "stash"]
    assert (site / "aaa-public" / "stash" / "stashed" / "index.html").is_file()
    assert (site / "trips" / "beach" / "sun" / "index.html").is_file()
    for name in ("Hidden", "Draft", "Nomedia"):
        assert f"Aaa Public/{name}: symbolic link into a private album; not published here" in result.stderr
    assert "Aaa Public/Beach: symbolic link to a folder the gallery shows as Trips/Beach; not shown twice" in result.stderr
    # a mark added where the walk does not look is read by the next build, which nothing else changes
    (src / ".Stash" / "index.md").write_text("private: true\n")
    result = build_site(src, site, "-c", str(conf))
    assert not (site / "aaa-public" / "stash").exists()
    assert assert_nowhere_public(site, SECRET_LINKED + ["stashed"]) > 5
    assert "Aaa Public/Stash: symbolic link into a private album; not published here" in result.stderr


def test_a_cover_is_never_taken_from_behind_a_private_link(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "public.jpg")
    secret_photo(src / "Trip" / "Hideout" / "hidfile.jpg", 1)
    (src / "Trip" / "Hideout" / "index.md").write_text("private: true\n")
    (src / "Trip" / "index.md").write_text("Thumbnail: Hideout/hidfile.jpg\n")
    secret_photo(src / "Secretz" / "zebrafile.jpg", 2)
    (src / "Secretz" / "index.md").write_text("private: true\n")
    (src / "index.md").write_text("Thumbnail: Secretz/zebrafile.jpg\n")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://ex.org/"\n')))
    roots = private_roots(site)
    tokens = [p.name.encode() for p in roots]
    for path in site.rglob("*"):
        if path.is_file() and not any(root in path.parents for root in roots):
            data = path.read_bytes()
            assert not any(t in data for t in tokens) and b"hidfile" not in data and b"zebrafile" not in data, path


@pytest.mark.parametrize("sidecar", [
    "Private: true # family only\n", "private: y\n", "\nPrivate: true\n", "---\nprivate: [unclosed\n---\n",
    "private: sometimes\n",
])
def test_unclear_private_marks_fail_closed(tmp_path, sidecar):
    src = tmp_path / "p"
    secret_photo(src / "Fam" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Pub" / "ok.jpg")
    name = "Index.md" if sidecar.startswith("\n") else "index.md"  # the name's case does not matter either
    (src / "Fam" / name).write_text(sidecar)
    site = tmp_path / "site"
    build_site(src, site)
    assert not (site / "fam").exists()
    assert len(private_roots(site)) == 1
    assert b"xq-secret" not in (site / "index.html").read_bytes()


@pytest.mark.parametrize("marked", ["INDEX.md", "Index.md"])
def test_a_private_mark_in_either_of_two_index_files_holds(tmp_path, marked):
    """Index.md beside INDEX.md (a case-sensitive file system allows both): only one is read, and the
    album stays private whichever of them marks it so."""
    src = tmp_path / "p"
    secret_photo(src / "Fam" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Pub" / "ok.jpg")
    for name in ("INDEX.md", "Index.md"):
        (src / "Fam" / name).write_text("---\nprivate: true\n---\n" if name == marked else "---\ntitle: Fam\n---\n")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "one index.md per folder" in result.output
    assert not (site / "fam").exists()
    assert len(private_roots(site)) == 1
    assert b"xq-secret" not in (site / "index.html").read_bytes()


UNREAD_HEADERS = {  # album -> an index.md whose private mark was once not read: the album was published
    "Kestrelunclosed": "---\nprivate: true\n",  # no closing fence
    "Kestrelblank": "\n---\nprivate: true\n---\n",  # a blank line before the fence
    "Kestrelspace": "--- \nprivate: true\n--- \n",  # spaces after the fences
    "Kestrelcolon": "Title: x\nPrivate : true\n",  # a space before the colon (Sigal galleries have it)
    "Kestrelindent": "  private: true\n",  # indented (Python-Markdown allows up to 3 spaces)
    "Kestreltoml": "+++\nprivate = true\n+++\n",  # Hugo's TOML front matter
    "Kestreltomlbad": "+++\nprivate = true\ntitle = [\n+++\n",  # broken TOML
    "Kestrelprose": "A trip.\nprivate: true\n\nMore text.\n",  # no header at all, the mark in the text
    "Kestrellist": "---\n- private: true\n---\n",  # YAML, but a list of keys rather than a set of them
    "Kestrelzwsp": "---\n\u200bprivate: true\n---\n",  # a zero-width space before the key (a copy from a web page)
    "Kestrelzwspline": "Title: x\n\u00adPrivate: true\n",  # a soft hyphen before it
    # decoded as Windows-1252 (the byte-order mark stuck to the first line) or read as one line
    "Kestrelutf16le": "\ufeffprivate: true\r\n".encode("utf-16-le"),  # PowerShell 5.1's 'private: true' > index.md
    "Kestrelutf16be": "\ufeffprivate: true\r\nTitle: Family\r\n".encode("utf-16-be"),
    "Kestrelutf32": "\ufeffPrivate: yes\n".encode("utf-32-le"),
    "Kestrelutf8bom": "\ufeffprivate: true\n".encode(),
    "Kestrelutf8bombad": b"\xef\xbb\xbfprivate: true\nTitle: Caf\xe9\n",  # a BOM, then a byte that is not UTF-8
    "Kestreljoined": "Title: Family\n\ufeffprivate: true\n".encode(),  # a BOM left inside by joining two files
    "Kestrelmac": b"Title: Family\rprivate: true\r",  # old Mac line endings
    "Kestrelmacyaml": b"---\rprivate: true\r---\r",
    "Kestrelmixed": b"Title: Family\r\nAuthor: Us\rprivate: true\n",
    "Kestrelu2028": "Title: Family\u2028private: true\n".encode(),  # LINE SEPARATOR, a line break to YAML
    "Kestrelnel": "Title: Family\x85private: true\n".encode(),  # NEL, one too
    "Kestrelnobom": "Title: Family\r\nprivate: false\r\n".encode("utf-16-le"),  # cannot be trusted: kept private
}


def test_private_marks_in_headers_once_not_read_keep_their_albums_private(tmp_path, monkeypatch):
    """Each of these albums was published and listed, the private mark shown as text. Headers are
    read more tolerantly now, and a private mark in the first lines of a header that is not read
    whole keeps the album private with a warning. After a header read whole, the body is prose.
    Any Unicode encoding with a byte-order mark and any line break is read; an index.md that cannot
    be read and trusted (no BOM but NUL bytes, a link leading out or broken, a folder) keeps its
    album private with a warning, and one that `ignore` or .nomedia hide is read for its mark."""
    src = tmp_path / "p"
    for n, (album, text) in enumerate(UNREAD_HEADERS.items(), start=1):
        secret_photo(src / album / f"xq-secret-photo-{n % 9 + 1}.jpg", n % 9 + 1)
        if isinstance(text, bytes):
            (src / album / "index.md").write_bytes(text)
        else:
            (src / album / "index.md").write_text(text)
    passed_over = {  # album -> an index.md that was passed over, so the album was published
        "Kestrellinkout": lambda d: (d / "index.md").symlink_to(tmp_path / "elsewhere.md"),  # leads out: not followed
        "Kestreldangling": lambda d: (d / "index.md").symlink_to(d / "gone.md"),
        "Kestrelloop": lambda d: (d / "index.md").symlink_to(d / "index.md"),
        "Kestrelfolder": lambda d: (d / "index.md").mkdir(),
        "Kestrellocked": lambda d: (d / "index.md").write_text("private: true\n"),  # unreadable: see below
        "Kestrelignored": lambda d: (d / "index.md").write_text("private: true\n"),  # the config ignores it
        "Kestrelnomedia": lambda d: [(d / ".nomedia").write_text("index.md\n"), (d / "index.md").write_text("private: true\n")],
        "Kestrelnomediacaps": lambda d: [(d / ".nomedia").write_text("Index.md\n"), (d / "Index.md").write_text("Private: yes\n")],
    }
    (tmp_path / "elsewhere.md").write_text("Title: Kestrel\n")
    for n, (album, make_index) in enumerate(passed_over.items(), start=1):
        secret_photo(src / album / f"xq-secret-photo-{n}.jpg", n)
        make_index(src / album)
    make_jpeg(src / "Openplain" / "ok.jpg")
    (src / "Openplain" / "index.md").write_text("---\ntitle: Openplain\n---\n\nOur house rule:\nprivate: true\n")
    (src / "Openplain" / "ok.jpg.md").write_text("private: true\n")
    config = write_config(tmp_path, CONFIG.replace('private = ["Family Vault Ppp"]\n', 'ignore = ["Kestrelignored/*.md"]\n'))
    from albumen.scan import sidecar

    refuse_reading(monkeypatch, sidecar, "Kestrellocked")
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(config))
    warnings = result.stderr
    kept = "its album is kept private until it can be read"
    assert f"Kestrellinkout/index.md: cannot read it (a symbolic link leading outside the photo folder, which is " \
           f"not followed); {kept}" in warnings
    assert f"Kestreldangling/index.md: cannot read it (a broken symbolic link: No such file or directory); {kept}" in warnings
    assert f"Kestrelloop/index.md: cannot read it (a broken symbolic link: Too many levels of symbolic links); {kept}" in warnings
    assert f"Kestrelfolder/index.md: cannot read it (not a regular file); {kept}" in warnings
    assert f"Kestrellocked/index.md: cannot read it (Permission denied); {kept}" in warnings
    assert "Kestrelunclosed/index.md: line 2 ('private: true') is not read as a header line (the '---' that " \
           "opens the header is never closed by a '---' line); kept private to be safe. Fix the header" in warnings
    assert "Kestrelprose/index.md: line 2 ('private: true') is not read as a header line (no header is read)" in warnings
    assert "Kestreltomlbad/index.md: invalid TOML front matter ignored" in warnings
    assert "Kestreltomlbad/index.md: 'private: unreadable' is not true or false; the album is kept private" in warnings
    assert "Kestrelnobom/index.md: cannot read it (NUL bytes in it: UTF-16 without a byte-order mark, or not " \
           "text; save it as UTF-8); its album is kept private until it can be read" in warnings
    assert "Kestrelutf8bombad/index.md: not valid UTF-8 text" in warnings
    assert "Kestrelzwspline/index.md: line 2 ('\\xadPrivate: true') is not read as a header line" in warnings
    for album in ("Kestrelblank", "Kestrelspace", "Kestrelcolon", "Kestrelindent", "Kestreltoml", "Openplain",
                  "Kestrelzwsp", "Kestrelutf16le", "Kestrelutf16be", "Kestrelutf32", "Kestrelutf8bom", "Kestreljoined",
                  "Kestrelmac", "Kestrelmacyaml", "Kestrelmixed", "Kestrelu2028", "Kestrelnel",
                  "Kestrelignored", "Kestrelnomedia", "Kestrelnomediacaps"):
        assert f"{album}/index.md" not in warnings, warnings  # read as meant: nothing to warn about
    assert "Openplain/ok.jpg.md: 'private' in a photo's sidecar hides nothing: Openplain/ok.jpg is published" in warnings

    links = {}
    for line in run_cli("links", str(src), "-o", str(site), "-c", str(config)).stdout.splitlines():
        if ": https://" in line:
            uri, _, url = line.partition(": ")
            links[uri] = url
    assert set(links) == set(UNREAD_HEADERS) | set(passed_over)
    for album in ("Kestrelutf16be", "Kestrelmac", "Kestrelmixed", "Kestrelu2028", "Kestrelnel", "Kestreljoined"):
        page = site / links[album].removeprefix("https://photos.example.org/") / "index.html"
        assert soup(page).h1.get_text() == "Family", album  # the title line alone, no \r and no BOM
    roots = private_roots(site)
    assert {link.rstrip("/").rsplit("/", 1)[1] for link in links.values()} == {p.name for p in roots}
    names = {str(p.relative_to(site)) for p in site.rglob("*")}
    assert {"feed.xml", "rss.xml", "sitemap.xml", "stream/index.html", "openplain/feed.xml"} <= names
    checked = 0
    for path in site.rglob("*"):
        if path.is_file() and not any(root in path.parents for root in roots):
            data = path.read_bytes().lower()
            assert b"kestrel" not in data and b"xq-secret" not in data and b"secretcamzyx" not in data, path
            checked += 1
    assert checked > 10
    home = (site / "index.html").read_text()
    assert "Openplain" in home
    assert "private: true" in (site / "openplain" / "index.html").read_text()  # prose after a header read whole
    for root in roots:
        assert (root / "index.html").is_file()


def test_an_index_md_hidden_by_ignore_or_nomedia_is_read_for_its_private_mark_only(tmp_path):
    """`ignore = ["*.md"]` (say, to use the photos' own titles rather than the sidecars') hid every
    index.md, so their private marks were never read and the albums were published. A hidden
    index.md is now read for its private mark alone: nothing else of it is used."""
    src = tmp_path / "p"
    secret_photo(src / "Fam" / "xq-secret-photo-1.jpg", 1)
    (src / "Fam" / "index.md").write_text("Title: Kestrel\nprivate: true\n\nKestrel text.\n")
    secret_photo(src / "Bad" / "xq-secret-photo-2.jpg", 2)
    (src / "Bad" / "index.md").write_text("---\nprivate: true\n")  # never closed: kept private, with a warning
    make_jpeg(src / "Pub" / "ok.jpg")
    (src / "Pub" / "index.md").write_text("Title: Wrenheading\n\nWrentext.\n")
    (src / "Pub" / "ok.md").write_text("Title: Wrenphoto\n")
    make_jpeg(src / "Pub" / "Sub" / "ok2.jpg")
    (src / "Pub" / "Sub" / ".nomedia").write_text("index.md\n")  # the folder stays: its index.md is hidden
    (src / "Pub" / "Sub" / "index.md").write_text("Title: Wrensub\n")
    config = write_config(tmp_path, 'url = "https://photos.example.org/"\nignore = ["*.md"]\n')
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(config))
    assert "Bad/index.md: line 2 ('private: true') is not read as a header line" in result.stderr
    assert "Fam/index.md" not in result.stderr and "Pub/" not in result.stderr
    links = [line for line in run_cli("links", str(src), "-o", str(site), "-c", str(config)).stdout.splitlines()
             if ": https://" in line]
    assert sorted(line.partition(":")[0] for line in links) == ["Bad", "Fam"]
    roots = private_roots(site)
    assert len(roots) == 2
    for path in site.rglob("*"):
        if path.is_file() and not any(root in path.parents for root in roots):
            data = path.read_bytes().lower()
            assert b"kestrel" not in data and b"xq-secret" not in data and b"wren" not in data, path
    assert soup(site / "pub" / "index.html").h1.get_text() == "Pub"  # not the hidden index.md's title
    assert soup(site / "pub" / "sub" / "index.html").h1.get_text() == "Sub"
    inside = b"".join(p.read_bytes() for root in roots for p in root.rglob("*.html"))
    assert b"xq-secret-photo-1" in inside and b"Kestrel" not in inside  # the mark only, not the title or text


def billion_laughs(extra: str = "") -> str:
    """The security review's 549-byte header: nine levels of ten aliases, a value of 10**9 strings."""
    lines = ["---", "a0: &a0 [" + ",".join(['"lolololol"'] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join([*lines, "title: *a8", *([extra] if extra else []), "---", ""])


def test_a_yaml_alias_bomb_is_an_unreadable_header_and_a_private_mark_in_it_holds(tmp_path):
    """SafeLoader keeps aliases as references: turning the title into text built gigabytes in the
    build process (MemoryError after ~47 s). Aliases are refused, so the header is unreadable: a
    warning naming the file, and privacy fails closed. Run in a process of its own with a time and
    memory limit, so that a regression fails instead of eating the machine."""
    src = tmp_path / "p"
    secret_photo(src / "Fam" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Lol" / "ok.jpg")
    (src / "Fam" / "index.md").write_text(billion_laughs("private: true"))
    (src / "Lol" / "index.md").write_text(billion_laughs())
    assert len(billion_laughs().encode()) < 600
    site = tmp_path / "site"
    result = run_cli_bounded("build", str(src), "-o", str(site), "-j", "1")
    assert result.exit_code == 0, result.output
    for name in ("Fam", "Lol"):
        assert f"{name}/index.md: invalid YAML front matter ignored (aliases (*a0) are not allowed" in result.stderr
    assert "Fam/index.md: 'private: unreadable' is not true or false; the album is kept private" in result.stderr
    assert not (site / "fam").exists() and (site / "lol" / "index.html").is_file()
    assert len(private_roots(site)) == 1
    assert b"xq-secret" not in (site / "index.html").read_bytes()
    assert b"lolololol" not in (site / "lol" / "index.html").read_bytes()


def test_links_refuses_a_cache_inside_the_photo_folder(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg")
    conf = write_config(tmp_path, f'cache_dir = "{src / ".cachez"}"\n')
    result = run_cli("links", str(src), "-o", str(tmp_path / "out"), "-c", str(conf))
    assert result.exit_code == 2 and "cache folder" in result.stderr
    assert not (src / ".cachez").exists()


def test_a_public_copy_left_by_another_cache_is_reported(tmp_path, monkeypatch):
    src = tmp_path / "p"
    make_jpeg(src / "Family" / "a.jpg")
    site = tmp_path / "site"
    build_site(src, site)
    (src / "Family" / "index.md").write_text("private: true\n")
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "another-cache"))
    result = build_site(src, site)
    assert "Family is private, but" in result.stderr and "delete that folder" in result.stderr
    assert f"{site / 'family'} holds a public copy" in result.stderr
    assert "did not write" not in result.stderr  # named once (see the next test)


def test_pages_left_by_a_build_whose_cache_was_lost_are_named(tmp_path, monkeypatch):
    """An album made private after its cache was lost (a cleaned ~/.cache, CI with a fresh cache and a
    kept output) kept its public pages and full-size images, with "removed 0 stale files" and no
    warning when it was not caught by name (its folder renamed, a photo moved into a private album).
    Albumen removes only what its cache records, so the pages it did not write now are named."""
    src = tmp_path / "p"
    secret_photo(src / "Family" / "xq-secret-photo-1.jpg", 1)
    secret_photo(src / "Family" / "Kids" / "xq-secret-photo-2.jpg", 2)
    make_jpeg(src / "Trips" / "trip.jpg")
    make_jpeg(src / "Trips" / "moved.jpg")
    site = tmp_path / "site"
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "cache-1"))
    build_site(src, site)
    result = build_site(src, site, "--strict")  # an intact cache: nothing to say
    assert "did not write" not in result.output
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "cache-2"))
    result = build_site(src, site, "--strict")  # a lost cache, and every page still current: nothing either
    assert "did not write" not in result.output
    (src / "Family").rename(src / "Hidden")
    (src / "Hidden" / "index.md").write_text("private: true\n")
    (src / "Trips" / "moved.jpg").rename(src / "Hidden" / "moved.jpg")
    (site / "notes").mkdir()
    (site / "notes" / "index.html").write_text("<html><body>the user's own page</body></html>")
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "cache-3"))
    result = build_site(src, site, "--strict", expect=1)
    assert "pages of an earlier build that this one did not write, in 2 folders: family/, trips/moved/." in result.stderr
    assert "private or gone now" in result.stderr and "nothing was removed" in result.stderr
    assert "notes/" not in result.stderr  # not Albumen's
    assert (site / "family" / "index.html").is_file()  # never removed
    result = build_site(src, site, "--strict", expect=1)  # named again while they are there
    assert "did not write, in 2 folders" in result.stderr
    shutil.rmtree(site / "family")
    result = build_site(src, site, "--strict", expect=1)
    assert "did not write, in 1 folder: trips/moved/." in result.stderr
    shutil.rmtree(site / "trips" / "moved")
    (src / "Trips" / "new.jpg").write_bytes((src / "Trips" / "trip.jpg").read_bytes())
    result = build_site(src, site, "--strict")
    assert "did not write" not in result.output


def test_the_secret_never_lives_in_the_photos_or_the_published_site(tree, tmp_path, monkeypatch):
    site = tmp_path / "site"
    for home, where in ((site / ".albumen", "output folder"), (tree / ".albumen", "photo folder")):
        monkeypatch.setenv("ALBUMEN_HOME", str(home))
        for command in (["build", str(tree), "-o", str(site)], ["links", str(tree), "-o", str(site)]):
            result = run_cli(*command)
            assert result.exit_code == 2, result.output
            assert f"is inside the {where}" in result.stderr and "ALBUMEN_HOME" in result.stderr
            assert not home.exists()  # stopped before any secret was made
    assert not (site / "index.html").exists()


def test_a_rotation_reaches_other_machines_through_the_config(tree, tmp_path, monkeypatch):
    """A link rotated on one machine was published again by a build elsewhere (CI with the same
    ALBUMEN_SECRET): the rotation lived only in that machine's rotations.json. The config's
    private_rotations carries it, and --rotate prints the line to put there."""
    conf = write_config(tmp_path, 'private = ["Family Vault Ppp"]\n')
    monkeypatch.setenv("ALBUMEN_SECRET", "correct horse battery staple 0123456789")
    monkeypatch.setenv("ALBUMEN_HOME", str(tmp_path / "laptop"))
    laptop, ci = tmp_path / "laptop-site", tmp_path / "ci-site"
    build_site(tree, laptop, "-c", str(conf))
    old = {p.name for p in private_roots(laptop)}
    result = run_cli("links", str(tree), "-o", str(laptop), "-c", str(conf), "--rotate", "Family Vault Ppp")
    assert result.exit_code == 0, result.output
    assert "recorded on this machine only" in result.stdout
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("private_rotations = "))
    assert line == 'private_rotations = { "Family Vault Ppp" = 1 }'
    assert "above its first [section]" in result.stdout
    build_site(tree, laptop, "-c", str(conf))
    rotated = {p.name for p in private_roots(laptop)}
    assert len(old - rotated) == 1 and len(rotated - old) == 1  # that album's link only
    # another machine without the laptop's record publishes the old link...
    monkeypatch.setenv("ALBUMEN_HOME", str(tmp_path / "ci"))
    build_site(tree, ci, "-c", str(conf))
    assert {p.name for p in private_roots(ci)} == old
    # ...until the config carries the rotation
    conf.write_text(conf.read_text() + line + "\n")
    build_site(tree, ci, "-c", str(conf))
    assert {p.name for p in private_roots(ci)} == rotated
    # the next rotation counts on from the config's, on a machine that has no record of its own
    monkeypatch.setenv("ALBUMEN_HOME", str(tmp_path / "third"))
    result = run_cli("links", str(tree), "-o", str(ci), "-c", str(conf), "--rotate", "Family Vault Ppp")
    assert 'private_rotations = { "Family Vault Ppp" = 2 }' in result.stdout
    bad = write_config(tmp_path, 'private_rotations = { "../out" = 1, "Family Vault Ppp" = "once" }\n')
    result = run_cli("build", str(tree), "-o", str(tmp_path / "x"), "-c", str(bad))
    assert result.exit_code == 2
    assert "private_rotations: '../out' must be a folder path inside the photo folder" in result.stderr
    assert "private_rotations.Family Vault Ppp: expected a count of rotations" in result.stderr


def test_the_rotation_line_is_valid_toml_for_any_album_name_and_unknown_entries_are_warned(tmp_path, monkeypatch):
    """The printed line reads back as TOML whatever the album's name (an emoji came out as JSON
    surrogate escapes that TOML refuses), names only this gallery's albums, and a private_rotations
    entry that names no private album is a warning (--strict fails): it rotates nothing."""
    import tomllib

    src = tmp_path / "photos"
    for album in ("Fam 🏖 \"quotes\"", "Été"):
        make_jpeg(src / album / "a.jpg")
        (src / album / "index.md").write_text("private: true\n")
    monkeypatch.setenv("ALBUMEN_SECRET", "correct horse battery staple 0123456789")
    monkeypatch.setenv("ALBUMEN_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "rotations.json").write_text('{"Another gallery": 3}')
    conf = write_config(tmp_path, "")
    result = run_cli("links", str(src), "-o", str(tmp_path / "site"), "-c", str(conf), "--rotate", 'Fam 🏖 "quotes"')
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("private_rotations = "))
    assert tomllib.loads(line) == {"private_rotations": {'Fam 🏖 "quotes"': 1}}
    conf.write_text(line + "\n")
    build_site(src, tmp_path / "site", "-c", str(conf))
    conf.write_text('private_rotations = { "été" = 1, "Nowhere" = 2 }\n')
    result = build_site(src, tmp_path / "site", "-c", str(conf), "--strict", expect=1)
    assert "private_rotations: 'été' is not a private album, so it rotates no link (did you mean 'Été'?)" in result.output
    assert "private_rotations: 'Nowhere' is not a private album" in result.output
    result = run_cli("links", str(src), "-o", str(tmp_path / "site"), "-c", str(conf))
    assert "private_rotations: 'Nowhere' is not a private album" in result.stderr


def test_albumen_own_files_are_this_user_only(tree, tmp_path, monkeypatch):
    """The build cache lists every p/<token>/ path and rotations.json names the private albums: both
    were made readable by everyone (0644 in 0755 folders) while the secret was 0600. Albumen's own
    folders are now made 0700 and its files 0600, whatever the umask, and those an older version
    made readable to others are closed when the cache is opened again."""
    home, caches = tmp_path / "own" / "home", tmp_path / "own" / "caches"  # made by Albumen
    monkeypatch.setenv("ALBUMEN_HOME", str(home))
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(caches))
    site = tmp_path / "site"
    previous = os.umask(0o022)
    try:
        build_site(tree, site)
        assert run_cli("links", str(tree), "-o", str(site), "--rotate", "Trips/Zanzibar Secretwedding").exit_code == 0
        build_site(tree, site)

        def opened_to_others() -> list[str]:
            every = (home, caches, *home.rglob("*"), *caches.rglob("*"))
            return [f"{p} {oct(p.stat().st_mode & 0o777)}" for p in every if p.stat().st_mode & 0o077]

        assert (home / "rotations.json").is_file() and list(caches.rglob("cache.sqlite"))
        assert opened_to_others() == []
        cache = next(caches.rglob("cache.sqlite"))
        cache.chmod(0o644)  # as an older Albumen left them
        cache.parent.chmod(0o755)
        build_site(tree, site)
        assert opened_to_others() == []
    finally:
        os.umask(previous)


def test_the_build_that_makes_the_secret_is_followed_by_one_with_nothing_to_do(tree, tmp_path):
    """The first build of a gallery with a private album makes the private-link secret; the build
    after it, with nothing changed, has nothing to do (the fingerprint it compares holds the secret as
    it is now). A rotation is still a change."""
    site = tmp_path / "site"
    first = build_site(tree, site)
    assert "created the secret" in first.output
    again = build_site(tree, site)
    assert "nothing changed" in again.output, again.output
    run_cli("links", str(tree), "-o", str(site), "--rotate", "Trips/Zanzibar Secretwedding")
    rotated = build_site(tree, site)
    assert "nothing changed" not in rotated.output, rotated.output
