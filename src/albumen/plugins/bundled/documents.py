"""Documents in albums: PDFs (and files of other extensions you choose) shown as tiles after the photos,
with a picture of their first page (PDFs, drawn with PDFium) or of their type, and a link that downloads
the file as it is.

A PDF that cannot be read (damaged, or locked with a password) is skipped, named with the reason, like
a photo that cannot be read; the build goes on. A sidecar (`report.pdf.md`) gives a document a title, as
it does a photo. Documents have no page of their own and are not in the stream or the feeds.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from datetime import datetime

from albumen.plugins import KindInfo, MediaKind, hookimpl, setting

__version__ = "1"

# what a web server runs or shows as a page: never published as a document (see plugins.manager)
_REFUSED = {"html", "htm", "xhtml", "shtml", "svg", "svgz", "xml", "xsl", "js", "mjs", "css", "php", "phtml", "php3",
            "php4", "php5", "phar", "asp", "aspx", "jsp", "cgi", "pl", "py", "rb", "sh", "htaccess"}
_TILE = (300, 400)  # the proportions of a tile of a document that is not a PDF


@dataclass(frozen=True)
class Options:
    extensions: tuple[str, ...] = setting(
        ["pdf"],
        "Extensions of the files shown as documents (without the dot), e.g. ['pdf', 'epub', 'gpx']. PDFs get a "
        "picture of their first page, the others a tile with their type. Extensions a web server would run or "
        "show as a page (html, svg, js, php...) are refused.",
    )

    def __post_init__(self) -> None:
        exts = tuple(dict.fromkeys(e.lstrip(".").lower() for e in self.extensions))
        bad = [e for e in exts if not e.isascii() or not e.isalnum()]
        if bad or not exts:
            raise ValueError(f"extensions: expected extensions such as 'pdf', got {list(self.extensions)!r}")
        served = [e for e in exts if e in _REFUSED]
        if served:
            raise ValueError(f"extensions: {', '.join(served)}: a web server would run or show such a file as a page")
        object.__setattr__(self, "extensions", exts)


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_media_kinds(options: Options):
    kinds = []
    for ext in options.extensions:
        pdf = ext == "pdf"
        kinds.append(MediaKind(
            f"document_{ext}", ext.upper(), (f".{ext}",),
            read=f"{__name__}:{'read_pdf' if pdf else 'read_other'}",
            thumbnail=f"{__name__}:{'picture_pdf' if pdf else 'picture_other'}",
            mime=mimetypes.guess_type(f"x.{ext}")[0] or "application/octet-stream", version=__version__,
            options=(),  # reading and drawing depend on no option: another extension re-makes nothing of this one
        ))
    return kinds


# -- run in the workers ---------------------------------------------------------------------------


def read_pdf(abs_path: str, ctx) -> KindInfo:
    """The first page's size (in points: the thumbnail's proportions) and the date the PDF says it was made."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(abs_path)
    try:
        if len(pdf) < 1:
            raise ValueError("a PDF without pages")
        width, height = pdf[0].get_size()
        made = pdf.get_metadata_dict(skip_empty=True).get("CreationDate", "")
    finally:
        pdf.close()
    if not (width > 0 and height > 0):
        raise ValueError(f"its first page is {width} x {height} points")
    return KindInfo(max(1, round(width)), max(1, round(height)), date=_pdf_date(made))


def picture_pdf(abs_path: str, width: int, height: int, ctx):
    """The first page, drawn on white at about width x height pixels (covering them)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(abs_path)
    try:
        page = pdf[0]
        page_width, page_height = page.get_size()
        scale = max(width / page_width, height / page_height)
        scale = min(scale, 4096 / max(page_width, page_height))  # a page of strange proportions stays small
        image = page.render(scale=scale, fill_color=(255, 255, 255, 255)).to_pil()
    finally:
        pdf.close()
    return image.convert("RGB")


def read_other(abs_path: str, ctx) -> KindInfo:
    return KindInfo(*_TILE)


def picture_other(abs_path: str, width: int, height: int, ctx):
    """A plain page with the file's type written on it."""
    import os

    from PIL import Image, ImageDraw, ImageFont

    label = os.path.splitext(abs_path)[1].lstrip(".").upper()[:8] or "FILE"
    image = Image.new("RGB", (width, height), (236, 238, 241))
    draw = ImageDraw.Draw(image)
    margin = max(2, width // 12)
    draw.rectangle((margin, margin, width - margin - 1, height - margin - 1), fill=(255, 255, 255), outline=(180, 184, 190),
                   width=max(1, width // 150))
    font = ImageFont.load_default(size=max(8, (width - 4 * margin) // max(3, len(label))))
    draw.text((width / 2, height / 2), label, fill=(90, 96, 104), font=font, anchor="mm")
    return image


def _pdf_date(text: str) -> datetime | None:
    """A PDF date ('D:20240702101112+02'00''), as the wall-clock time it says (naive)."""
    found = re.match(r"(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?", text or "")
    if not found:
        return None
    year, month, day, hour, minute, second = (int(g) if g else d for g, d in zip(found.groups(), (0, 1, 1, 0, 0, 0),
                                                                                 strict=True))
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
