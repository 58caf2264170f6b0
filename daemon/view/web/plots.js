// The daemon's figures over time (uPlot), one point per status publication: each loop's period
// and execution time (p50 / p99 / max), the device FIFO and underruns, hand-to-array latency,
// and the fluid's step time and particle count.
import uPlot from './vendor/uPlot.esm.js';

const ms = (ns) => ns / 1e6;
// Log axes cannot show 0: an idle loop's 0 ns becomes a gap.
const positive = (v) => (v > 0 ? v : NaN);
const loop = (s, name) => s.loops.find((l) => l.name === name) ?? null;

// Each plot: title, series (label, how to read it from a status, axis), and axis labels.
const PLOTS = [
  { title: 'loop period (ms, log)', log: true, series: [
    ['haptic p50', (s) => ms(loop(s, 'haptic')?.period_ns_measured.p50 ?? NaN)],
    ['haptic p99', (s) => ms(loop(s, 'haptic')?.period_ns_measured.p99 ?? NaN)],
    ['haptic max', (s) => ms(loop(s, 'haptic')?.period_ns_measured.max ?? NaN)],
    ['stream p99', (s) => ms(loop(s, 'stream')?.period_ns_measured.p99 ?? NaN)],
    ['fluid p50', (s) => ms(loop(s, 'fluid')?.period_ns_measured.p50 ?? NaN)],
  ] },
  { title: 'loop execution (ms, log)', log: true, series: [
    ['haptic p50', (s) => ms(loop(s, 'haptic')?.busy_ns.p50 ?? NaN)],
    ['haptic p99', (s) => ms(loop(s, 'haptic')?.busy_ns.p99 ?? NaN)],
    ['haptic max', (s) => ms(loop(s, 'haptic')?.busy_ns.max ?? NaN)],
    ['stream p99', (s) => ms(loop(s, 'stream')?.busy_ns.p99 ?? NaN)],
    ['fluid p99', (s) => ms(loop(s, 'fluid')?.busy_ns.p99 ?? NaN)],
  ] },
  { title: 'array FIFO', series: [
    ['level (samples)', (s) => s.devices[0]?.fifo_level ?? NaN],
    ['underruns', (s) => s.devices[0]?.underruns ?? NaN, 'count'],
  ], axes: ['samples', 'underruns'] },
  { title: 'hand-to-array latency (ms)', series: [
    ['p50', (s) => ms(s.latency.p50_ns)],
    ['p99', (s) => ms(s.latency.p99_ns)],
    ['max', (s) => ms(s.latency.max_ns)],
  ] },
  { title: 'fluid', series: [
    ['step p50 (ms)', (s) => ms(s.fluid.step_ns.p50)],
    ['step p99 (ms)', (s) => ms(s.fluid.step_ns.p99)],
    ['particles', (s) => s.fluid.particles, 'count'],
  ], axes: ['ms', 'particles'] },
];
const COLOURS = ['#4fc3f7', '#ffb74d', '#ef5350', '#81c784', '#ba68c8'];
const WINDOW = 600;  // points kept: 60 s at 10 Hz

export class Plots {
  constructor(element) {
    this.t0 = null;
    this.lastTime = null;
    this.generations = [];  // the daemon run (status generation) of each point
    this.plots = PLOTS.map((spec) => {
      const div = document.createElement('div');
      element.appendChild(div);
      const series = [{ label: 't (s)' }];
      spec.series.forEach(([label, , scale], i) =>
        series.push({ label, stroke: COLOURS[i % COLOURS.length], width: 1.5, scale: scale ?? 'y', spanGaps: true }));
      const axes = [{ stroke: '#8a98a6', grid: { stroke: '#2a323a' } },
                    { stroke: '#8a98a6', grid: { stroke: '#2a323a' }, label: spec.axes?.[0] ?? '' }];
      if (spec.axes) axes.push({ scale: 'count', side: 1, stroke: '#8a98a6', grid: { show: false }, label: spec.axes[1] });
      const data = [[], ...spec.series.map(() => [])];
      const plot = new uPlot({ title: spec.title, width: 400, height: 190, series, axes,
                               scales: { x: { time: false }, y: spec.log ? { distr: 3 } : {} },
                               legend: { live: false } }, data, div);
      return { spec, plot, data, div };
    });
    new ResizeObserver(() => this.resize()).observe(element);
    this.resize();
  }

  resize() {
    for (const p of this.plots) p.plot.setSize({ width: Math.max(p.div.clientWidth - 8, 200), height: 190 });
  }

  // One status (JSON, schema sonoflow.status); returns false when it is not newer. A restarted
  // daemon (a new generation) starts the plots afresh: its loops and counters start from zero.
  add(status, redraw = true) {
    const t = status.monotonic_ns / 1e9;
    if (this.lastTime !== null && t <= this.lastTime) return false;
    const generation = status.daemon.generation;
    if (this.generations.length > 0 && this.generations[this.generations.length - 1] !== generation) this.clear();
    this.lastTime = t;
    if (this.t0 === null) this.t0 = t;
    this.generations.push(generation);
    if (this.generations.length > WINDOW) this.generations.shift();
    for (const p of this.plots) {
      p.data[0].push(t - this.t0);
      p.spec.series.forEach(([, read], i) => p.data[i + 1].push(p.spec.log ? positive(read(status)) : read(status)));
      if (p.data[0].length > WINDOW) for (const column of p.data) column.shift();
      if (redraw) p.plot.setData(p.data);
    }
    return true;
  }

  clear() {
    this.t0 = null;
    this.generations = [];
    for (const p of this.plots) for (const column of p.data) column.length = 0;
  }

  // The daemon run the oldest point shown belongs to (null when empty).
  firstGeneration() {
    return this.generations[0] ?? null;
  }

  redraw() {
    for (const p of this.plots) p.plot.setData(p.data);
  }

  length() {
    return this.plots[0].data[0].length;
  }
}
