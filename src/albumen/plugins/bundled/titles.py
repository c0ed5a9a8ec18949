"""Rules that rewrite album and media titles with regular expressions (Sigal's titleregexp), e.g. strip
the `2024-07-02 ` date that starts folder names.

Each rule is applied in turn to each title, the next one seeing what the previous made. The rules are
checked when the config is loaded: a pattern that is not a regular expression, or a replacement that
names a group the pattern does not have, is a configuration error naming its key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from albumen.plugins import hookimpl, setting

__version__ = "1"


@dataclass(frozen=True)
class Rule:
    """One rule: a table of [plugin.titles] rules."""

    pattern: str = setting("", "A regular expression (Python's syntax), searched in each title.", required=True)
    replace: str = setting("", "What replaces each match: text, with \\1 or \\g<name> for the pattern's groups.")
    count: int = setting(0, "Most replacements in one title; 0: every match.", min=0)
    albums: bool = setting(True, "Rewrite albums' titles (from index.md, else the folder's name).")
    media: bool = setting(True, "Rewrite photos' and videos' titles (those they have, from a sidecar or the file).")

    def __post_init__(self) -> None:
        if not self.pattern:
            raise ValueError("pattern: expected a regular expression, got an empty text")
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern: not a regular expression ({exc}): {self.pattern!r}") from None
        _check_replacement(compiled, self.replace)


@dataclass(frozen=True)
class Options:
    rules: tuple[Rule, ...] = setting(
        (),
        "The rules, in the order they apply: a list of tables, each with `pattern` (a regular expression), "
        "`replace` (default ''), `count` (most replacements, 0: all), `albums` and `media` (which titles; "
        "default both). A title a rule leaves empty keeps what it was. Example: "
        "rules = [{ pattern = '^\\d{4}-\\d{2}-\\d{2} ', replace = '' }].",
        kind="tables", item=Rule,
    )


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_rewrite_title(options: Options, title: str, kind: str):
    target = "albums" if kind == "album" else "media"
    for rule in options.rules:
        if getattr(rule, target):
            title = re.sub(rule.pattern, rule.replace, title, count=rule.count)
    return title.strip() or None


def _check_replacement(compiled: re.Pattern, replace: str) -> None:
    """A replacement's group references and escapes, checked as re.sub would on a match: the pattern is
    made optional (it then matches the empty text) so that its replacement is expanded once."""
    if "\\" not in replace:
        return
    flags = re.match(r"(?:\(\?[aiLmsux]+\))*", compiled.pattern).group(0)  # global flags stay in front
    try:
        optional = re.compile(f"{flags}(?:{compiled.pattern[len(flags):]})?", compiled.flags)
    except re.error:
        return  # (the pattern itself is valid: a form this check cannot wrap)
    try:
        optional.sub(replace, "", count=1)
    except (re.error, IndexError) as exc:
        raise ValueError(f"replace: {exc} in {replace!r}") from None
