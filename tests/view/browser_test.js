// SPDX-License-Identifier: GPL-3.0-or-later
// The pages of traj:animate in a real browser: Debian's chromium, headless, driven by playwright-core,
// WebGL by SwiftShader. For every page of the manifest (tests/view/pages.lua):
//   - it loads from a file (no server, no network) to data-status="ready" with no console error;
//   - at frames spread over each panel, the page shows the recorded sample of that frame and the
//     attitude of every object as drawn (its world matrix) equals the recorded R (or q for a rod)
//     to 1e-6;
//   - screenshots at two different times differ, at the same time twice they match (pixels counted);
//   - the example pages leave a PNG frame (png in the manifest).
// The broken page (its three.js cut short) must show its message in #lf-error, data-status="error".
// Every glTF file of the manifest passes the Khronos glTF validator with 0 errors.
// usage: node browser_test.js MANIFEST.json   (NODE_PATH: where playwright-core, gltf-validator are)
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');
const validator = require('gltf-validator');

const TOL = 1e-6;
const manifest = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let passed = 0, failed = 0;
function check(ok, msg) {
  console.log((ok ? 'ok   - ' : 'FAIL - ') + msg);
  if (ok) passed++; else failed++;
}

// pixels that differ between two PNG screenshots, counted in the page (decoded by the browser)
async function differing(page, a, b) {
  return page.evaluate(async ([a, b]) => {
    const load = (s) => new Promise((res, rej) => { const i = new Image(); i.onload = () => res(i); i.onerror = rej; i.src = 'data:image/png;base64,' + s; });
    const [ia, ib] = [await load(a), await load(b)];
    const px = (img) => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
      const x = c.getContext('2d'); x.drawImage(img, 0, 0); return x.getImageData(0, 0, img.width, img.height).data; };
    const [pa, pb] = [px(ia), px(ib)];
    if (pa.length !== pb.length) return -1;
    let n = 0;
    for (let i = 0; i < pa.length; i += 4) if (pa[i] !== pb[i] || pa[i + 1] !== pb[i + 1] || pa[i + 2] !== pb[i + 2]) n++;
    return n;
  }, [a.toString('base64'), b.toString('base64')]);
}

// the largest difference between the drawn attitudes and the recorded values, over `count` frames per panel
async function attitudes(page, expect, count) {
  let worst = 0, frames = 0, wrongSample = 0;
  for (let p = 0; p < expect.panels.length; p++) {
    const E = expect.panels[p], n = E.samples.length;
    const times = await page.evaluate((p) => window.lieflow.times(p), p);
    if (times.length !== n) { check(false, `panel ${p}: ${times.length} frames in the page, ${n} expected`); continue; }
    for (let j = 0; j < count; j++) {
      const f = Math.round(j * (n - 1) / Math.max(1, count - 1));
      const got = await page.evaluate(([p, t, nobj]) => {
        window.lieflow.seek(t);
        const a = [];
        for (let o = 0; o < nobj; o++) a.push(window.lieflow.attitude(p, o));
        return {sample: window.lieflow.panels[p].sample, a: a};
      }, [p, times[f], E.shapes.length]);
      if (got.sample !== E.samples[f]) wrongSample++;
      for (let o = 0; o < E.shapes.length; o++) {
        const v = E.values[o][f], m = got.a[o];
        const drawn = E.shapes[o] === 'box' ? m : [m[2], m[5], m[8]]; // a rod lies along its z axis
        for (let i = 0; i < v.length; i++) worst = Math.max(worst, Math.abs(drawn[i] - v[i]));
      }
      frames++;
    }
  }
  return {worst, frames, wrongSample};
}

async function checkPage(browser, P) {
  const page = await browser.newPage({viewport: {width: 1280, height: 760}});
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const t0 = Date.now();
  await page.goto('file://' + fs.realpathSync(P.page));
  await page.waitForFunction(() => document.body.dataset.status !== 'loading', null, {timeout: 60000});
  const status = await page.evaluate(() => [document.body.dataset.status, window.lieflow && window.lieflow.error]);
  check(status[0] === 'ready', `${P.name}: the page is ready in ${Date.now() - t0} ms (status ${status[0]}${status[1] ? ': ' + status[1] : ''})`);
  const expect = JSON.parse(fs.readFileSync(P.check, 'utf8'));
  const r = await attitudes(page, expect, 25);
  check(r.wrongSample === 0, `${P.name}: the frame shown at each of ${r.frames} times is the recorded sample of that frame (${r.wrongSample} wrong)`);
  check(r.worst <= TOL, `${P.name}: drawn attitudes = recorded R / q at ${r.frames} frames: max |difference| ${r.worst.toExponential(2)} <= ${TOL}`);
  const [ta, tb] = await page.evaluate(() => [window.lieflow.t0 + 0.3 * (window.lieflow.t1 - window.lieflow.t0),
                                             window.lieflow.t0 + 0.7 * (window.lieflow.t1 - window.lieflow.t0)]);
  const shot = async (t) => { await page.evaluate((t) => window.lieflow.seek(t), t); return page.screenshot(); };
  const A = await shot(ta), B = await shot(tb), A2 = await shot(ta);
  const dAB = await differing(page, A, B), dAA = await differing(page, A, A2);
  check(dAB > 1000, `${P.name}: screenshots at t = ${ta.toFixed(3)} and ${tb.toFixed(3)} differ in ${dAB} pixels`);
  check(dAA === 0, `${P.name}: two screenshots at t = ${ta.toFixed(3)} differ in ${dAA} pixels`);
  if (P.png) {
    await page.evaluate(() => window.lieflow.seek(window.lieflow.t0 + 0.5 * (window.lieflow.t1 - window.lieflow.t0)));
    await page.screenshot({path: P.png});
    console.log(`     ${P.name}: frame at mid-window in ${P.png}`);
  }
  check(errors.length === 0, `${P.name}: no console error${errors.length ? ': ' + errors.slice(0, 3).join(' | ') : ''}`);
  await page.close();
}

async function checkBroken(browser, path) {
  const page = await browser.newPage({viewport: {width: 900, height: 500}});
  await page.goto('file://' + fs.realpathSync(path));
  await page.waitForFunction(() => document.body.dataset.status !== 'loading', null, {timeout: 30000}).catch(() => {});
  const r = await page.evaluate(() => {
    const e = document.getElementById('lf-error');
    return {status: document.body.dataset.status, text: e ? e.textContent : '', visible: !!e && !e.hidden && e.offsetHeight > 0};
  });
  check(r.status === 'error' && r.visible && r.text.length > 20,
        `a page with a broken three.js shows a message (status ${r.status}): "${r.text.slice(0, 100)}"`);
  await page.close();
}

async function validate(path) {
  const r = await validator.validateBytes(new Uint8Array(fs.readFileSync(path)));
  const i = r.issues;
  check(i.numErrors === 0, `glTF validator on ${path}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos` +
        (i.numErrors ? ': ' + JSON.stringify(i.messages.slice(0, 3)) : ''));
}

(async () => {
  for (const P of manifest.pages) if (P.gltf) await validate(P.gltf);
  const browser = await chromium.launch({
    executablePath: process.env.LIEFLOW_CHROMIUM || '/usr/bin/chromium',
    args: ['--use-gl=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist', '--disable-dev-shm-usage'],
  });
  try {
    for (const P of manifest.pages) {
      try { await checkPage(browser, P); } catch (e) { check(false, `${P.name}: ${e.message}`); }
    }
    await checkBroken(browser, manifest.broken);
  } finally { await browser.close(); }
  console.log(`view: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
})().catch((e) => { console.log('FAIL - ' + e.message); console.log(`view: ${passed} passed, ${failed + 1} failed`); process.exit(1); });
