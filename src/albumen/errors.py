"""One exception tree for the whole tool.

Every error a user can meet carries what went wrong, where (a path, a config key)
and, when there is one, what to do about it. The command line turns these into a
message and an exit code; nothing below the CLI prints or exits.
"""

from __future__ import annotations


def described(exc: BaseException) -> str:
    """An unexpected exception as one line: its type and the first line of its message."""
    return f"{type(exc).__name__}: {first_line(exc)}"


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message ('' when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


class AlbumenError(Exception):
    """Base of every error Albumen raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class UsageError(AlbumenError):
    """The command line asks for something impossible; nothing was written."""

    exit_code = 2


class ConfigError(AlbumenError):
    """The configuration is unreadable or invalid. Carries every problem at once."""

    exit_code = 2

    def __init__(self, problems: list[str], *, path: str | None = None) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        where = path or "configuration"
        count = len(self.problems)
        super().__init__(
            f"{count} problem{'s' if count != 1 else ''} in {where}:\n{lines}",
            hint="fix these and run again; nothing was built",
        )
        self.config_path = path

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}"


class SourceError(AlbumenError):
    """The photo folder cannot be used (missing, unreadable, overlapping the output)."""

    exit_code = 2


class ProcessingError(AlbumenError):
    """One media file could not be turned into its outputs. Fails only its own job."""


class PluginError(AlbumenError):
    """A plugin's hook raised: what it was working on fails (a file, a page, an output), never the
    build, and the reason names the plugin."""

    def __init__(self, plugin: str, reason: str) -> None:
        super().__init__(f"plugin {plugin}: {reason}")
        self.plugin = plugin
        self.reason = reason


class BuildError(AlbumenError):
    """The build itself failed (a broken template, an unwritable output folder)."""

    exit_code = 1
