"""The development HTTP server: only files inside the output folder, Range requests, live reload.

The reload script is added to HTML responses on the fly; it is never written to the output.
"""

from __future__ import annotations

import email.utils
import json
import mimetypes
import os
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

EVENTS_PATH = "/__albumen/events"
TYPES = {
    ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
    ".json": "application/json", ".xml": "application/xml", ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
    ".webp": "image/webp", ".avif": "image/avif", ".ico": "image/x-icon", ".mp4": "video/mp4", ".m4v": "video/mp4",
    ".webm": "video/webm", ".mov": "video/quicktime", ".ogv": "video/ogg", ".vtt": "text/vtt; charset=utf-8",
    ".heic": "image/heic", ".tif": "image/tiff", ".tiff": "image/tiff", ".zip": "application/zip",
}

RELOAD_SCRIPT = """<script>/* albumen serve: live reload. Added by the dev server; not in the built site. */
(function () {
  function show(msg) {
    var d = document.getElementById("albumen-error") || document.createElement("div");
    d.id = "albumen-error"; d.setAttribute("role", "alert");
    d.style.cssText = "position:fixed;left:0;right:0;bottom:0;z-index:2147483647;max-height:50vh;overflow:auto;" +
      "background:#8b0000;color:#fff;font:14px/1.45 ui-monospace,monospace;padding:1rem;white-space:pre-wrap";
    d.textContent = "albumen: the last rebuild failed; this is the last good site.\\n\\n" + msg;
    document.body.appendChild(d);
  }
  var initial = __ERROR__;
  if (initial) show(initial);
  if (!window.EventSource) return;
  var es = new EventSource("__EVENTS__");
  es.addEventListener("reload", function () { location.reload(); });
  es.addEventListener("failed", function (e) { show(JSON.parse(e.data)); });
})();
</script>"""


def _host_name(host: str) -> str:
    """The name in a Host header, without its port: '[::1]:8000' and '[::1]' -> '::1'."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _folder_location(prefix: str, parts: list[str], query: str) -> str:
    """Where a folder asked for without its final '/' is: always a path of this site, built from the
    site's base path and the folder's own segments, percent-encoded again. The request's spelling is
    never echoed: '//evil.com' must not become a redirect to another host."""
    location = prefix + "/" + "".join(quote(part, safe="") + "/" for part in parts)
    return location + (f"?{query}" if query else "")


class EventHub:
    """Build outcomes for the browsers listening on the event stream."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._seq = 0
        self._event: tuple[str, str] = ("", "")
        self.closed = False

    def publish(self, name: str, data: str = "") -> None:
        with self._cond:
            self._seq += 1
            self._event = (name, data)
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> tuple[int, tuple[str, str] | None]:
        with self._cond:
            self._cond.wait_for(lambda: self._seq != seen or self.closed, timeout=timeout)
            if self._seq == seen:
                return seen, None
            return self._seq, self._event

    @property
    def seq(self) -> int:
        return self._seq

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class SiteServer:
    def __init__(self, root: str, host: str = "127.0.0.1", port: int = 8000, live: bool = True) -> None:
        self.root = os.path.realpath(root)
        self.hub = EventHub()
        self.error: str | None = None
        self.live = live
        # where the site lives on its real server ('/gallery/' for url = "https://x.org/gallery/"): the
        # site is served there too, as the 404 page links from there (see render.env.rooted_url)
        self.base_path = "/"
        server = self

        class Handler(SiteHandler):
            site = server

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        from . import is_loopback

        self.loopback = is_loopback(host)  # 127.0.0.2 too: its name is checked like 127.0.0.1's
        self.own_name = host.lower()
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="albumen-http", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else host
        return f"http://{shown}:{port}/"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.hub.close()
        self.httpd.shutdown()
        self.httpd.server_close()


class SiteHandler(BaseHTTPRequestHandler):
    site: SiteServer
    server_version = "albumen-serve"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # quiet: the terminal is for build output
        pass

    def do_HEAD(self) -> None:
        self._handle(head=True)

    def do_GET(self) -> None:
        self._handle(head=False)

    # -- routing ---------------------------------------------------------------------------
    def _handle(self, head: bool) -> None:
        if self.site.loopback and _host_name(self.headers.get("Host") or "") not in (
            "127.0.0.1", "localhost", "::1", "", self.site.own_name
        ):  # DNS rebinding: a page elsewhere must not read this site through its own name
            return self._fail(HTTPStatus.MISDIRECTED_REQUEST)
        split = urlsplit(self.path)
        raw_path = split.path
        if raw_path == EVENTS_PATH and self.site.live:
            return self._events()
        # the site is served at '/' and at the path of its url ('/gallery/'); prefix: which of the two
        base = self.site.base_path
        prefix = base.rstrip("/") if base != "/" and (raw_path + "/").startswith(base) else ""
        rest = raw_path[len(prefix):]  # '' for '/gallery' itself
        path = unquote(rest or "/")
        if "\x00" in path or "\\" in path or not path.startswith("/"):
            return self._fail(HTTPStatus.BAD_REQUEST)
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if any(p == ".." for p in parts):
            return self._fail(HTTPStatus.FORBIDDEN)
        target = os.path.join(self.site.root, *parts)
        real = os.path.realpath(target)
        root = self.site.root
        if real != root and not real.startswith(root + os.sep):
            return self._fail(HTTPStatus.FORBIDDEN)  # a symbolic link leading out of the output folder
        if os.path.isdir(real):
            if not rest.endswith("/"):
                return self._redirect(_folder_location(prefix, parts, split.query))
            real = os.path.realpath(os.path.join(real, "index.html"))
            if real != root and not real.startswith(root + os.sep):
                return self._fail(HTTPStatus.FORBIDDEN)  # an index.html that links out of the output folder
            if not os.path.isfile(real):
                return self._not_found(head)  # never a directory listing
        if not os.path.isfile(real):
            return self._not_found(head)
        self._file(real, head)

    def _not_found(self, head: bool) -> None:
        """The site's own 404 page, as a web server configured for it shows it (status 404)."""
        page = os.path.join(self.site.root, "404.html")
        if not os.path.isfile(page) or os.path.islink(page):
            return self._fail(HTTPStatus.NOT_FOUND)
        with open(page, "rb") as f:
            body = self._inject(f.read())
        self._send(HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", body, head, os.stat(page).st_mtime)

    def _fail(self, status: HTTPStatus) -> None:
        body = f"{status.value} {status.phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(HTTPStatus.MOVED_PERMANENTLY)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- files -----------------------------------------------------------------------------
    def _file(self, path: str, head: bool) -> None:
        ext = os.path.splitext(path)[1].lower()
        ctype = TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"
        stat = os.stat(path)
        if ext == ".html":
            with open(path, "rb") as f:
                body = self._inject(f.read())
            return self._send(HTTPStatus.OK, ctype, body, head, stat.st_mtime)
        size = stat.st_size
        start, end = 0, size - 1
        status = HTTPStatus.OK
        rng = self.headers.get("Range")
        if rng and not re.fullmatch(r"bytes=(\d+-\d*|-\d+)", rng.strip()):
            rng = None  # another unit, several ranges or nonsense: ignored, the whole file is sent (RFC 9110)
        if rng:
            parsed = _parse_range(rng.strip(), size)
            if parsed is None:
                self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start, end = parsed
            status = HTTPStatus.PARTIAL_CONTENT
        length = max(0, end - start + 1)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        self.send_header("Cache-Control", "no-cache")
        if status == HTTPStatus.PARTIAL_CONTENT:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if head:
            return
        with open(path, "rb") as f:
            f.seek(start)
            remaining = length
            while remaining > 0:
                chunk = f.read(min(1 << 16, remaining))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return
                remaining -= len(chunk)

    def _send(self, status: HTTPStatus, ctype: str, body: bytes, head: bool, mtime: float) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Last-Modified", email.utils.formatdate(mtime, usegmt=True))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _inject(self, html: bytes) -> bytes:
        if not self.site.live:
            return html
        script = RELOAD_SCRIPT.replace("__ERROR__", json.dumps(self.site.error).replace("<", "\\u003c"))
        script = script.replace("__EVENTS__", EVENTS_PATH).encode("utf-8")
        index = html.rfind(b"</body>")
        return html[:index] + script + html[index:] if index >= 0 else html + script

    # -- live reload ---------------------------------------------------------------------------
    def _events(self) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "keep-alive")
        self.end_headers()
        hub = self.site.hub
        seen = hub.seq
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while not hub.closed:
                seen, event = hub.wait(seen, timeout=15)
                if event is None:
                    self.wfile.write(b": ping\n\n")
                else:
                    name, data = event
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        self.close_connection = True


def _parse_range(header: str, size: int) -> tuple[int, int] | None:
    """A single 'bytes=a-b', 'bytes=a-' or 'bytes=-n' range; None when unsatisfiable."""
    if not header.startswith("bytes=") or "," in header:
        return None
    spec = header[len("bytes="):].strip()
    first, _, last = spec.partition("-")
    try:
        if first == "":
            n = int(last)
            if n <= 0 or size == 0:
                return None
            return max(0, size - n), size - 1
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return None
    return start, min(end, size - 1)
