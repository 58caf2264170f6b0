// sonoflow-view's page: follows the viewer's frame stream and draws it. ?capture=1 (used by
// `sonoflow-view --png`) loads the newest frames once instead and draws one picture.
//
// window.sonoflowView holds what the page shows, for people in the console and for the browser
// test (tests/view/): frames received, particles and joints drawn, the plots' length, etc.
import { STATUS, SCENE, VIEWER, readStream, json, decodeScene } from './frames.js';
import { Scene3d } from './scene3d.js';
import { PressurePanel } from './pressure_panel.js';
import { Plots } from './plots.js';
import { Controls } from './controls.js';

const $ = (id) => document.getElementById(id);
const state = window.sonoflowView = {
  sceneFrames: 0, statusFrames: 0, viewer: null, status: null,
  particlesTotal: 0, particlesDrawn: 0, jointsDrawn: 0, hands: 0, material: null, mode: null,
  samplesDrawn: 0, fociDrawn: 0, pathsDrawn: 0, plotLength: 0, plotFirstGeneration: null, controlReplies: [], ready: false,
};
const view = new Scene3d($('scene'));
window.sonoflowScene = view;  // for the console
const panel = new PressurePanel($('target'), $('reconstructed'), $('pressure-note'));
const plots = new Plots($('plots'));
const controls = new Controls(document, (line, reply) => state.controlReplies.push({ line, reply }));
const COLOUR_BY = { material: 'colour: material', fraction: 'colour: mixture fraction', temperature: 'colour: temperature' };

function onViewer(info) {
  state.viewer = info;
  view.setArray(info.array);
  controls.setAccess(info.control);
  const badge = $('connection');
  badge.textContent = info.attached ? (info.scene ? 'live' : 'status only') : 'waiting for sonoflowd';
  badge.className = `badge ${info.attached ? 'live' : 'lost'}`;
  $('problem').textContent = info.problem;
  $('daemon').textContent = info.attached ? `daemon ${info.generation} (${info.daemon_state}), attached ${info.attachments}x` : '';
}

function onStatus(status, redraw = true) {
  state.status = status;
  state.statusFrames++;
  plots.add(status, redraw);
  state.plotLength = plots.length();
  state.plotFirstGeneration = plots.firstGeneration();
  controls.setStatus(status);
  controls.setMode(status.haptic.mode);
  const d = status.daemon;
  if (state.viewer?.attached) $('daemon').textContent =
    `sonoflowd ${d.version}, pid ${d.pid}, ${d.state}${d.degraded ? ', DEGRADED' : ''}${d.stale ? ', STALE' : ''}`;
}

function onScene(frame) {
  const drawn = view.update(frame);
  panel.update(frame);
  state.sceneFrames++;
  if (frame.fluid) {
    const f = frame.fluid;
    state.particlesTotal = f.particles_total;
    state.particlesDrawn = drawn.particles;
    state.jointsDrawn = drawn.joints;
    state.hands = f.hands.length;
    state.samplesDrawn = drawn.samples;
    state.material = f.material;
    $('material').textContent = f.material;
    $('particles').textContent = `${f.particles_total} (${drawn.particles} drawn)`;
    $('joints').textContent = `${f.hands.length} hand${f.hands.length === 1 ? '' : 's'}, ${drawn.joints} joints`;
    $('contact').textContent = `${f.samples_total} samples, max ${f.max_pressure.toFixed(0)} Pa`;
    $('legend').textContent = COLOUR_BY[f.colour_by] ?? '';
  }
  if (frame.haptic) {
    const h = frame.haptic;
    state.mode = h.mode;
    state.fociDrawn = drawn.foci;
    state.pathsDrawn = h.path_vertices.length;
    $('haptics').textContent = h.mode === 'stm' ? `STM, ${h.path_vertices.length} paths` :
      h.mode === 'am' ? `AM, ${h.emitted.length} foci` : 'silent';
  }
}

async function fetchJson(path) {
  const r = await fetch(path, { cache: 'no-store' });
  return r.ok ? r.json() : null;
}

async function live() {
  const history = await fetchJson('api/history');
  for (const s of history ?? []) onStatus(s, false);
  plots.redraw();
  const frame = () => requestAnimationFrame(() => { view.render(); frame(); });
  frame();
  state.ready = true;
  for (;;) {
    try {
      await readStream(undefined, (kind, buffer) => {
        if (kind === VIEWER) onViewer(json(buffer));
        else if (kind === STATUS) onStatus(json(buffer));
        else if (kind === SCENE) onScene(decodeScene(buffer));
      });
    } catch (e) {
      $('connection').textContent = 'viewer unreachable';
      $('connection').className = 'badge lost';
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));  // the viewer restarted: again
  }
}

async function capture() {
  const info = await fetchJson('api/viewer');
  if (info) onViewer(info);
  for (const s of (await fetchJson('api/history')) ?? []) onStatus(s, false);
  plots.redraw();
  const scene = await fetch('api/scene', { cache: 'no-store' });
  if (scene.ok) onScene(decodeScene(await scene.arrayBuffer()));
  view.render();
  state.ready = true;
}

if (new URLSearchParams(location.search).has('capture')) capture(); else live();
