"""Translations of the theme's strings and localized dates, without a compile step.

Templates use Jinja's i18n extension (`{{ _("Photos") }}`, `{% trans %}`); the
catalogue is a plain dict per language, English being the source text.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from markupsafe import Markup

CATALOGUES: dict[str, dict[str, str]] = {
    "fr": {
        "Home": "Accueil",
        "Albums": "Albums",
        "Photos": "Photos",
        "Previous": "Précédente",
        "Next": "Suivante",
        "Previous page": "Page précédente",
        "Next page": "Page suivante",
        "Page %(n)s of %(total)s": "Page %(n)s sur %(total)s",
        "Pages": "Pages",
        "Back to the album": "Retour à l’album",
        "Read more": "Lire la suite",
        "Show less": "Réduire",
        "Album": "Album",
        "Download original": "Télécharger l’original",
        "Photo %(n)s of %(total)s": "Photo %(n)s sur %(total)s",
        "Video %(n)s of %(total)s": "Vidéo %(n)s sur %(total)s",
        "Photo %(n)s of %(total)s, %(album)s": "Photo %(n)s sur %(total)s, %(album)s",
        "Photo %(n)s of %(total)s, %(album)s, %(date)s": "Photo %(n)s sur %(total)s, %(album)s, %(date)s",
        "%(num)s photo": "%(num)s photo",
        "%(num)s photos": "%(num)s photos",
        "%(num)s video": "%(num)s vidéo",
        "%(num)s videos": "%(num)s vidéos",
        "%(num)s album": "%(num)s album",
        "%(num)s albums": "%(num)s albums",
        "Camera": "Appareil",
        "Lens": "Objectif",
        "Exposure": "Exposition",
        "Aperture": "Ouverture",
        "ISO": "ISO",
        "Focal length": "Focale",
        "Location": "Lieu",
        "Date": "Date",
        "Author": "Auteur",
        "Tags": "Mots-clés",
        "Details": "Détails",
        "Close": "Fermer",
        "Information": "Informations",
        "Fullscreen": "Plein écran",
        "Slideshow": "Diaporama",
        "Zoom": "Zoom",
        "Breadcrumb": "Fil d’Ariane",
        "Made with %(name)s": "Fait avec %(name)s",
        "Skip to content": "Aller au contenu",
        "Latest photos": "Dernières photos",
        "Stream": "Flux",
        "Page not found": "Page introuvable",
        "Map": "Carte",
        "in %(album)s": "dans %(album)s",
        "Photo viewer": "Visionneuse",
        "Play": "Lecture",
        "Pause": "Pause",
        "equiv.": "équiv.",
        "Sub-albums": "Sous-albums",
        "Loading": "Chargement",
        "Download the album": "Télécharger l’album",
        "ZIP, %(size)s": "ZIP, %(size)s",
    },
}

MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
           "octobre", "novembre", "décembre"],
}


@lru_cache(maxsize=16)
def gettext_for(language: str):
    catalogue = CATALOGUES.get(language, {})

    def gettext(message: str) -> str:
        return catalogue.get(message, message)

    def ngettext(singular: str, plural: str, n: int) -> str:
        if language == "fr":
            chosen = singular if n <= 1 else plural
        else:
            chosen = singular if n == 1 else plural
        return catalogue.get(chosen, chosen)

    return gettext, ngettext


def template_gettext(language: str):
    """gettext and ngettext as templates call them, each in one function: what Jinja's i18n extension
    makes of gettext_for's (new style: the translation is a Markup where the template escapes, and
    always %-formatted with the call's keywords, ngettext's `num` being the count unless given).

    A string without keywords comes out the same every time: it is kept (the first 1,024 such)."""
    from jinja2 import pass_eval_context  # (Jinja is imported with the renderer: see render.writer)

    translate, translate_n = gettext_for(language)  # the catalogue and the plural rule
    plain: dict[str, str] = {}
    escaped: dict[str, str] = {}

    @pass_eval_context
    def gettext(eval_ctx, string: str, /, **variables) -> str:
        kept = None if variables or type(string) is not str else escaped if eval_ctx.autoescape else plain
        if kept is not None and string in kept:
            return kept[string]
        rv = translate(string)
        rv = (Markup(rv) if eval_ctx.autoescape else rv) % variables
        if kept is not None and len(kept) < 1024:
            kept[string] = rv
        return rv

    @pass_eval_context
    def ngettext(eval_ctx, singular: str, plural: str, num: int, /, **variables) -> str:
        variables.setdefault("num", num)
        rv = translate_n(singular, plural, num)
        return (Markup(rv) if eval_ctx.autoescape else rv) % variables

    return gettext, ngettext


def format_counts(photos: int, videos: int, language: str) -> str:
    """'30 photos, 1 video', '1 video', '2 photos': each kind counted apart (a video is not a photo)."""
    _, ngettext = gettext_for(language)
    parts = [ngettext("%(num)s photo", "%(num)s photos", photos) % {"num": photos}] if photos or not videos else []
    if videos:
        parts.append(ngettext("%(num)s video", "%(num)s videos", videos) % {"num": videos})
    return ", ".join(parts)


def format_date(value: datetime | None, language: str) -> str:
    """'2 July 2024' / '2 juillet 2024'."""
    if value is None:
        return ""
    months = MONTHS.get(language, MONTHS["en"])
    day = "1er" if language == "fr" and value.day == 1 else str(value.day)
    return f"{day} {months[value.month - 1]} {value.year}"


def format_iso(value: datetime | None) -> str:
    """ISO 8601 to the second, with the offset when known: for datetime attributes, Atom and the viewer.

    The sub-seconds that keep a burst in order are for sorting only; printed, they would make every
    date look different from the camera's.
    """
    return value.isoformat(timespec="seconds") if value is not None else ""


def format_datetime(value: datetime | None, language: str) -> str:
    if value is None:
        return ""
    return f"{format_date(value, language)}, {value:%H:%M}"


def format_date_range(start: datetime | None, end: datetime | None, language: str) -> str:
    """'2–5 July 2024', '30 June – 2 July 2024', '2023 – 2024'-style compact ranges."""
    if start is None or end is None:
        return format_date(start or end, language)
    if start.date() == end.date():
        return format_date(start, language)
    months = MONTHS.get(language, MONTHS["en"])
    if (start.year, start.month) == (end.year, end.month):
        return f"{start.day}–{end.day} {months[end.month - 1]} {end.year}"
    if start.year == end.year:
        return f"{start.day} {months[start.month - 1]} – {end.day} {months[end.month - 1]} {end.year}"
    return f"{months[start.month - 1]} {start.year} – {months[end.month - 1]} {end.year}"
