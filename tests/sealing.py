"""Helpers of the password-album tests: open what a build sealed, as the browser does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from albumen.seal import format as fmt


@dataclass
class Opened:
    folder: Path
    lock: dict
    key: bytes
    manifest: dict

    def file(self, name: str, role: str) -> bytes:
        return fmt.open_bytes(self.key, fmt.additional_data(self.lock["album"], role, name), (self.folder / name).read_bytes())

    def files(self) -> dict[str, tuple[str, str]]:
        """Every file the manifest names -> (role, media id)."""
        out = {}
        for mid, m in self.manifest["media"].items():
            out[m["thumb"][0]] = ("thumb", mid)
            for _mime, name in m.get("thumbs", ()):
                out[name] = ("thumb", mid)
            for _mime, images in m["sources"]:
                for name, _w, _h in images:
                    out[name] = ("display", mid)
            if "original" in m:
                out[m["original"][0]] = ("original", mid)
            if "video" in m:
                out[m["video"]["poster"][0]] = ("display", mid)
                for _mime, name in m["video"]["sources"]:
                    out[name] = ("video", mid)
                for name, _lang, _label in m["video"]["tracks"]:
                    out[name] = ("track", mid)
        return out


def open_unit(folder: Path, password: str) -> Opened:
    """A password album's folder opened with its password (SealError when it is wrong)."""
    lock = json.loads((folder / "sealed.json").read_text())
    assert lock["kdf"]["iterations"] >= 600_000 and len(bytes.fromhex(lock["kdf"]["salt"])) == 16
    wrapped = {"iterations": lock["kdf"]["iterations"], "salt": lock["kdf"]["salt"], "key": lock["key"]}
    key = fmt.unwrap_key(wrapped, password, lock["album"])
    blob = (folder / lock["manifest"]).read_bytes()
    manifest = json.loads(fmt.open_bytes(key, fmt.additional_data(lock["album"], "manifest", lock["manifest"]), blob))
    return Opened(folder, lock, key, manifest)


def sealed_folders(site: Path) -> list[Path]:
    return sorted(p.parent for p in (site / "p").glob("*/sealed.json"))
