"""Configurations of other gallery generators turned into an annotated `albumen.toml`.

They are read, never run: a Sigal configuration is Python, and executing a file to learn its
settings would run whatever else it does (pyconf reads its literal assignments only).
"""
