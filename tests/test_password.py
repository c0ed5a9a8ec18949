"""Password albums: end-to-end encrypted files that nothing but the password opens (issue 22)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from PIL import Image, UnidentifiedImageError

from albumen.seal import format as fmt
from conftest import build_site, make_jpeg, make_video, may_hold, run_cli, soup, write_config
from sealing import open_unit, sealed_folders

PASSWORD = "correct horse battery staple"
INNER = "short1"
SECRETS = [
    "Zanzibar", "zanzibar", "Secretwedding", "secretwedding", "Karamazov", "karamazov", "Hushhush", "hushhush",
    "Sanctum", "sanctum", "Qqq", "qqq", "xq-secret", "xq_secret", "SecretCamZyx", "Privatus", "Artisticus",
    "clandestine", "Only for family", "Fernando", "fernando",
]
MAGIC = [b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"WEBP", b"ftyp", b"Exif", b"JFIF", b"WEBVTT", b"\x1aE\xdf\xa3"]


def secret_photo(path: Path, n: int, size=(300, 200)) -> None:
    make_jpeg(path, size=size, color=(10 * n, 80, 120), make="Hasselblad", model="SecretCamZyx",
              artist="Privatus Artisticus", description=f"clandestine-caption-{n}", date=f"2024:05:0{n} 12:00:00")


def write_tree(src: Path, passwords: bool = True) -> None:
    make_jpeg(src / "Public" / "sun.jpg", size=(320, 240), date="2024:01:01 10:00:00")
    wedding = src / "Zanzibar Secretwedding"
    secret_photo(wedding / "xq-secret-photo-1.jpg", 1, size=(1200, 800))
    secret_photo(wedding / "xq_secret_photo_2.jpg", 2)
    header = f"password: {PASSWORD}\n" if passwords else ""
    (wedding / "index.md").write_text(f"Title: Karamazov celebration\n{header}\nOnly for family.\n")
    (wedding / "xq-secret-photo-1.md").write_text("Title: Fernando at the altar\n\nA clandestine caption.\n")
    secret_photo(wedding / "Day Two Hushhush" / "xq-secret-photo-3.jpg", 3)
    secret_photo(wedding / "Inner Sanctum Qqq" / "xq-secret-photo-4.jpg", 4)


def config_at(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(folder, text)


def config_text(passwords: bool = True) -> str:
    text = '[images]\noriginals = "copy"\nformats = ["jpeg", "webp"]\n'
    if passwords:
        text += f'[passwords]\n"Zanzibar Secretwedding/Inner Sanctum Qqq" = "{INNER}"\n'
    return text


@pytest.fixture
def built(tmp_path):
    """A site with a password album (index.md), its sub-album sealed with it, and one with a password of
    its own (the config); and the same photos built as public albums, for their plain bytes."""
    src, twin = tmp_path / "photos", tmp_path / "twin"
    write_tree(src)
    write_tree(twin, passwords=False)
    site, public = tmp_path / "site", tmp_path / "public"
    result = build_site(src, site, "-c", str(config_at(tmp_path / "a", config_text())))
    build_site(twin, public, "-c", str(config_at(tmp_path / "b", config_text(False))))
    return src, site, public, result


def units(site: Path) -> tuple:
    """(the wedding's folder opened, the inner album's folder opened)."""
    folders = sealed_folders(site)
    assert len(folders) == 2
    opened = {}
    for folder in folders:
        for password in (PASSWORD, INNER):
            try:
                opened[password] = open_unit(folder, password)
            except fmt.SealError:
                pass
    return opened[PASSWORD], opened[INNER]


def public_files(public: Path, album_slug: str) -> dict[str, bytes]:
    """sha256 -> bytes of every derivative of the public twin's album, but the album covers' card
    images (a password album's pages show its sealed thumbnails: none is made)."""
    return {hashlib.sha256(p.read_bytes()).hexdigest(): p.read_bytes()
            for p in (public / album_slug).rglob("*")
            if p.is_file() and p.name != "index.html" and ".cover" not in p.name}


def test_round_trip_gives_the_public_builds_exact_bytes(built):
    src, site, public, result = built
    wedding, inner = units(site)
    # decrypted with the password, every file is exactly the derivative a public build makes
    plain = {}
    for name, (role, _mid) in wedding.files().items():
        data = wedding.file(name, role)
        plain[hashlib.sha256(data).hexdigest()] = name
    twin = public_files(public, "zanzibar-secretwedding")
    twin_inner = public_files(public, "zanzibar-secretwedding/inner-sanctum-qqq")
    assert set(plain) == set(twin) - set(twin_inner)
    assert {hashlib.sha256(inner.file(n, r)).hexdigest() for n, (r, _) in inner.files().items()} == set(twin_inner)
    # every file of the folder is one the manifest names, or the page, its key and the manifest
    on_disk = {p.name for p in wedding.folder.iterdir()}
    assert on_disk == set(wedding.files()) | {"index.html", "sealed.json", wedding.lock["manifest"]}
    # the manifest says what the pages would: titles, captions, the nesting
    albums = wedding.manifest["albums"]
    top = albums[wedding.manifest["root"]]
    assert top["title"] == "Karamazov celebration" and "Only for family" in top["description"]
    assert [albums[c]["title"] for c in top["children"]] == ["Day Two Hushhush"]
    assert [lk["title"] for lk in top["locked"]] == ["Inner Sanctum Qqq"]
    assert top["locked"][0]["href"] == f"../{inner.folder.name}/"
    titles = {m["title"] for m in wedding.manifest["media"].values()}
    assert "Fernando at the altar" in titles
    assert not any("xq-secret-photo-4" in json.dumps(m) for m in wedding.manifest["media"].values())
    # a wrong password fails at unwrapping, before any file is read
    with pytest.raises(fmt.SealError, match="wrong password"):
        open_unit(wedding.folder, PASSWORD + " ")
    with pytest.raises(fmt.SealError):
        open_unit(inner.folder, PASSWORD)
    # one page for every password album, saying nothing of it
    page_a, page_b = (wedding.folder / "index.html").read_bytes(), (inner.folder / "index.html").read_bytes()
    assert page_a == page_b
    html = soup(wedding.folder / "index.html")
    assert not html.select('meta[property^="og:"]') and not html.select('meta[name^="twitter:"]')
    assert html.select_one('meta[name="robots"]')["content"] == "noindex,nofollow"
    assert html.select_one('meta[name="referrer"]')["content"] == "no-referrer"
    assert "Weak" not in result.output and "weak" in result.output  # the inner album's password is weak
    assert "Inner Sanctum Qqq: its password ([passwords] in the config) is weak" in result.output


def test_nonces_are_unique_and_files_cannot_be_swapped(built):
    _src, site, _public, _result = built
    wedding, inner = units(site)
    seen = []
    for opened in (wedding, inner):
        seen.append(bytes.fromhex(opened.lock["key"])[:12])
        for path in opened.folder.iterdir():
            if path.name not in ("index.html", "sealed.json"):
                seen += fmt.nonces(path.read_bytes())
    assert len(seen) == len(set(seen)) > 20
    names = sorted(wedding.files())
    a, b = names[0], names[1]
    role_a = wedding.files()[a][0]
    blob_b = (wedding.folder / b).read_bytes()
    with pytest.raises(fmt.SealError):  # b's bytes served under a's name
        fmt.open_bytes(wedding.key, fmt.additional_data(wedding.lock["album"], role_a, a), blob_b)
    with pytest.raises(fmt.SealError):  # a's bytes, a's name, another role
        other_role = "thumb" if role_a != "thumb" else "display"
        fmt.open_bytes(wedding.key, fmt.additional_data(wedding.lock["album"], other_role, a), (wedding.folder / a).read_bytes())
    other = next(iter(inner.files()))
    with pytest.raises(fmt.SealError):  # another album's file, even under its own name and the right key
        fmt.open_bytes(wedding.key, fmt.additional_data(wedding.lock["album"], inner.files()[other][0], other),
                       (inner.folder / other).read_bytes())
    assert wedding.file(a, role_a)  # (and the file itself opens)


def test_chunks_cannot_be_dropped_reordered_or_cut():
    key, aad = os.urandom(32), fmt.additional_data("album", "video", "x")
    data = os.urandom(5000)
    blob = fmt.seal_bytes(key, aad, data, chunk_log2=10)  # 1 KiB chunks: 5 of them
    assert fmt.open_bytes(key, aad, blob) == data and len(fmt.nonces(blob)) == 5
    step = 1024 + 28
    chunks = [blob[2 + i * step: 2 + (i + 1) * step] for i in range(5)]
    for bad in (blob[:2] + b"".join(chunks[:4]),  # the last chunk dropped: the 4th does not say it is the last
                blob[:2] + chunks[1] + chunks[0] + b"".join(chunks[2:]),  # two chunks swapped
                blob[:-1],  # cut
                blob[:2] + b"".join(chunks[:2]) + b"".join(chunks[3:])):  # one dropped in the middle
        with pytest.raises(fmt.SealError):
            fmt.open_bytes(key, aad, bad)
    assert fmt.open_bytes(key, aad, fmt.seal_bytes(key, aad, b"", 10)) == b""
    exact = os.urandom(2048)
    assert fmt.open_bytes(key, aad, fmt.seal_bytes(key, aad, exact, 10)) == exact


def _windows(data: bytes) -> set[bytes]:
    """Its 32-byte blocks at multiples of 32: any 64-byte slice of it holds one of them whole."""
    return {data[i:i + 32] for i in range(0, len(data) - 31, 32)}


def test_nothing_readable_leaks(built, isolated_cache, isolated_home):
    src, site, public, _result = built
    wedding, inner = units(site)
    # names, titles, captions, file names and EXIF strings: nowhere in the output, its paths included
    for path in site.rglob("*"):
        rel = path.relative_to(site).as_posix()
        data = path.read_bytes() if path.is_file() else b""
        for word in SECRETS:
            assert word not in rel, (word, rel)
            if not may_hold(word.encode(), data):
                continue  # 3 random bytes are "qqq" once in 16 MiB: short words are looked for in text only
            assert word.encode() not in data, (word, rel)
            assert word.encode("utf-16-le") not in data, (word, rel)
    # nor in the layout of the cache, nor anywhere in the keys' folder
    for root in (isolated_cache, isolated_home):
        for path in root.rglob("*"):
            rel = path.relative_to(root).as_posix()
            assert not any(word in rel for word in SECRETS), rel
    for path in (isolated_home / "keys").iterdir():
        data = path.read_bytes()
        assert not any(word.encode() in data for word in SECRETS), path
        assert path.stat().st_mode & 0o777 == 0o600
    assert (isolated_home / "keys").stat().st_mode & 0o777 == 0o700
    # no image magic number, and nothing Pillow opens, in the albums' folders
    for folder in (wedding.folder, inner.folder):
        for path in folder.iterdir():
            data = path.read_bytes()
            if path.name != "index.html":
                assert not any(magic in data for magic in MAGIC), path.name
            assert "." not in path.name or path.name in ("index.html", "sealed.json")
            with pytest.raises(UnidentifiedImageError):
                Image.open(io.BytesIO(data)).load()
    # no 64-byte slice of any plaintext derivative in the output (the public build's own images aside)
    needles = set()
    for data in public_files(public, "zanzibar-secretwedding").values():
        needles |= _windows(data)
    hay = [p.read_bytes() for p in site.rglob("*") if p.is_file() and not p.is_relative_to(site / "public")]
    for data in hay:
        for i in range(len(data) - 31):
            assert data[i:i + 32] not in needles
    # nothing public says the albums exist
    for page in site.rglob("*.html"):
        if not page.is_relative_to(site / "p"):
            for opened in (wedding, inner):
                assert opened.folder.name not in page.read_text()


def test_unchanged_photos_keep_their_bytes_a_new_password_rewraps_and_rotate_rekeys(built, tmp_path):
    src, site, _public, _result = built
    cfg = config_at(tmp_path / "a", config_text())

    def state():
        return {p.relative_to(site).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in (site / "p").rglob("*")
                if p.is_file()}

    before = state()
    build_site(src, site, "-c", str(cfg), "--force")  # even redone, an unchanged photo's file is not rewritten
    after = state()
    wedding, _inner = units(site)
    photos = {f"p/{wedding.folder.name}/{n}" for n in wedding.files()}
    assert {k: before[k] for k in photos} == {k: after[k] for k in photos}
    build_site(src, site, "-c", str(cfg))
    assert state() == after
    # a new password: the key is wrapped again (sealed.json changes), no photo is encrypted again
    index = src / "Zanzibar Secretwedding" / "index.md"
    index.write_text(index.read_text().replace(PASSWORD, "a new and longer passphrase"))
    build_site(src, site, "-c", str(cfg))
    changed = state()
    assert {k: changed[k] for k in photos} == {k: after[k] for k in photos}
    lock = f"p/{wedding.folder.name}/sealed.json"
    assert changed[lock] != after[lock]
    reopened = open_unit(wedding.folder, "a new and longer passphrase")
    assert reopened.key == wedding.key
    with pytest.raises(fmt.SealError):
        open_unit(wedding.folder, PASSWORD)
    # the environment wins over index.md, and changing it is noticed by a build with nothing else to do
    os.environ["ALBUMEN_PASSWORD_ZANZIBAR_SECRETWEDDING"] = "from the environment, at last"
    try:
        build_site(src, site, "-c", str(cfg))
        open_unit(wedding.folder, "from the environment, at last")
    finally:
        del os.environ["ALBUMEN_PASSWORD_ZANZIBAR_SECRETWEDDING"]
    build_site(src, site, "-c", str(cfg))
    # a rotated link: a new folder, a new key, every file encrypted again under new names
    rotated = run_cli("links", str(src), "-o", str(site), "-c", str(cfg), "--rotate", "Zanzibar Secretwedding")
    assert rotated.exit_code == 0, rotated.output
    build_site(src, site, "-c", str(cfg))
    assert not wedding.folder.exists()
    fresh = next(u for u in (open_unit_or_none(f, "a new and longer passphrase") for f in sealed_folders(site)) if u)
    assert fresh.key != wedding.key and not set(fresh.files()) & set(wedding.files())
    assert len(fresh.files()) == len(wedding.files())


def open_unit_or_none(folder, password):
    try:
        return open_unit(folder, password)
    except fmt.SealError:
        return None


def test_password_sources_and_their_mistakes(tmp_path, monkeypatch):
    src = tmp_path / "photos"
    make_jpeg(src / "Holidays" / "Family" / "a.jpg")
    make_jpeg(src / "Holidays" / "b.jpg")
    monkeypatch.setenv("ALBUMEN_PASSWORD_HOLIDAYS_FAMILY", "four words are enough")
    monkeypatch.setenv("ALBUMEN_PASSWORD_NOWHERE", "whatever it is, it names nothing")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "ALBUMEN_PASSWORD_NOWHERE names no album" in result.output
    assert "weak" not in result.output
    (folder,) = sealed_folders(site)
    assert open_unit(folder, "four words are enough").manifest["albums"]
    assert not (site / "holidays" / "family").exists()
    assert "family" not in (site / "holidays" / "index.html").read_text().lower()
    # a [passwords] entry naming no album stops the build before anything is written
    cfg = write_config(tmp_path, '[passwords]\n"Holidays/Famly" = "a long enough password here"\n')
    result = run_cli("build", str(src), "-o", str(tmp_path / "other"), "-c", str(cfg))
    assert result.exit_code == 2 and "'Holidays/Famly' names no album folder" in result.output
    assert "a long enough password" not in result.output
    assert not (tmp_path / "other").exists()
    cfg.write_text('[passwords]\n"Holidays" = 12\n')
    result = run_cli("build", str(src), "-o", str(tmp_path / "other"), "-c", str(cfg))
    assert result.exit_code == 2 and "passwords.Holidays: expected the password as a non-empty string" in result.output
    # albumen links says which private albums are password albums
    listed = run_cli("links", str(src), "-o", str(site))
    assert re.search(r"Holidays/Family: p/\S+/ +\(password\)", listed.output), listed.output


def test_a_sealed_video_is_chunked_and_decrypts_to_the_public_file(tmp_path, monkeypatch):
    src, twin = tmp_path / "photos", tmp_path / "twin"
    for root in (src, twin):
        make_video(root / "Clips" / "clip.mp4", seconds=1, size=(160, 120))
        (root / "Clips" / "clip.vtt").write_text("WEBVTT\n\n00:00.000 --> 00:01.000\nHushhush words\n")
    monkeypatch.setenv("ALBUMEN_PASSWORD_CLIPS", PASSWORD)
    build_site(src, tmp_path / "site")
    monkeypatch.delenv("ALBUMEN_PASSWORD_CLIPS")
    build_site(twin, tmp_path / "public")
    (folder,) = sealed_folders(tmp_path / "site")
    opened = open_unit(folder, PASSWORD)
    (video,) = (m["video"] for m in opened.manifest["media"].values())
    plain = {hashlib.sha256(opened.file(n, r)).hexdigest() for n, (r, _) in opened.files().items()}
    assert plain == set(public_files(tmp_path / "public", "clips"))
    assert video["tracks"] and video["sources"]
    for path in folder.iterdir():
        assert b"ftyp" not in path.read_bytes() and b"Hushhush" not in path.read_bytes()
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("albumen-sealed-*"))


def test_settings_document_passwords():
    from albumen.config.docs import annotated_toml, settings_markdown

    assert "| `passwords` |" in settings_markdown() or "passwords" in settings_markdown()
    assert "# passwords = {}" in annotated_toml()


def test_plugins_get_nothing_of_a_password_album(tmp_path, monkeypatch):
    """The zip plugin archives private albums under their file names: never a password album's."""
    src = tmp_path / "photos"
    secret_photo(src / "Zanzibar" / "xq-secret-photo-1.jpg", 1)
    make_jpeg(src / "Private Ones" / "p.jpg")
    (src / "Private Ones" / "index.md").write_text("private: true\n")
    monkeypatch.setenv("ALBUMEN_PASSWORD_ZANZIBAR", PASSWORD)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(config_at(tmp_path / "c", 'plugins = ["zip", "compress"]\n[plugin.compress]\nzopfli = false\n')))
    (folder,) = sealed_folders(site)
    assert not list(folder.glob("*.zip")) and len(list(site.glob("p/*/album.zip"))) == 1  # the plain private one's
    assert (folder / "index.html.gz").is_file()
    for path in folder.iterdir():
        assert b"xq-secret" not in path.read_bytes() and b"Zanzibar" not in path.read_bytes()
