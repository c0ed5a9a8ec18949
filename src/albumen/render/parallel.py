"""Pages rendered in the worker processes.

A page task is data (views and the page's fields), so a worker renders it with a Jinja
environment of its own, made once per theme and language and kept for the build. A template
error comes back as data and stops the build in the parent, as it would have there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import BuildError
from .env import make_environment


@dataclass(frozen=True, slots=True)
class ThemeSetup:
    """What a worker needs to make the same Jinja environment as the parent."""

    dirs: tuple[str, ...]
    language: str
    links: str
    base_url: str


@dataclass(frozen=True, slots=True)
class RenderFailed:
    message: str
    hint: str | None = None


@lru_cache(maxsize=4)
def environment(setup: ThemeSetup):
    return make_environment([Path(d) for d in setup.dirs], setup.language, setup.links, setup.base_url)


def render_bytes(env, site, task) -> bytes:
    """One page; a template problem becomes a BuildError naming the template and line."""
    if not task.template:  # generated text (sitemaps, robots.txt)
        return task.context["text"].encode("utf-8")
    try:
        text = env.get_template(task.template).render(site=site, page=task.page, **task.context)
    except Exception as exc:
        where = getattr(exc, "filename", None) or task.template
        line = getattr(exc, "lineno", None)
        location = f"{where}, line {line}" if line else where
        raise BuildError(f"template error in {location}: {exc}", hint="fix the theme template and build again") from exc
    return text.encode("utf-8")


def render_batch(batch: tuple) -> list[bytes] | RenderFailed:
    """(setup, site, tasks) -> every page's bytes, in task order, or the first failure."""
    setup, site, tasks = batch
    env = environment(setup)
    try:
        return [render_bytes(env, site, task) for task in tasks]
    except BuildError as exc:
        return RenderFailed(exc.message, exc.hint)
