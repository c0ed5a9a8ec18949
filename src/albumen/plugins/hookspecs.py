"""The hooks a plugin may implement, one function each (pluggy hook specifications).

Every hook is called by the stage that owns the work, never by build.py: the options schema when the
config is loaded, image filters by the planner (and their functions by the workers), media kinds by
the scanner (their readers and thumbnail makers by the workers), template folders and context and
extra pages by the renderer, extra output files by the writer. docs/PLUGINS.md is the guide; each
hook's docstring here is its contract.

A plugin implements a hook with a module-level function of the same name decorated with
`albumen.plugins.hookimpl`; it may take any subset of the hook's arguments, by name. `options` is
always the plugin's own options (its `[plugin.NAME]` table, validated: see albumen_options), or
None when it declares none.

Order: plugins are called in the order of the config's `plugins` (a filter of the first one sees the
pixels before a filter of the second); `@hookimpl(tryfirst=True)` or `(trylast=True)` moves one
implementation to the front or the back. Hook wrappers are refused: each implementation is called
on its own, so that a failure names its plugin.

Errors: a hook that raises fails what it was working on, never the build: the media (skipped, its
reason 'plugin NAME: ...'), the page (not written this time, with a warning), the extra output (the
same). The build goes on and says so; --strict fails on it.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "albumen"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def albumen_options() -> type | None:
    """The plugin's options: a frozen dataclass whose fields are declared with
    `albumen.plugins.setting(default, doc, **rules)`, as the core settings are (types bool, int,
    float, str, lists of int or str; rules min, max, choices, item_choices, kind='path').

    Where: loading the config, in the build process, before any work. The `[plugin.NAME]` table
    is validated against it with the core's messages, every problem at once (an unknown key with a
    did-you-mean hint); `albumen init` and docs/SETTINGS.md list the bundled plugins' options from it.
    A 'path' option is resolved against the config's folder, must name a file, and the file's content
    is part of the plugin's recipe (a new watermark image re-makes the images it marks).
    Returns: the dataclass (the class, not an instance), or None for no options."""


@hookspec
def albumen_image_filters(options: Any, media: Any) -> Any:
    """The filters to run on one photo's or video's images, in the worker processes.

    Where: the planner (process/plan.py), in the build process, once per photo and video of the
    gallery at every build (keep it cheap; it must give the same answer for the same media and
    options). media: an `albumen.plugins.MediaFacts` with every fact filled in (src_uri, name, kind,
    album, album_title, title, author, copyright, date, private, width, height; and album_meta, the header of
    the album's index.md, read-only, which only this hook sees: a per-album setting reaches the worker in the
    filter's options).
    Returns: an `ImageFilter`, a list of them, or None. An ImageFilter names its function by import
    path ('package.module:function'): each worker imports it by that name, so filters work whether
    workers are forked, forked from a server or spawned. It says which outputs it applies to (roles:
    'thumb', 'display', 'original', 'poster' of a video) and which media facts its function needs
    (only those reach the worker, and only those are part of the recipe).

    Recipe: the plugin's name, version and options, the function's path and the facts asked for are
    part of the name of every output the filter applies to: changing an option re-makes exactly
    those outputs, and nothing else."""


@hookspec
def albumen_media_kinds(options: Any) -> Any:
    """Kinds of media that are not photos or videos (documents, say), which the plugin reads.

    Where: the scanner (scan/), in the build process, once per build; the kinds' `read` and
    `thumbnail` functions run in the worker processes, imported by name.
    Returns: a `MediaKind`, a list of them, or None. A file whose content is not a photo or a video
    and whose extension a kind claims is read by the kind's `read(abs_path, ctx)`, which returns a
    `KindInfo` (the picture's size, and title, date, description, author when known), or None when the
    file is not of this kind (the file is then ignored), or raises (the file is skipped, the reason
    naming the plugin). Such an item is published as a tile in its album (its thumbnail, made by
    `thumbnail(abs_path, width, height, ctx)`, which returns a Pillow image; its type; a link to
    download the file, published as it is under the kind's extension); it has no page of its own and
    is not in the stream or the feeds."""


@hookspec
def albumen_rewrite_title(options: Any, title: str, kind: str, src_uri: str, name: str) -> Any:
    """A new title for an album or a media item (rules that strip a date from folder names, say).

    Where: the scanner (scan/titles.py), in the build process, for every album and for every media
    item that has a title, once per build that is not the "nothing changed" shortcut, before albums
    and media are sorted (a sort by title sees the new titles). title: the title as it is now (the
    last plugin's result when several rewrite it); kind: 'album', or the media's kind ('image',
    'video', a plugin media kind's name); src_uri: its path in the photo folder ('' the home album);
    name: its folder or file name.
    Returns: the new title, or None (or an empty text) to leave it as it is. It must depend only on
    the options and its arguments. Raising leaves the title as it was, with a warning naming the
    plugin."""


@hookspec
def albumen_template_dirs(options: Any) -> Any:
    """Folders of templates the plugin's pages use.

    Where: the renderer, once per build. They are searched after the theme's own folders, so a theme
    can restyle a plugin's page by having a template of the same name; the files are part of the
    site's fingerprint (an edit renders the pages again).
    Returns: a folder (str or Path), a list of them, or None."""


@hookspec
def albumen_site_context(options: Any, site: Any) -> Any:
    """Template variables for every page: templates see them as `plugins.NAME.KEY`.

    Where: the renderer, once per build. site: the `SiteView` templates see as `site`.
    Returns: a dict, or None. It must depend only on the options and the site: it is not checked
    when a page is kept because nothing it shows changed."""


@hookspec
def albumen_page_context(options: Any, page: Any, context: Any, site: Any, gallery: Any) -> Any:
    """Template variables for one page, merged over the site's (see albumen_site_context) under
    `plugins.NAME`.

    Where: the renderer, for each page it renders (a page whose content did not change is not
    rendered, so this must depend only on the options and on what the page shows). page: its
    `PageView` (page.kind is 'album', 'media', 'stream', '404', 'feed' or 'plugin'; page.private is
    true behind a private link); context: what the template receives besides (album, media,
    stream...), not to be changed; gallery: the `PluginGallery` (see albumen_extra_pages), for an
    album's sidecar (`gallery.album_meta(uri)`) or the size of a file already made
    (`gallery.file_size(dest_uri)`).
    Returns: a dict, or None. Raising fails that page: it is not written this time (the file of the
    last build stays), with a warning naming the plugin."""


@hookspec
def albumen_extra_pages(options: Any, gallery: Any) -> Any:
    """Pages of the plugin's own (an index of tags, a map).

    Where: the renderer, once per build, after the albums', the stream's and the feeds' pages.
    gallery: a `PluginGallery`, the gallery as views: `gallery.albums()` gives the public albums
    only; `gallery.private_albums()` those behind a private link, each with its own folder.
    Returns: `ExtraPage`s (an iterable), or None. Each names its file (dest_uri, relative to the
    site) and gives either its content or a template (from albumen_template_dirs or the theme) and
    context; it is claimed like every page, so two pages (or a plugin's and an album's) claiming one
    path stop the build before anything is written there. A page under a private album's folder
    (below 'p/') is private: not indexed and not in the sitemap. Privacy is the plugin's duty:
    a public page must show nothing of a private album (use gallery.albums() for it).
    Raising (or an iterable that raises): none of the plugin's pages this build, with a warning
    naming the plugin; its pages of the last build are removed with the other stale files."""


@hookspec
def albumen_extra_outputs(options: Any, gallery: Any, outputs: Any) -> Any:
    """Files of the plugin's own besides the pages: archives, compressed copies, assets.

    Where: the writer, once per build, after every page and static file is written and before the
    files no longer part of the site are removed. gallery: as for albumen_extra_pages. outputs: a
    `BuildOutputs`, every file of the site this build counts as its own (`outputs.files()`, with the
    size and modification time each was written with; `outputs.abs_path(dest_uri)` to read one).
    Returns: `OutputFile`s (an iterable), or None. Each is recorded in the build cache like every
    output: one not given again is removed at the end of the build, and one whose key is the same as
    at the last build (and whose file is as it was written) is neither made nor written again. A
    private album's files go below its folder; a public file must hold nothing of a private album.
    Raising: the files given before are written, the others not (those of the last build are removed
    with the other stale files), with a warning naming the plugin; an OutputFile whose `write`
    raises is not written (the last build's file stays, and the next build tries again)."""
