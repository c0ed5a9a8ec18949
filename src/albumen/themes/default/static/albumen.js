/* Albumen viewer: progressive enhancement over the per-photo pages.
 * Album pages: a click on a thumbnail opens the photo full screen without a page load and the
 * address bar shows that photo's own page; Back or Escape return to the album where it was.
 * Photo pages: keyboard and swipe navigation between the photo pages.
 * No framework, no external request. Strings come from the page (translated by the theme). */
(function () {
  "use strict";
  var doc = document, root = doc.documentElement;
  var reduced = window.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;

  function $(sel, el) { return (el || doc).querySelector(sel); }
  function on(el, type, fn, opt) { el.addEventListener(type, fn, opt || false); }
  function el(tag, cls, attrs) {
    var e = doc.createElement(tag);
    if (cls) e.className = cls;
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function typing(e) {
    var t = e.target;
    return e.altKey || e.ctrlKey || e.metaKey || (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) || (t && t.isContentEditable);
  }
  function swipe(target, handlers) {
    var x0 = null, y0 = 0, multi = false;
    on(target, "pointerdown", function (e) { if (e.isPrimary) { x0 = e.clientX; y0 = e.clientY; multi = false; } else multi = true; });
    on(target, "pointerup", function (e) {
      if (x0 === null || multi || !e.isPrimary || (handlers.active && !handlers.active())) { x0 = null; return; }
      var dx = e.clientX - x0, dy = e.clientY - y0;
      x0 = null;
      if (Math.abs(dx) > 50 && Math.abs(dx) > 1.5 * Math.abs(dy)) (dx < 0 ? handlers.next : handlers.prev)();
      else if (dy > 80 && Math.abs(dy) > 1.5 * Math.abs(dx) && handlers.down) handlers.down();
    });
    on(target, "pointercancel", function () { x0 = null; });
  }

  /* ---------- photo pages: keys and swipes follow the page's own links ---------- */
  var article = $("[data-photo]");
  if (article) {
    var go = function (sel) { var a = $(sel); if (a) location.href = a.href; };
    on(doc, "keydown", function (e) {
      if (typing(e)) return;
      if (e.key === "ArrowRight") go("link[rel=next]");
      else if (e.key === "ArrowLeft") go("link[rel=prev]");
      else if (e.key === "Escape") go("link[rel=up]");
    });
    swipe($(".photo-frame") || article, { next: function () { go("link[rel=next]"); }, prev: function () { go("link[rel=prev]"); } });
    root.setAttribute("data-albumen", "ready");
  }

  /* ---------- album pages: the lightbox ---------- */
  var grid = $("[data-viewer]"), dataEl = $("#albumen-items"), tpl = $("#albumen-viewer");
  if (!grid || !dataEl || !tpl) return;
  var items = JSON.parse(dataEl.textContent);
  if (!items.length) return;
  var links = grid.querySelectorAll("a[data-index]");
  var albumUrl = location.href.split("#")[0];
  // URLs in the data are relative to this album page; the address bar will change, so make them absolute.
  var abs = function (u) { return u ? new URL(u, albumUrl).href : u; };
  var absSet = function (set) { return set.split(", ").map(function (c) { var p = c.split(" "); return abs(p[0]) + " " + p[1]; }).join(", "); };
  items.forEach(function (it, i) {
    var a = links[i], img = a && a.querySelector("img"), tile = a && a.parentNode;
    it.u = a ? a.href : ""; it.a = img ? img.alt : ""; it.set = img ? absSet(img.getAttribute("srcset") || "") : "";
    it.th = img ? img.currentSrc || img.src : ""; it.tw = img ? +img.getAttribute("width") : 1; it.tt = img ? +img.getAttribute("height") : 1;
    it.ph = tile ? tile.style.backgroundColor : ""; it.pu = tile ? (tile.style.backgroundImage.match(/url\("?([^")]*)"?\)/) || [])[1] : "";
    it.src = abs(it.src); it.pv = abs(it.pv); it.nx = abs(it.nx);
    (it.s || []).forEach(function (s) { s[1] = absSet(s[1]); });
    (it.v || []).forEach(function (v) { v[1] = abs(v[1]); });
    (it.tr || []).forEach(function (t) { t[0] = abs(t[0]); });
  });
  var box = tpl.content.firstElementChild.cloneNode(true);
  doc.body.appendChild(box);
  var stage = $(".lb-stage", box), strip = $(".lb-strip", box), counter = $(".lb-count", box);
  var btn = function (name) { return $("[data-lb=" + name + "]", box); };
  var current = -1, opener = null, timer = null, zoom = { s: 1, x: 0, y: 0 }, media = null, frame = null;
  var infoOpen = (function () { try { return localStorage.getItem("albumen-info") !== "0"; } catch (_) { return true; } })();
  if ("scrollRestoration" in history) history.scrollRestoration = "manual";

  function picture(item, sizes) {
    var pic = el("picture");
    (item.s || []).forEach(function (s) { pic.appendChild(el("source", null, { type: s[0], srcset: s[1], sizes: sizes })); });
    var img = el("img", "lb-img", { src: item.src, srcset: item.set, sizes: sizes, alt: item.a, width: item.w, height: item.h, decoding: "async" });
    pic.appendChild(img);
    return pic;
  }
  // The neighbours' files, fetched ahead: the same <picture> as render() makes, so the browser
  // picks the same candidate (a WebP or AVIF source when the page offers one, not the JPEG
  // fallback it would never show). Only the current neighbours' are kept: kept, so that a detached
  // image is not collected mid-fetch; only those, so that a long slideshow does not hold them all.
  var ahead = {};
  function preloadAround(i) {
    var kept = {};
    [i + 1, i - 1].forEach(function (n) {
      var item = items[n];
      if (!item || item.k !== "image") return;
      var key = n + " " + sizesFor(item);
      kept[key] = ahead[key] || picture(item, sizesFor(item));
    });
    ahead = kept;
  }
  function sizesFor(item) {
    var vw = stage.clientWidth || innerWidth, vh = stage.clientHeight || innerHeight;
    return Math.max(1, Math.round(Math.min(vw, vh * item.w / item.h, item.w))) + "px";
  }
  // The strip of thumbnails under the photo: the grid's own files (already fetched, or lazily), one
  // link each, in the tab order only for the photo shown (the arrow keys move along it)
  function buildStrip() {
    if (strip.firstChild || items.length < 2) return;
    items.forEach(function (item, i) {
      var a = el("a", null, { href: item.u, "data-i": i, tabindex: "-1", style: "--w:" + item.tw + ";--h:" + item.tt });
      a.appendChild(el("img", null, { src: item.th, alt: item.a, loading: "lazy", decoding: "async", width: item.tw, height: item.tt }));
      strip.appendChild(a);
    });
  }
  function markStrip(i) {
    var old = $("[aria-current]", strip), now = strip.children[i];
    if (old) { old.removeAttribute("aria-current"); old.tabIndex = -1; }
    if (!now) return;
    now.setAttribute("aria-current", "true");
    now.tabIndex = 0;
    var left = now.offsetLeft - (strip.clientWidth - now.offsetWidth) / 2;
    if (strip.scrollTo) strip.scrollTo({ left: left, behavior: reduced || !strip.offsetHeight ? "auto" : "smooth" }); else strip.scrollLeft = left;
  }
  function fit(item) {
    var vw = stage.clientWidth || innerWidth, vh = stage.clientHeight || innerHeight;
    var scale = Math.min(vw / item.w, vh / item.h, 1);  // never bigger than the largest published size
    return { w: Math.max(1, Math.round(item.w * scale)), h: Math.max(1, Math.round(item.h * scale)) };
  }
  function layout() {
    if (!frame || current < 0) return;
    var item = items[current], size = fit(item);
    frame.style.width = size.w + "px";
    frame.style.height = size.h + "px";
    applyZoom();
  }
  function applyZoom() {
    if (!media) return;
    media.style.transform = zoom.s === 1 ? "" : "translate(" + zoom.x + "px," + zoom.y + "px) scale(" + zoom.s + ")";
    box.classList.toggle("is-zoomed", zoom.s > 1);
  }
  function maxZoom() {
    var item = items[current];
    return frame ? Math.max(1, item.w / (parseFloat(frame.style.width) || item.w)) : 1;
  }
  function loadLargest() {
    // zoomed in, the largest published file: the one chosen for the fitted size would be stretched
    if (!media || media.tagName !== "IMG") return;
    var want = items[current].w + "px";
    if (media.sizes === want) return;
    Array.prototype.forEach.call(media.parentNode.querySelectorAll("source"), function (s) { s.sizes = want; });
    media.sizes = want;
  }
  function setZoom(s, cx, cy) {
    var m = maxZoom();
    s = Math.max(1, Math.min(m, s));
    if (s === 1) { zoom = { s: 1, x: 0, y: 0 }; applyZoom(); return; }
    loadLargest();
    var r = frame.getBoundingClientRect();
    var px = (cx === undefined ? r.width / 2 : cx - r.left), py = (cy === undefined ? r.height / 2 : cy - r.top);
    // keep the point under the pointer where it is
    var k = s / zoom.s;
    zoom.x = px - k * (px - zoom.x);
    zoom.y = py - k * (py - zoom.y);
    zoom.s = s;
    clampPan();
    applyZoom();
  }
  function clampPan() {
    var w = parseFloat(frame.style.width), h = parseFloat(frame.style.height);
    zoom.x = Math.min(0, Math.max(w - w * zoom.s, zoom.x));
    zoom.y = Math.min(0, Math.max(h - h * zoom.s, zoom.y));
  }

  function render(i) {
    var item = items[i];
    // the caption first: the photo is fitted in the room it leaves
    $(".lb-title", box).textContent = item.t || "";
    $(".lb-title", box).hidden = !item.t;
    var desc = $(".lb-desc", box);
    desc.innerHTML = item.d || "";  // sanitized by Albumen when the page was built (render.richtext)
    var date = $(".lb-date", box);
    date.textContent = "";
    if (item.dt) {
      var time = el("time", null, item.di ? { datetime: item.di } : {});
      time.textContent = item.dt;
      date.appendChild(time);
    }
    $(".lb-camera", box).textContent = item.c || "";
    counter.textContent = counter.getAttribute(item.k === "video" ? "data-format-video" : "data-format").replace("%(n)s", item.n).replace("%(total)s", item.of);
    btn("prev").disabled = i === 0 && !item.pv;
    btn("next").disabled = i === items.length - 1 && !item.nx;
    stage.textContent = "";
    frame = el("div", "lb-frame");
    frame.style.backgroundColor = item.ph || "";
    if (item.pu) frame.style.backgroundImage = "url(\"" + item.pu + "\")";
    if (item.k === "video" && item.v) {
      media = el("video", "lb-video", { controls: "", playsinline: "", preload: "metadata", poster: item.src });
      item.v.forEach(function (s) { media.appendChild(el("source", null, { src: s[1], type: s[0] })); });
      (item.tr || []).forEach(function (t, n) {
        var tr = el("track", null, { kind: "captions", src: t[0], label: t[2] });
        if (t[1]) tr.setAttribute("srclang", t[1]);
        if (!n) tr.setAttribute("default", "");
        media.appendChild(tr);
      });
      frame.appendChild(media);
    } else {
      var pic = picture(item, sizesFor(item));
      media = pic.querySelector("img");
      frame.appendChild(pic);
    }
    markStrip(i);
    stage.appendChild(frame);
    zoom = { s: 1, x: 0, y: 0 };
    layout();
    preloadAround(i);
  }

  function show(i, how) {
    if (i < 0 || i >= items.length) {
      var edge = items[current];
      var away = i < 0 ? edge && edge.pv : edge && edge.nx;
      // the neighbour lives on another page of the album or stream, whose viewer opens on it; this
      // history entry (the photo's address) is replaced, so Back leads to that page's grid
      if (away) location.replace(away + (timer ? "-play" : ""));
      return;
    }
    current = i;
    render(i);
    var url = items[i].u;
    if (how === "push") pushed = address("pushState", { albumen: i }, url);
    else if (how === "replace" && pushed) address("replaceState", { albumen: i }, url);
  }
  // The photo's address in the location bar, when the browser allows it: from file:// Chromium refuses
  // any other file's address (the viewer then works without it, and closing it leaves history alone).
  var pushed = false;
  function address(method, state, url) {
    try { history[method](state, "", url); return true; } catch (_) { return false; }
  }

  // pushState changes the base URL of this document: pin it first, with a <base> of the page's own
  // address (rewriting every relative URL instead took ~0.1 s on a 200-photo page at 4x CPU).
  var pinned = false;
  function pinUrls() {
    if (pinned) return;
    pinned = true;
    if (doc.querySelector("base[href]")) return;  // the page has pinned it already
    var base = doc.createElement("base");
    base.href = albumUrl;
    doc.head.insertBefore(base, doc.head.firstChild);
  }

  function open(i, fromLink) {
    pinUrls();
    opener = fromLink || doc.activeElement;
    address("replaceState", { albumenScroll: scrollY }, albumUrl);
    box.hidden = false;
    root.classList.add("lb-open");
    box.classList.toggle("info-open", infoOpen);
    buildStrip();
    show(i, "push");
    btn("close").focus();
  }
  function close(fromHistory) {
    if (box.hidden) return;
    stopShow();
    if (doc.fullscreenElement) doc.exitFullscreen().catch(function () {});
    box.hidden = true;
    root.classList.remove("lb-open");
    stage.textContent = "";
    media = frame = null;
    var state = history.state;
    if (!fromHistory && pushed) history.back();
    else if (state && typeof state.albumenScroll === "number") scrollTo(0, state.albumenScroll);
    pushed = false;
    var link = links[current];
    current = -1;
    (link || opener || grid).focus();
  }
  function step(d) { stopShowIfUser(); show(current + d, "replace"); }
  function toggleInfo() {
    infoOpen = !infoOpen;
    box.classList.toggle("info-open", infoOpen);
    btn("info").setAttribute("aria-pressed", String(infoOpen));
    try { localStorage.setItem("albumen-info", infoOpen ? "1" : "0"); } catch (_) {}
    layout();
  }
  function toggleFullscreen() {
    if (doc.fullscreenElement) doc.exitFullscreen().catch(function () {});
    else if (box.requestFullscreen) box.requestFullscreen().catch(function () {});
  }
  var userStep = true;
  function stopShowIfUser() { if (userStep) stopShow(); }
  function startShow() {
    btn("play").setAttribute("aria-pressed", "true");
    box.classList.add("is-playing");
    timer = setInterval(function () {
      userStep = false;
      if (current >= items.length - 1 && !items[current].nx) stopShow(); else show(current + 1, "replace");
      userStep = true;
    }, 4000);
  }
  function stopShow() {
    if (timer) clearInterval(timer);
    timer = null;
    btn("play").setAttribute("aria-pressed", "false");
    box.classList.remove("is-playing");
  }

  on(grid, "click", function (e) {
    var a = e.target.closest && e.target.closest("a[data-index]");
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    open(+a.getAttribute("data-index"), a);
  });
  on(window, "popstate", function (e) {
    var st = e.state;
    if (st && typeof st.albumen === "number") {
      if (box.hidden) { box.hidden = false; root.classList.add("lb-open"); box.classList.toggle("info-open", infoOpen); buildStrip(); }
      pushed = true;  // on an entry of the viewer's: closing goes back from it
      show(st.albumen);
    } else close(true);
  });
  on(strip, "click", function (e) {
    var a = e.target.closest && e.target.closest("a[data-i]");
    if (!a) return;
    e.preventDefault();
    stopShow();
    show(+a.getAttribute("data-i"), "replace");
  });
  btn("close").onclick = function () { close(false); };
  btn("prev").onclick = function () { step(-1); };
  btn("next").onclick = function () { step(1); };
  btn("info").onclick = toggleInfo;
  btn("info").setAttribute("aria-pressed", String(infoOpen));
  btn("full").onclick = toggleFullscreen;
  btn("zoom").onclick = function () { setZoom(zoom.s > 1 ? 1 : maxZoom()); };
  btn("play").onclick = function () { if (timer) stopShow(); else startShow(); };
  if (!doc.fullscreenEnabled) btn("full").hidden = true;

  on(doc, "keydown", function (e) {
    if (box.hidden || typing(e)) return;
    var k = e.key;
    if (k === "Escape") { e.preventDefault(); if (zoom.s > 1) setZoom(1); else close(false); }
    else if (k === "ArrowRight") { e.preventDefault(); step(1); }
    else if (k === "ArrowLeft") { e.preventDefault(); step(-1); }
    else if (k === "Home") { e.preventDefault(); stopShow(); show(0, "replace"); }
    else if (k === "End") { e.preventDefault(); stopShow(); show(items.length - 1, "replace"); }
    else if (k === "f" || k === "F") { e.preventDefault(); toggleFullscreen(); }
    else if (k === "i" || k === "I") { e.preventDefault(); toggleInfo(); }
    else if (k === "z" || k === "Z" || k === "+" || k === "-") { e.preventDefault(); setZoom(k === "-" ? 1 : (zoom.s > 1 && k !== "+" ? 1 : maxZoom())); }
    else if (k === " " && e.target === doc.body) { e.preventDefault(); if (timer) stopShow(); else startShow(); }
    else if (k === "Tab") {  // keep focus inside the dialog
      var f = Array.prototype.filter.call(box.querySelectorAll("button:not([disabled]):not([hidden]), [href], video[controls], [tabindex]"), function (x) { return x.tabIndex >= 0 && x.offsetParent !== null; });
      if (!f.length) return;
      var first = f[0], last = f[f.length - 1];
      if (e.shiftKey && doc.activeElement === first) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && doc.activeElement === last) { e.preventDefault(); first.focus(); }
      else if (!box.contains(doc.activeElement)) { e.preventDefault(); first.focus(); }
    }
  });

  /* pointer gestures on the stage: swipe, double-tap / click zoom, pinch, pan */
  var pointers = {}, pinch = null, pan = null, lastTap = 0;
  swipe(stage, { next: function () { step(1); }, prev: function () { step(-1); }, down: function () { close(false); },
                 active: function () { return zoom.s === 1 && !pinch; } });
  function dist(a, b) { return Math.hypot(a.x - b.x, a.y - b.y); }
  on(stage, "pointerdown", function (e) {
    pointers[e.pointerId] = { x: e.clientX, y: e.clientY };
    var ids = Object.keys(pointers);
    if (ids.length === 2 && frame) {
      var p = pointers[ids[0]], q = pointers[ids[1]];
      pinch = { d: dist(p, q), s: zoom.s, cx: (p.x + q.x) / 2, cy: (p.y + q.y) / 2 };
    } else if (zoom.s > 1) {
      pan = { x: e.clientX - zoom.x, y: e.clientY - zoom.y };
      stage.setPointerCapture && stage.setPointerCapture(e.pointerId);
    }
  });
  on(stage, "pointermove", function (e) {
    if (!pointers[e.pointerId]) return;
    pointers[e.pointerId] = { x: e.clientX, y: e.clientY };
    var ids = Object.keys(pointers);
    if (pinch && ids.length === 2) {
      var s = pinch.s * dist(pointers[ids[0]], pointers[ids[1]]) / pinch.d;
      setZoom(s, pinch.cx, pinch.cy);
    } else if (pan) {
      zoom.x = e.clientX - pan.x; zoom.y = e.clientY - pan.y;
      clampPan(); applyZoom();
    }
  });
  function up(e) {
    delete pointers[e.pointerId];
    if (Object.keys(pointers).length < 2) pinch = null;
    pan = null;
  }
  on(stage, "pointerup", up);
  on(stage, "pointercancel", up);
  on(stage, "click", function (e) {
    if (!frame || !frame.contains(e.target) || e.target.tagName === "VIDEO") return;
    var now = Date.now();
    if (e.pointerType === "touch" && now - lastTap > 300) { lastTap = now; return; }  // double-tap on touch screens
    lastTap = 0;
    setZoom(zoom.s > 1 ? 1 : maxZoom(), e.clientX, e.clientY);
  });
  on(stage, "click", function (e) { if (e.target === stage) close(false); });
  on(window, "resize", function () { if (!box.hidden) { zoom = { s: 1, x: 0, y: 0 }; layout(); } });
  if (reduced) box.classList.add("reduced-motion");
  var cont = /^#lb-(first|last)(-play)?$/.exec(location.hash);  // arrived from the viewer of the page before or after
  if (cont) {
    address("replaceState", null, albumUrl);
    open(cont[1] === "first" ? 0 : items.length - 1);
    if (cont[2]) startShow();
  }
  root.setAttribute("data-albumen", "ready");
})();
