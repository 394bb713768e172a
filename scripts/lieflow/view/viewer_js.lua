-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the script and style of the pages traj:animate and lf.animate write (lieflow.view.animate
-- puts them into the page after three.js and OrbitControls, both inlined from Debian's libjs-three).
--
-- The page reads its data from <script id="lf-data" type="application/json"> (see animate.lua) and
-- exposes what it shows, for tests and scripts:
--   window.lieflow = {ready, error, time, t0, t1, playing, panels: [{frame, sample, time}],
--     seek(t), play(), pause(), attitude(panel, object) -> the 9 entries (row-major) of the rotation
--     of the object as drawn (its world matrix), times(panel) -> the frames' times, pixels(panel) ->
--     the canvas as an RGBA array}; panels[i].sample is the index of the recorded sample shown
--   document.body.dataset: status ("loading" | "ready" | "error"), time, frames (panel frames).
-- Any error (three.js missing or broken, no WebGL, bad data) shows a message in #lf-error and
-- sets data-status="error": never a blank canvas.
local M = {}

M.css = [[
body { margin: 0; font: 13px sans-serif; background: #fafafa; color: #222; }
#lf-head { padding: 6px 10px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
#lf-head h1 { font-size: 15px; margin: 0 10px 0 0; }
#lf-slider { flex: 1; min-width: 200px; }
#lf-time { font-family: monospace; min-width: 11em; }
#lf-error { margin: 20px; padding: 12px; border: 2px solid #c00; background: #fee; color: #900; font-size: 15px; }
#lf-panels { display: flex; flex-wrap: wrap; gap: 6px; padding: 0 6px; }
.lf-panel { flex: 0 0 auto; background: #fff; border: 1px solid #ccc; }
.lf-panel h2 { font-size: 13px; margin: 4px 8px; }
.lf-view { display: block; }
.lf-plot { display: block; border-top: 1px solid #ddd; }
]]

-- shown before three.js loads: a broken or missing asset still ends in a message
M.guard = [[
(function () {
  function show(msg) {
    var e = document.getElementById('lf-error');
    // the first error first (a broken asset), then what followed from it
    if (e) { e.hidden = false; e.textContent += (e.textContent ? '\n' : 'lieflow view: ') + msg; e.style.whiteSpace = 'pre-wrap'; }
    document.body.dataset.status = 'error';
    window.lieflow = window.lieflow || {};
    window.lieflow.error = window.lieflow.error || String(msg);
  }
  window.lfShowError = show;
  window.addEventListener('error', function (ev) {
    show((ev.message || 'a script failed to load') + (ev.filename ? ' (' + ev.filename + ':' + ev.lineno + ')' : ''));
  });
})();
]]

M.viewer = [==[
(function () {
'use strict';
var show = window.lfShowError;
if (typeof THREE === 'undefined' || typeof THREE.WebGLRenderer !== 'function') { show('three.js did not load: the page cannot draw (its inlined copy is missing or broken)'); return; }
var D;
try { D = JSON.parse(document.getElementById('lf-data').textContent); }
catch (e) { show('the data of the page cannot be read: ' + e.message); return; }

function bytes(s) { var b = atob(s), u = new Uint8Array(b.length); for (var i = 0; i < b.length; i++) u[i] = b.charCodeAt(i); return u.buffer; }
function f32(s) { return s ? new Float32Array(bytes(s)) : null; }
function f64(s) { return new Float64Array(bytes(s)); }

var api = window.lieflow = {ready: false, error: null, panels: [], time: 0, playing: false};
var panels = [];
var t0 = Infinity, t1 = -Infinity;

function material(color) { return new THREE.MeshLambertMaterial({color: new THREE.Color(color)}); }

// a body made of sites: a sphere per site coloured by its type, a cylinder per bond
function makeSites(o, colors) {
  var g = new THREE.Group(), mats = {}, r = o.site_radius, sph = new THREE.SphereGeometry(r, 16, 12);
  var up = new THREE.Vector3(0, 1, 0), bond = material('#888');
  o.sites.forEach(function (s) {
    var t = s[3], c = colors && colors.length ? colors[(t - 1) % colors.length] : o.color;
    if (!mats[t]) mats[t] = material(c);
    var m = new THREE.Mesh(sph, mats[t]); m.position.set(s[0], s[1], s[2]); g.add(m);
  });
  o.bonds.forEach(function (b) {
    var a = o.sites[b[0] - 1], c = o.sites[b[1] - 1];
    var d = new THREE.Vector3(c[0] - a[0], c[1] - a[1], c[2] - a[2]), L = d.length();
    var m = new THREE.Mesh(new THREE.CylinderGeometry(0.35 * r, 0.35 * r, L, 8), bond);
    m.quaternion.setFromUnitVectors(up, d.clone().normalize());
    m.position.set((a[0] + c[0]) / 2, (a[1] + c[1]) / 2, (a[2] + c[2]) / 2); g.add(m);
  });
  return g;
}

// an object of the scene: a box with its body axes (or its sites), or a rod / needle / arrow along +z
function makeObject(o, colors) {
  if (o.sites) return makeSites(o, colors);
  var g = new THREE.Group(), mat = material(o.color), m;
  if (o.shape === 'box') {
    m = new THREE.Mesh(new THREE.BoxGeometry(o.dims[0], o.dims[1], o.dims[2]), mat);
    g.add(m);
    var ax = new THREE.AxesHelper(0.75 * Math.max(o.dims[0], o.dims[1], o.dims[2]));
    if (ax.material) ax.material.depthTest = false;
    ax.renderOrder = 1;
    g.add(ax);
  } else {
    var L = o.length, r = o.shape === 'needle' ? 0.04 * L : 0.025;
    var start = o.shape === 'needle' ? -L / 2 : 0, body = o.shape === 'rod' ? L : 0.8 * L;
    var cyl = new THREE.CylinderGeometry(r, r, body, 16);
    cyl.rotateX(Math.PI / 2); cyl.translate(0, 0, start + body / 2);
    g.add(new THREE.Mesh(cyl, mat));
    if (o.shape !== 'rod') { // the head marks the vector's direction (a needle's north pole)
      var hl = start + L - (start + body), cone = new THREE.ConeGeometry(2.5 * r, hl, 16);
      cone.rotateX(Math.PI / 2); cone.translate(0, 0, start + body + hl / 2);
      g.add(new THREE.Mesh(cone, mat));
    }
    if (o.bob) { var s = new THREE.Mesh(new THREE.SphereGeometry(0.06, 16, 12), mat); s.position.set(0, 0, L); g.add(s); }
    var piv = new THREE.Mesh(new THREE.SphereGeometry(o.shape === 'needle' ? 1.5 * r : 0.03, 12, 8), material('#444'));
    if (o.parent === undefined || o.parent === null) g.add(piv);
  }
  return g;
}

function makeTrace(o, q, p, n, color) {
  var pts = new Float32Array(3 * n), v = new THREE.Vector3(), qq = new THREE.Quaternion();
  for (var f = 0; f < n; f++) {
    v.set(o.trace[0], o.trace[1], o.trace[2]);
    qq.set(q[4 * f + 1], q[4 * f + 2], q[4 * f + 3], q[4 * f]);
    v.applyQuaternion(qq);
    var base = p ? [p[3 * f], p[3 * f + 1], p[3 * f + 2]] : o.pos;
    pts[3 * f] = v.x + base[0]; pts[3 * f + 1] = v.y + base[1]; pts[3 * f + 2] = v.z + base[2];
  }
  var geo = new THREE.BufferGeometry();
  geo.setAttribute ? geo.setAttribute('position', new THREE.BufferAttribute(pts, 3))
                   : geo.addAttribute('position', new THREE.BufferAttribute(pts, 3));
  return new THREE.Line(geo, new THREE.LineBasicMaterial({color: new THREE.Color(color)}));
}

// the size of every panel's view: the page's width shared, the plot below it in the window
function viewSize(count) {
  var W = Math.max(300, Math.floor((document.documentElement.clientWidth - 12 - 8 * count) / count));
  var width = Math.min(W, 900), height = Math.round(Math.min(0.75 * width, Math.max(240, window.innerHeight - 250)));
  return [width, height];
}

function buildPanel(P, root, size) {
  var div = document.createElement('div'); div.className = 'lf-panel';
  var h = document.createElement('h2'); h.textContent = P.title; div.appendChild(h);
  root.appendChild(div);
  var width = size[0], height = size[1];
  var renderer = new THREE.WebGLRenderer({antialias: false, preserveDrawingBuffer: true});
  renderer.setPixelRatio(1);
  renderer.setSize(width, height);
  renderer.setClearColor(0xffffff, 1);
  renderer.domElement.className = 'lf-view';
  div.appendChild(renderer.domElement);
  var plot = document.createElement('canvas'); plot.className = 'lf-plot';
  plot.width = width; plot.height = 150; div.appendChild(plot);

  var scene = new THREE.Scene();
  var up = new THREE.Vector3(P.up[0], P.up[1], P.up[2]).normalize();
  var E = P.extent, C = P.center ? new THREE.Vector3(P.center[0], P.center[1], P.center[2]) : new THREE.Vector3();
  var camera = new THREE.PerspectiveCamera(40, width / height, 0.01 * E, 100 * E);
  camera.up.copy(up);
  var side = Math.abs(up.z) > 0.9 ? new THREE.Vector3(0.55, -1, 0) : new THREE.Vector3(0, -1, 0.3);
  camera.position.copy(side.normalize().multiplyScalar(3.2 * E).add(up.clone().multiplyScalar(1.1 * E)).add(C));
  camera.lookAt(C);
  scene.add(new THREE.AmbientLight(0xffffff, 0.55));
  var sun = new THREE.DirectionalLight(0xffffff, 0.6); sun.position.set(2 * E, -3 * E, 4 * E); scene.add(sun);
  var grid = new THREE.GridHelper(2 * E, 8, 0xbbbbbb, 0xdddddd);
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  grid.position.copy(up.clone().multiplyScalar(-E).add(C)); scene.add(grid);
  if (P.box) { // the periodic box: its edges
    var bx = new THREE.BoxGeometry(P.box.L[0], P.box.L[1], P.box.L[2]);
    var edges = new THREE.LineSegments(new THREE.EdgesGeometry(bx), new THREE.LineBasicMaterial({color: 0x555555}));
    edges.position.copy(C); scene.add(edges);
  }
  var controls = THREE.OrbitControls ? new THREE.OrbitControls(camera, renderer.domElement) : null;
  if (controls) { controls.target.copy(C); controls.update(); }

  var times = f64(P.t), samples = f64(P.k), n = times.length;
  var objs = P.objects.map(function (o) {
    var g = makeObject(o, P.site_colors); scene.add(g);
    var q = f32(o.q), p = f32(o.p);
    if (!q || q.length !== 4 * n) throw new Error('object data of the wrong length');
    if (o.pos) g.position.set(o.pos[0], o.pos[1], o.pos[2]);
    var tr = o.trace ? makeTrace(o, q, p, n, o.color) : null;
    if (tr) scene.add(tr);
    return {o: o, g: g, q: q, p: p, trace: tr};
  });
  t0 = Math.min(t0, times[0]); t1 = Math.max(t1, times[n - 1]);
  var panel = {P: P, renderer: renderer, scene: scene, camera: camera, controls: controls, objs: objs, times: times,
               samples: samples, n: n, frame: -1, plot: plot, plotBase: null, info: {frame: 0, sample: 0, time: 0}};
  if (controls) controls.addEventListener('change', function () { renderer.render(scene, camera); });
  return panel;
}

// the frame shown at time t: the last one at or before t
function frameAt(panel, t) {
  var lo = 0, hi = panel.n - 1;
  if (t <= panel.times[0]) return 0;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (panel.times[mid] <= t) lo = mid; else hi = mid - 1; }
  return lo;
}

// a centre of mass wrapped into the periodic box (the minimum image's convention: bodies by their centre)
function wrap(B, d, x) { var L = B.L[d], lo = B.lo[d]; return lo + (((x - lo) % L) + L) % L; }

function setFrame(panel, f) {
  var B = panel.P.box;
  panel.objs.forEach(function (ob) {
    var q = ob.q;
    ob.g.quaternion.set(q[4 * f + 1], q[4 * f + 2], q[4 * f + 3], q[4 * f]);
    if (ob.p && B) ob.g.position.set(wrap(B, 0, ob.p[3 * f]), wrap(B, 1, ob.p[3 * f + 1]), wrap(B, 2, ob.p[3 * f + 2]));
    else if (ob.p) ob.g.position.set(ob.p[3 * f], ob.p[3 * f + 1], ob.p[3 * f + 2]);
    if (ob.trace) ob.trace.geometry.setDrawRange(0, f + 1);
  });
  panel.frame = f;
  panel.info.frame = f; panel.info.sample = panel.samples[f]; panel.info.time = panel.times[f];
}

function drawPlotBase(panel) {
  var c = panel.plot, ctx = c.getContext('2d'), P = panel.P.plot, W = c.width, H = c.height;
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
  if (!P || !P.t.length) return;
  var lo = Infinity, hi = -Infinity;
  for (var i = 0; i < P.t.length; i++) { if (P.lo[i] < lo) lo = P.lo[i]; if (P.hi[i] > hi) hi = P.hi[i]; }
  if (!(hi > lo)) { hi = lo + 1; lo = lo - 1; }
  var ta = P.t[0], tb = P.t1 > ta ? P.t1 : ta + 1, L = 70, R = 10, T = 16, B = 22;
  var X = function (t) { return L + (W - L - R) * (t - ta) / (tb - ta); };
  var Y = function (v) { return T + (H - T - B) * (hi - v) / (hi - lo); };
  panel.plotX = X;
  ctx.strokeStyle = '#999'; ctx.strokeRect(L, T, W - L - R, H - T - B);
  ctx.fillStyle = 'rgba(76,120,168,0.35)'; ctx.strokeStyle = '#4c78a8';
  ctx.beginPath();
  for (i = 0; i < P.t.length; i++) ctx.lineTo(X(P.t[i]), Y(P.hi[i]));
  for (i = P.t.length - 1; i >= 0; i--) ctx.lineTo(X(P.t[i]), Y(P.lo[i]));
  ctx.closePath(); ctx.fill(); ctx.stroke();
  ctx.fillStyle = '#222'; ctx.font = '11px sans-serif';
  ctx.fillText(hi.toPrecision(3), 2, T + 8); ctx.fillText(lo.toPrecision(3), 2, H - B);
  ctx.fillText(P.name + ' (min/max per bucket)', L + 4, 12);
  ctx.fillText('t = ' + ta.toPrecision(4), L, H - 6);
  var s = 't = ' + tb.toPrecision(4); ctx.fillText(s, W - R - ctx.measureText(s).width, H - 6);
  (panel.P.events || []).forEach(function (ev) { // the run's events (lf.run's option events): a mark and a name
    if (ev.t < ta || ev.t > tb) return;
    var x = X(ev.t);
    ctx.strokeStyle = '#f58518'; ctx.setLineDash([3, 3]);
    ctx.beginPath(); ctx.moveTo(x, T); ctx.lineTo(x, H - B); ctx.stroke(); ctx.setLineDash([]);
    ctx.fillStyle = '#b35806'; ctx.fillText(ev.name, x + 2, T + 20);
  });
  panel.plotBase = ctx.getImageData(0, 0, W, H);
}

function drawCursor(panel) {
  var c = panel.plot, ctx = c.getContext('2d');
  if (!panel.plotBase) return;
  ctx.putImageData(panel.plotBase, 0, 0);
  if (!panel.plotX) return;
  var x = panel.plotX(panel.times[panel.frame]);
  ctx.strokeStyle = '#e45756'; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.moveTo(x, 14); ctx.lineTo(x, c.height - 20); ctx.stroke(); ctx.lineWidth = 1;
}

var slider, label, button, speedSel;
function render(t) {
  api.time = t;
  panels.forEach(function (p) {
    setFrame(p, frameAt(p, t));
    p.renderer.render(p.scene, p.camera);
    drawCursor(p);
  });
  if (slider && !slider.dragging) slider.value = String(Math.round(1000 * (t - t0) / Math.max(t1 - t0, 1e-300)));
  if (label) label.textContent = 't = ' + t.toFixed(3);
  document.body.dataset.time = String(t);
  document.body.dataset.frames = panels.map(function (p) { return p.frame; }).join(',');
}

var last = null;
function tick(now) {
  if (api.playing) {
    if (last !== null) {
      var rate = (t1 - t0) / D.duration * Number(speedSel.value);
      var t = api.time + rate * (now - last) / 1000;
      if (t > t1) t = t0;
      render(t);
    }
    last = now;
    requestAnimationFrame(tick);
  } else last = null;
}

api.seek = function (t) { api.pause(); render(Math.min(Math.max(t, t0), t1)); return api.panels; };
api.play = function () { if (!api.playing) { api.playing = true; button.textContent = 'pause'; requestAnimationFrame(tick); } };
api.pause = function () { api.playing = false; if (button) button.textContent = 'play'; };
api.attitude = function (i, j) {
  var g = panels[i].objs[j].g; g.updateMatrixWorld(true);
  var e = g.matrixWorld.elements; // column-major
  return [e[0], e[4], e[8], e[1], e[5], e[9], e[2], e[6], e[10]];
};
api.times = function (i) { return Array.prototype.slice.call(panels[i].times); };
api.pixels = function (i) {
  var r = panels[i].renderer, gl = r.getContext(), w = r.domElement.width, h = r.domElement.height;
  var px = new Uint8Array(4 * w * h); gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  return px;
};

function start() {
  var root = document.getElementById('lf-panels');
  slider = document.getElementById('lf-slider'); label = document.getElementById('lf-time');
  button = document.getElementById('lf-play'); speedSel = document.getElementById('lf-speed');
  var size = viewSize(D.panels.length);
  D.panels.forEach(function (P) { panels.push(buildPanel(P, root, size)); });
  api.panels = panels.map(function (p) { return p.info; });
  api.t0 = t0; api.t1 = t1;
  panels.forEach(function (p) { p.P.plot && (p.P.plot.t1 = p.P.plot.t1 || p.P.plot.t[p.P.plot.t.length - 1]); drawPlotBase(p); });
  slider.addEventListener('input', function () {
    api.pause(); render(t0 + (t1 - t0) * Number(slider.value) / 1000);
  });
  button.addEventListener('click', function () { api.playing ? api.pause() : api.play(); });
  render(t0);
  api.ready = true;
  document.body.dataset.status = 'ready';
  if (D.autoplay) api.play();
}

try { start(); }
catch (e) { show('the view could not start: ' + (e && e.message ? e.message : e)); }
})();
]==]

return M
