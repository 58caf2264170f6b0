// sonoflow-view in a real browser (Debian's chromium, headless, driven by playwright-core)
// against sonoflowd --emulate (emulated devices, the OpenCL particle fluid): frames arrive, the
// page shows the particle count and hand joints the daemon's status reports, the plots advance,
// a control changes the material in the daemon, a screenshot shows the hand and the particles by
// their colours, the view follows a daemon restart (plots start afresh), and --png writes a picture.
//
// Run by CTest (tests/view/CMakeLists.txt) with the programs' paths in the environment:
// SONOFLOWD, SONOFLOW_VIEW, SONOFLOW_TOP, SONOFLOW_VIEW_NPM (node_modules of the build),
// SONOFLOW_SOURCE_DIR, CHROMIUM, and TEST_OUTPUT (where the pictures are kept).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, existsSync, rmSync, readdirSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPng, countPixels } from './png.mjs';

const env = process.env;
const require = createRequire(join(env.SONOFLOW_VIEW_NPM, 'package.json'));
const { chromium } = require('playwright-core');
const CHROMIUM = env.CHROMIUM || '/usr/bin/chromium';
const OUT = env.TEST_OUTPUT || mkdtempSync(join(tmpdir(), 'sonoflow-view-out.'));
mkdirSync(OUT, { recursive: true });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(what, predicate, timeoutMs = 60000, everyMs = 200) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await predicate();
    if (last) return last;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

const dir = mkdtempSync(join(tmpdir(), 'sonoflow-view-test.'));
const config = join(dir, 'sonoflow.toml');
// The shipped presets and one of the test's own: the page must offer what the daemon loaded.
const materials = join(dir, 'materials');
mkdirSync(materials);
const shipped = readdirSync(join(env.SONOFLOW_SOURCE_DIR, 'config/materials')).filter((f) => f.endsWith('.toml'));
for (const f of shipped) copyFileSync(join(env.SONOFLOW_SOURCE_DIR, 'config/materials', f), join(materials, f));
writeFileSync(join(materials, 'test_goo.toml'),
              readFileSync(join(materials, 'water.toml'), 'utf8').replace('name = "water"', 'name = "test_goo"'));
const presets = [...shipped.map((f) => f.slice(0, -5)), 'test_goo'].sort();
writeFileSync(config, [
  `status.path = "${dir}/status"`,
  `control.socket = "${dir}/control.sock"`,
  `recorder.directory = "${dir}/sessions"`,
  `fluid.materials_dir = "${materials}"`,
  `scene.file = "${env.SONOFLOW_SOURCE_DIR}/config/scenes/stir-honey.toml"`,
].join('\n') + '\n');

function startDaemon() {
  const daemon = spawn(env.SONOFLOWD, ['--config', config, '--emulate', '--run-for', '300'],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
  daemon.log = '';
  daemon.stderr.on('data', (d) => { daemon.log += d; });
  return daemon;
}
async function stopDaemon(daemon) {
  if (daemon.exitCode !== null) return;
  const exited = new Promise((resolve) => daemon.once('exit', resolve));
  daemon.kill('SIGTERM');
  await exited;
}
// The daemon's own status, read independently of the viewer (sonoflow-top --json).
function daemonStatus() {
  try {
    return JSON.parse(execFileSync(env.SONOFLOW_TOP, ['--shm', `${dir}/status`, '--json'], { encoding: 'utf8' }));
  } catch {
    return null;
  }
}

test('sonoflow-view in headless chromium against sonoflowd --emulate', { timeout: 240000 }, async (t) => {
  let daemon = startDaemon();
  const viewer = spawn(env.SONOFLOW_VIEW, ['--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let viewerOut = '', viewerErr = '';
  viewer.stdout.on('data', (d) => { viewerOut += d; });
  viewer.stderr.on('data', (d) => { viewerErr += d; });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  t.after(async () => {
    await browser.close();
    viewer.kill('SIGTERM');
    await stopDaemon(daemon);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = await until('the viewer to serve', () => viewerOut.match(/serving (http:\/\/\S+)/)?.[1], 10000);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Not the page's 'load' (every module and vendored library fetched): on a loaded 2-core machine,
  // with the daemon's fluid on both cores, that took over 30 s once; what follows waits for frames.
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 90000 });
  const state = () => page.evaluate(() => {
    const s = window.sonoflowView;
    if (!s) return null;  // the page's modules have not run yet
    return { ...s, status: null, statusGeneration: s.status?.daemon.generation ?? null, viewer: s.viewer && { attached: s.viewer.attached, attachments: s.viewer.attachments,
                                                         control: s.viewer.control, generation: s.viewer.generation } };
  });

  await t.test('scene frames arrive', async () => {
    await until('10 scene frames with particles', async () => {
      const s = await state();
      return s && s.sceneFrames >= 10 && s.particlesDrawn > 0 && s;
    }, 120000);
  });

  await t.test('particle count and hand joints shown match the daemon status', async () => {
    const status = await until('daemon status with particles', () => {
      const s = daemonStatus();
      return s && s.fluid.particles > 0 && s.tracker.hands > 0 && s;
    });
    const s = await state();
    assert.equal(s.particlesTotal, status.fluid.particles);
    assert.equal(s.hands, status.tracker.hands);
    assert.equal(s.jointsDrawn, 27 * status.tracker.hands);  // every joint of the emulated hand is valid
    assert.ok((await page.textContent('#particles')).startsWith(String(status.fluid.particles)));
    assert.match(await page.textContent('#joints'), new RegExp(`${27 * status.tracker.hands} joints`));
    assert.equal(s.material, status.fluid.material);
    assert.ok(s.samplesDrawn > 0, 'contact samples drawn');
    assert.equal(s.mode, 'am');
    assert.ok(s.fociDrawn > 0, 'AM foci drawn');
  });

  await t.test('plots advance', async () => {
    const before = (await state()).plotLength;
    await until('five more status points', async () => (await state()).plotLength >= before + 5, 15000);
  });

  await t.test('a control changes the material in the daemon', async () => {
    assert.equal((await state()).viewer.control.may_write, true, 'the daemon lets its own user change settings');
    assert.equal(await page.isVisible('#controls'), true);
    const offered = await page.$$eval('#material-select option', (options) => options.map((o) => o.value));
    assert.deepEqual([...offered].sort(), presets, 'the material choices are the daemon\'s presets');
    await page.selectOption('#material-select', 'water');
    await until('the daemon to run water', () => daemonStatus()?.fluid.material === 'water', 15000);
    await until('the page to show water', async () => (await state()).material === 'water', 15000);
    await until('the daemon\'s reply on the page', async () =>
      (await state()).controlReplies.some((r) => r.line === 'material water' && r.reply.ok), 15000);
  });

  await t.test('screenshot shows the hand and the particles by colour', async () => {
    await sleep(1500);  // a few frames in water's colour
    const file = join(OUT, 'sonoflow-view.png');
    await page.screenshot({ path: file });
    const png = readPng(readFileSync(file));
    const box = await page.locator('#scene').boundingBox();
    const rect = { x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.width), h: Math.round(box.height) };
    const area = rect.w * rect.h;
    const background = countPixels(png, (r, g, b) => r < 20 && g < 24 && b < 28, rect);
    const water = countPixels(png, (r, g, b) => b > 110 && b > r + 60 && g > r, rect);  // water blue
    const skin = countPixels(png, (r, g, b) => r > 90 && r > g && g > b && b > 0.4 * r && r - b > 25, rect);
    assert.ok(background < 0.95 * area, `not blank (${background} of ${area} pixels background)`);
    assert.ok(water > 0.005 * area, `particles visible in water blue (${water} pixels)`);
    assert.ok(skin > 0.005 * area, `hand visible in skin tone (${skin} pixels)`);
  });

  await t.test('the view follows a daemon restart', async () => {
    const before = await state();
    assert.equal(before.viewer.attachments, 1);
    await stopDaemon(daemon);
    await until('the page to see the daemon gone', async () => (await state()).viewer.attached === false, 15000);
    daemon = startDaemon();
    const after = await until('the page to reattach', async () => {
      const s = await state();
      return s.viewer.attached && s.viewer.attachments === 2 && s;
    }, 60000);
    assert.notEqual(after.viewer.generation, before.viewer.generation);
    const frames = after.sceneFrames;
    await until('new scene frames', async () => (await state()).sceneFrames > frames + 5, 60000);
    // The plots start afresh with the new run: no point of the old daemon is left in them.
    assert.equal(before.plotFirstGeneration, before.statusGeneration);
    const fresh = await until('status of the new run in the plots', async () => {
      const s = await state();
      return s.statusGeneration !== before.statusGeneration && s.plotLength > 0 && s;
    }, 30000);
    assert.equal(fresh.plotFirstGeneration, fresh.statusGeneration);
  });

  await t.test('--png writes a picture of the view', async () => {
    const file = join(OUT, 'sonoflow-view-png.png');
    execFileSync(env.SONOFLOW_VIEW, ['--config', config, '--png', file, '--chromium', CHROMIUM], { timeout: 120000 });
    assert.ok(existsSync(file));
    const png = readPng(readFileSync(file));
    const dark = countPixels(png, (r, g, b) => r < 24 && g < 28 && b < 32);
    assert.ok(dark < 0.9 * png.width * png.height, 'not blank');
    const blue = countPixels(png, (r, g, b) => b > 110 && b > r + 60 && g > r);
    assert.ok(blue > 500, `particles in the picture (${blue} water-blue pixels)`);
  });

  assert.deepEqual(errors, [], 'no script errors on the page');
  assert.match(viewerErr, /attached to sonoflowd/);
});
