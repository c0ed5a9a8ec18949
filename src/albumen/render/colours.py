"""The accent colour a site sets, made readable on the theme's light and dark pages.

A link in the accent colour must keep a contrast of 4.5:1 with the page (WCAG AA), whatever colour
the photographer picks: it is darkened on light pages and lightened on dark ones just as far as
that needs, and left as it is when it is readable already.
"""

from __future__ import annotations

LIGHT_PAGE = "#fafaf9"  # the default theme's backgrounds (albumen.css: --bg)
DARK_PAGE = "#121315"
MIN_CONTRAST = 4.6  # 4.5, and a little room for rounding


def _rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(_rgb(a)), _luminance(_rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _hex(rgb) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def readable_on(accent: str, page: str) -> str:
    """The accent, mixed with black (on a light page) or white (on a dark one) until it reads."""
    towards = 0.0 if _luminance(_rgb(page)) > 0.5 else 1.0
    rgb = _rgb(accent.lower())
    for step in range(101):
        t = step / 100
        mixed = _hex(c + (towards - c) * t for c in rgb)
        if contrast(mixed, page) >= MIN_CONTRAST:
            return mixed
    return _hex((towards,) * 3)


def accent_style(accent: str) -> str:
    """CSS custom properties for the theme: '--al:#…;--ad:#…' (light and dark pages), '' for the default."""
    if not accent:
        return ""
    return f"--al:{readable_on(accent, LIGHT_PAGE)};--ad:{readable_on(accent, DARK_PAGE)}"
