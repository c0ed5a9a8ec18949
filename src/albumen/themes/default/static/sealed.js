/* Albumen password albums: decrypted here, in the browser, with the Web Crypto API.
 * sealed.json (beside this page) holds the album's content key wrapped under a key derived from the
 * password (PBKDF2-HMAC-SHA256); the manifest and every file are AES-256-GCM, chunked, each chunk
 * bound to the album, the file's role and name, its place and whether it is the last (the format is
 * albumen/seal/format.py's). The password is asked once; "remember" keeps the derived key (a
 * non-extractable CryptoKey, never the password) in this browser's IndexedDB until "forget".
 * The album is drawn in the theme's grid; #<id> in the address opens a sub-album or a photo. */
(function () {
  "use strict";
  var doc = document, root = doc.documentElement;
  var form = doc.querySelector("[data-sealed]");
  if (!form) return;
  var statusEl = form.querySelector(".sealed-status"), main = doc.querySelector(".sealed-album");
  var tools = doc.querySelector(".sealed-tools"), forgetBtn = doc.querySelector("[data-sealed-forget]");
  var subtle = window.crypto && window.crypto.subtle;
  var enc = new TextEncoder();
  var PREFIX = "albumen-sealed/1\0", DB = "albumen-sealed", STORE = "keys";
  var lock = null, key = null, manifest = null, where = {};  // media id -> album id
  var urls = {};  // file name -> Promise of a blob: URL
  var fileTypes = null;  // display image file name -> its type

  function msg(k, vars) {
    var text = form.getAttribute("data-" + k) || k;
    for (var v in vars || {}) text = text.split("%(" + v + ")s").join(vars[v]);
    return text;
  }
  function state(s) { root.setAttribute("data-sealed-state", s); }
  function say(text, error) { statusEl.textContent = text || ""; statusEl.className = "sealed-status" + (error ? " is-error" : ""); }
  function el(tag, cls, attrs) {
    var e = doc.createElement(tag);
    if (cls) e.className = cls;
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function text(tag, cls, value) { var e = el(tag, cls); e.textContent = value || ""; return e; }
  function hex(s) {
    var out = new Uint8Array(s.length / 2);
    for (var i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
    return out;
  }
  function join() {
    var parts = Array.prototype.slice.call(arguments), n = 0, at = 0;
    parts.forEach(function (p) { n += p.length; });
    var out = new Uint8Array(n);
    parts.forEach(function (p) { out.set(p, at); at += p.length; });
    return out;
  }
  function NetworkError(why) { this.why = why; }

  /* ---------- fetching and decrypting ---------- */
  function get(url, fresh) {
    return fetch(url, fresh ? { cache: "no-cache" } : {}).then(function (r) {
      if (!r.ok) throw new NetworkError("HTTP " + r.status);
      return r;
    }, function (e) { throw new NetworkError(e && e.message || "offline"); });
  }
  function chunkAad(header, base, index, last) {
    var tail = new Uint8Array(5);
    new DataView(tail.buffer).setUint32(0, index);
    tail[4] = last ? 1 : 0;
    return join(header, base, tail);
  }
  /* A sealed file's plaintext as a list of ArrayBuffers, decrypted a chunk at a time as it arrives
     (a video is never held whole, encrypted and decrypted, in memory). */
  async function openFile(name, role) {
    var response = await get(name, role === "manifest");
    var reader = response.body.getReader();
    var base = enc.encode(PREFIX + lock.album + "\0" + role + "\0" + name);
    var buf = new Uint8Array(0), header = null, step = 0, index = 0, parts = [], done = false;
    async function decrypt(piece, last) {
      var plain = await subtle.decrypt({ name: "AES-GCM", iv: piece.subarray(0, 12), additionalData: chunkAad(header, base, index, last) },
                                       key, piece.subarray(12));
      parts.push(plain);
      index++;
    }
    while (!done) {
      var r;
      try { r = await reader.read(); } catch (e) { throw new NetworkError(e && e.message || "interrupted"); }
      if (r.done) done = true; else buf = join(buf, r.value);
      if (!header && buf.length >= 2) {
        if (buf[0] !== 1 || buf[1] < 10 || buf[1] > 30) throw new Error("format");
        header = buf.slice(0, 2); step = (1 << buf[1]) + 28; buf = buf.slice(2);
      }
      while (header && buf.length > step) {  // a whole chunk with more after it: not the last
        await decrypt(buf.subarray(0, step), false);
        buf = buf.slice(step);
      }
    }
    if (!header || buf.length < 28) throw new Error("format");
    await decrypt(buf, true);
    return parts;
  }
  function blobUrl(name, role, type) {
    if (!urls[name]) {
      urls[name] = openFile(name, role).then(function (parts) {
        return URL.createObjectURL(new Blob(parts, { type: type }));
      });
      urls[name].catch(function () { delete urls[name]; });
    }
    return urls[name];
  }
  function forgetUrl(name) {
    var p = urls[name];
    if (!p) return;
    delete urls[name];
    p.then(function (u) { URL.revokeObjectURL(u); }, function () {});
  }

  /* ---------- keys ---------- */
  async function passwordKey(password) {
    var kdf = lock.kdf;
    if (kdf.name !== "PBKDF2" || kdf.hash !== "SHA-256") throw new Error("format");
    var material = await subtle.importKey("raw", enc.encode(password.normalize("NFC")), "PBKDF2", false, ["deriveKey"]);
    return subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt: hex(kdf.salt), iterations: kdf.iterations },
                            material, { name: "AES-GCM", length: 256 }, false, ["unwrapKey"]);
  }
  function unwrap(pwKey) {
    var blob = hex(lock.key);
    return subtle.unwrapKey("raw", blob.subarray(12), pwKey,
                            { name: "AES-GCM", iv: blob.subarray(0, 12), additionalData: enc.encode(PREFIX + lock.album + "\0key") },
                            { name: "AES-GCM" }, false, ["decrypt"]);
  }
  function db(mode, fn) {
    return new Promise(function (resolve, reject) {
      if (!window.indexedDB) return resolve(null);
      var open = indexedDB.open(DB, 1);
      open.onupgradeneeded = function () { open.result.createObjectStore(STORE); };
      open.onerror = function () { resolve(null); };
      open.onsuccess = function () {
        var tx = open.result.transaction(STORE, mode), req = fn(tx.objectStore(STORE));
        tx.oncomplete = function () { open.result.close(); resolve(req && req.result); };
        tx.onerror = tx.onabort = function () { open.result.close(); reject(tx.error); };
      };
    });
  }
  var remembered = {
    get: function () { return db("readonly", function (s) { return s.get(lock.album); }).catch(function () { return null; }); },
    put: function (k) { return db("readwrite", function (s) { return s.put(k, lock.album); }).catch(function () {}); },
    drop: function () { return db("readwrite", function (s) { return s.delete(lock.album); }).catch(function () {}); }
  };

  /* ---------- unlocking ---------- */
  async function start() {
    if (!window.isSecureContext || !subtle) {
      state("insecure");
      say(msg("insecure"), true);
      Array.prototype.forEach.call(form.elements, function (e) { e.disabled = true; });
      return;
    }
    try {
      lock = await (await get("sealed.json", true)).json();
    } catch (e) {
      return fail(e);
    }
    var kept = await remembered.get();
    if (kept) {
      try {
        key = await unwrap(kept);
      } catch (e) {
        await remembered.drop();  // the password changed since
      }
      if (key) return open(true);
    }
    state("locked");
  }
  function fail(e) {
    state("error");
    if (e instanceof NetworkError) say(msg("network", { why: e.why }), true);
    else say(msg("broken"), true);
  }
  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    // typed and sent before the lock file came (a slow network): wait for it, or ask again if it failed
    if (!lock) await starting;
    if (!lock) { starting = start(); await starting; }
    if (!lock || key) return;
    var button = form.querySelector("button");
    var started = performance.now();
    window.sealedTimes = { submit: started };
    button.disabled = true;
    state("unlocking");
    say(msg("working"));
    var pwKey;
    try {
      pwKey = await passwordKey(form.elements.password.value);
      key = await unwrap(pwKey);
    } catch (e) {
      button.disabled = false;
      state("wrong");
      say(msg("wrong"), true);
      form.elements.password.select();
      return;
    }
    form.elements.password.value = "";
    window.sealedTimes.unwrapped = performance.now();
    if (form.elements.remember.checked) await remembered.put(pwKey);
    button.disabled = false;
    open(form.elements.remember.checked);
  });
  if (forgetBtn) forgetBtn.addEventListener("click", async function () {
    await remembered.drop();
    location.reload();
  });

  async function open(kept) {
    try {
      var parts = await openFile(lock.manifest, "manifest");
      manifest = JSON.parse(await new Blob(parts).text());
    } catch (e) {
      key = null;
      return fail(e);
    }
    Object.keys(manifest.albums).forEach(function (id) {
      manifest.albums[id].media.forEach(function (m) { where[m] = id; });
    });
    form.hidden = true;
    main.hidden = false;
    if (tools && kept) tools.hidden = false;
    say("");
    if (window.sealedTimes) window.sealedTimes.open = performance.now();
    state("open");
    addEventListener("hashchange", route);
    route();
  }

  /* ---------- the album ---------- */
  var shownAlbum = null, observer = null;
  function route() {
    var id = location.hash.slice(1);
    if (manifest.media[id]) {
      showAlbum(where[id] || manifest.root);
      viewer.show(id);
    } else {
      viewer.hide();
      showAlbum(manifest.albums[id] ? id : manifest.root);
    }
  }
  /* A description's HTML (sanitized by the build), its images of the album's own photos decrypted:
     parsed first (a parsed document fetches nothing), their sources set once decrypted. */
  function rich(container, html) {
    var parsed = new DOMParser().parseFromString(html, "text/html").body;
    var types = fileTypes;
    if (!types) {
      types = fileTypes = {};
      Object.keys(manifest.media).forEach(function (id) {
        manifest.media[id].sources.forEach(function (s) { s[1].forEach(function (f) { types[f[0]] = s[0]; }); });
      });
    }
    Array.prototype.forEach.call(parsed.querySelectorAll("img"), function (img) {
      var name = (img.getAttribute("src") || "").split("/").pop();
      img.removeAttribute("src");
      img.removeAttribute("srcset");
      if (types[name]) {
        blobUrl(name, "display", types[name]).then(function (u) { img.src = u; }, function () {});
      }
    });
    container.textContent = "";
    while (parsed.firstChild) container.appendChild(parsed.firstChild);
  }
  function lazyThumb(img, file, onload) {
    img.setAttribute("data-file", file);
    observer.observe(img);
    if (onload) img.addEventListener("load", onload, { once: true });
  }
  function lazyItemThumb(img, item, onload) {  // a WebP thumbnail when there is one
    var webp = (item.thumbs || []).filter(function (t) { return t[0] === "image/webp"; })[0];
    img.setAttribute("data-type", webp ? webp[0] : "image/jpeg");
    lazyThumb(img, webp ? webp[1] : item.thumb[0], onload);
  }
  function loadThumb(img) {
    var file = img.getAttribute("data-file");
    blobUrl(file, "thumb", img.getAttribute("data-type") || "image/jpeg").then(function (u) { img.src = u; }, function (e) {
      img.parentNode.parentNode.classList.add("is-broken");
      if (e instanceof NetworkError) say(msg("network", { why: e.why }), true);
    });
  }
  function firstPhoto() {
    if (window.sealedTimes && !window.sealedTimes.first) window.sealedTimes.first = performance.now();
  }
  function showAlbum(id) {
    if (shownAlbum === id) return;
    shownAlbum = id;
    var album = manifest.albums[id];
    if (observer) observer.disconnect();
    observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { observer.unobserve(e.target); loadThumb(e.target); }
      });
    }, { rootMargin: "100% 0px" });
    main.textContent = "";
    var crumbs = [], up = album.parent;
    while (up) { crumbs.unshift(up); up = manifest.albums[up].parent; }
    if (crumbs.length) {
      var nav = el("ul", "sealed-crumbs");
      crumbs.forEach(function (c) {
        var li = el("li"), a = text("a", null, manifest.albums[c].title);
        a.href = "#" + c;
        li.appendChild(a);
        nav.appendChild(li);
      });
      main.appendChild(nav);
    }
    var head = el("header", "album-header");
    head.appendChild(text("h1", null, album.title));
    var meta = el("p", "album-meta");
    if (album.dates) { var t = text("time", null, album.dates); t.setAttribute("datetime", album.iso); meta.appendChild(t); }
    meta.appendChild(text("span", null, album.counts));
    head.appendChild(meta);
    if (album.description) { var d = el("div", "description"); rich(d, album.description); head.appendChild(d); }
    main.appendChild(head);
    if (album.children.length || album.locked.length) {
      var section = el("section", "albums", { "aria-label": msg("albums") }), cards = el("ul", "cards");
      album.children.forEach(function (c, i) {
        var child = manifest.albums[c], li = el("li", "card"), a = el("a", null, { href: "#" + c });
        var cover = album.covers[i] && manifest.media[album.covers[i]];
        if (cover) {
          var span = el("span", "card-image", { style: "background-color:" + cover.colour });
          var img = el("img", null, { width: cover.thumb[1], height: cover.thumb[2], alt: "" });
          span.appendChild(img);
          a.appendChild(span);
          lazyItemThumb(img, cover);
        }
        a.appendChild(text("span", "card-title", child.title));
        var m = el("span", "card-meta");
        if (child.dates) m.appendChild(text("time", null, child.dates));
        m.appendChild(text("span", null, child.counts));
        a.appendChild(m);
        li.appendChild(a);
        cards.appendChild(li);
      });
      album.locked.forEach(function (l) {
        var li = el("li", "card is-locked"), a = el("a", null, { href: l.href });
        var span = el("span", "card-image", { "aria-hidden": "true" });
        span.innerHTML = '<svg viewBox="0 0 24 24"><rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/></svg>';
        a.appendChild(span);
        a.appendChild(text("span", "card-title", l.title));
        a.appendChild(text("span", "card-meta", msg("locked")));
        li.appendChild(a);
        cards.appendChild(li);
      });
      section.appendChild(cards);
      section.appendChild(el("i", "cards-end", { hidden: "" }));  // the theme paints the cards once this follows them
      main.appendChild(section);
    }
    if (album.media.length) {
      var grid = el("ul", "grid"), media = el("section", "media", { "aria-label": msg("photos") });
      album.media.forEach(function (mid, i) {
        var item = manifest.media[mid];
        var tile = el("li", "tile" + (item.kind === "video" ? " is-video" : ""), {
          id: mid, style: "--w:" + item.thumb[1] + ";--h:" + item.thumb[2] + ";background-color:" + item.colour +
            (item.preview && i < 36 ? ";background-image:url(" + item.preview + ")" : "")
        });
        var a = el("a", null, { href: "#" + mid, "data-index": String(i) });
        var img = el("img", null, { width: item.thumb[1], height: item.thumb[2], alt: item.alt, decoding: "async" });
        a.appendChild(img);
        if (item.video && item.video.duration) a.appendChild(text("span", "badge", item.video.duration));
        tile.appendChild(a);
        grid.appendChild(tile);
        lazyItemThumb(img, item, firstPhoto);
      });
      media.appendChild(grid);
      media.appendChild(el("i", "grid-end", { hidden: "" }));  // the theme paints a grid once this follows it
      main.appendChild(media);
    }
  }

  /* ---------- the viewer ---------- */
  var viewer = (function () {
    var box = el("div", "sv", { role: "dialog", "aria-modal": "true", "aria-label": msg("viewer"), hidden: "" });
    var stage = el("div", "sv-stage"), bar = el("div", "sv-bar");
    var close = text("button", "sv-close", "✕"), prev = text("button", "sv-prev", "‹"), next = text("button", "sv-next", "›");
    close.setAttribute("aria-label", msg("close")); prev.setAttribute("aria-label", msg("prev")); next.setAttribute("aria-label", msg("next"));
    [close, prev, next].forEach(function (b) { b.type = "button"; });
    var count = text("span", "sv-count"), title = text("span", "sv-title"), date = text("time", "sv-date");
    var camera = text("span", "sv-camera"), desc = el("div", "sv-desc"), download = el("a", "sv-download");
    download.textContent = msg("download");
    [count, title, date, camera, download, desc].forEach(function (e) { bar.appendChild(e); });
    [stage, close, prev, next].forEach(function (e) { box.appendChild(e); });
    box.appendChild(bar);
    doc.body.appendChild(box);
    var current = null, list = [], opener = null, kept = [];

    function display(item) {
      var sets = item.sources, chosen = sets[0];
      sets.forEach(function (s) { if (s[0] === "image/webp") chosen = s; });
      var want = Math.min(innerWidth, innerHeight * item.thumb[1] / item.thumb[2]) * (window.devicePixelRatio || 1);
      var files = chosen[1], pick = files[files.length - 1];
      for (var i = 0; i < files.length; i++) if (files[i][1] >= want) { pick = files[i]; break; }
      return { name: pick[0], type: chosen[0] };
    }
    function keep(names) {  // the current photo's and its neighbours' files stay decrypted, no others
      kept.forEach(function (n) { if (names.indexOf(n) < 0) forgetUrl(n); });
      kept = names;
    }
    function preload(id) {
      var item = id && manifest.media[id];
      if (!item || item.kind !== "image") return null;
      var d = display(item);
      blobUrl(d.name, "display", d.type);
      return d.name;
    }
    function render(id) {
      current = id;
      var item = manifest.media[id], album = manifest.albums[where[id]];
      list = album.media;
      var i = list.indexOf(id);
      stage.textContent = "";
      count.textContent = msg("photo", { n: i + 1, total: list.length });
      title.textContent = item.title;
      date.textContent = item.date;
      date.setAttribute("datetime", item.iso || "");
      camera.textContent = item.camera;
      rich(desc, item.description);
      prev.hidden = i <= 0;
      next.hidden = i >= list.length - 1;
      download.hidden = !item.original;
      download.removeAttribute("href");
      var names = [];
      if (item.kind === "video") {
        var v = item.video, video = el("video", null, { controls: "", playsinline: "", width: v.poster[1], height: v.poster[2] });
        stage.appendChild(video);
        blobUrl(v.poster[0], "display", "image/jpeg").then(function (u) { if (current === id) video.poster = u; });
        var source = v.sources.filter(function (s) { return video.canPlayType(s[0]); })[0] || v.sources[v.sources.length - 1];
        blobUrl(source[1], "video", source[0].split(";")[0]).then(function (u) { if (current === id) video.src = u; }, broken);
        v.tracks.forEach(function (t) {
          blobUrl(t[0], "track", "text/vtt").then(function (u) {
            if (current === id) video.appendChild(el("track", null, { kind: "captions", src: u, srclang: t[1], label: t[2] }));
          });
          names.push(t[0]);
        });
        names.push(v.poster[0], source[1]);
      } else {
        var d = display(item), img = el("img", "sv-img", { alt: item.alt });
        stage.appendChild(img);
        fit(img, item);
        blobUrl(d.name, "display", d.type).then(function (u) { if (current === id) img.src = u; }, broken);
        names.push(d.name);
      }
      names.push(preload(list[i + 1]), preload(list[i - 1]));
      keep(names.filter(Boolean));
    }
    function fit(img, item) {  // as large as the screen allows, never past the largest published size
      var largest = item.sources[0][1][item.sources[0][1].length - 1];
      var scale = Math.min((stage.clientWidth || innerWidth) / largest[1], (stage.clientHeight || innerHeight) / largest[2], 1);
      img.style.width = Math.max(1, Math.round(largest[1] * scale)) + "px";
      img.style.height = Math.max(1, Math.round(largest[2] * scale)) + "px";
    }
    addEventListener("resize", function () {
      var img = stage.querySelector("img");
      if (img && current) fit(img, manifest.media[current]);
    });
    function broken(e) { if (e instanceof NetworkError) say(msg("network", { why: e.why }), true); else stage.textContent = msg("broken"); }
    function go(delta) {
      var i = list.indexOf(current) + delta;
      if (i < 0 || i >= list.length) return;
      history.replaceState(null, "", "#" + list[i]);
      render(list[i]);
    }
    function to(i) { if (list[i] && list[i] !== current) { history.replaceState(null, "", "#" + list[i]); render(list[i]); } }
    function leave() { location.hash = where[current] === manifest.root ? "" : where[current]; }
    close.addEventListener("click", leave);
    prev.addEventListener("click", function () { go(-1); });
    next.addEventListener("click", function () { go(1); });
    download.addEventListener("click", function (e) {
      var item = manifest.media[current];
      if (!item.original || download.href) return;
      e.preventDefault();
      blobUrl(item.original[0], "original", "application/octet-stream").then(function (u) {
        download.href = u; download.download = item.original[1]; download.click();
      }, broken);
    });
    doc.addEventListener("keydown", function (e) {
      if (box.hidden || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === "ArrowRight") go(1);
      else if (e.key === "ArrowLeft") go(-1);
      else if (e.key === "Home") to(0);
      else if (e.key === "End") to(list.length - 1);
      else if (e.key === "Escape") leave();
      else return;
      e.preventDefault();
    });
    var x0 = null;
    stage.addEventListener("pointerdown", function (e) { x0 = e.clientX; });
    stage.addEventListener("pointerup", function (e) {
      if (x0 !== null && Math.abs(e.clientX - x0) > 50) go(e.clientX < x0 ? 1 : -1);
      x0 = null;
    });
    return {
      show: function (id) {
        if (box.hidden) opener = doc.activeElement;
        box.hidden = false;
        root.classList.add("sv-open");
        render(id);
        close.focus();
      },
      hide: function () {
        if (box.hidden) return;
        box.hidden = true;
        root.classList.remove("sv-open");
        stage.textContent = "";
        keep([]);
        var tile = current && doc.getElementById(current);
        var link = tile && tile.querySelector("a");
        if (link) link.focus(); else if (opener && opener.focus) opener.focus();
        current = null;
      }
    };
  })();

  var starting = start();
})();
