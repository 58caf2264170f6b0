// Target pressure next to what the array reconstructs on the hand (the renderer's Gaussian
// model, computed by sonoflow-view), the way the thesis's figures 4.2, 5.3 and 6.4 show them:
// the target samples seen from the array (x, y), coloured on one shared scale, with the
// rendered foci or STM paths drawn over the reconstruction.
import { pressureRgb } from './colour_map.js';

export class PressurePanel {
  constructor(targetCanvas, reconstructedCanvas, note) {
    this.target = targetCanvas;
    this.reconstructed = reconstructedCanvas;
    this.note = note;
  }

  update(frame) {
    const h = frame.haptic;
    if (!h) return;
    const t = frame.targets, r = frame.reconstructed, n = t.length / 4;
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity, peak = 0;
    for (let i = 0; i < n; i++) {
      minX = Math.min(minX, t[4 * i]); maxX = Math.max(maxX, t[4 * i]);
      minY = Math.min(minY, t[4 * i + 1]); maxY = Math.max(maxY, t[4 * i + 1]);
      peak = Math.max(peak, t[4 * i + 3], r[i]);
    }
    const span = Math.max(maxX - minX, maxY - minY, 0.04) * 1.15;
    const cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
    const draw = (canvas, value, overlay) => {
      const g = canvas.getContext('2d'), s = canvas.width / span;
      g.fillStyle = '#0b0e11';
      g.fillRect(0, 0, canvas.width, canvas.height);
      // Seen from the array (below): x to the right, y up.
      const px = (x) => canvas.width / 2 + (x - cx) * s, py = (y) => canvas.height / 2 - (y - cy) * s;
      for (let i = 0; i < n; i++) {
        const [R, G, B] = pressureRgb(peak > 0 ? value(i) / peak : 0);
        g.fillStyle = `rgb(${R},${G},${B})`;
        g.beginPath();
        g.arc(px(t[4 * i]), py(t[4 * i + 1]), 3, 0, 2 * Math.PI);
        g.fill();
      }
      if (overlay) overlay(g, px, py, s);
    };
    draw(this.target, (i) => t[4 * i + 3]);
    draw(this.reconstructed, (i) => r[i], (g, px, py, s) => {
      g.strokeStyle = '#40e0ff';
      g.lineWidth = 1.5;
      let at = 0;
      for (const count of h.path_vertices) {
        g.beginPath();
        for (let v = 0; v < count; v++, at++) {
          const x = px(frame.paths[4 * at]), y = py(frame.paths[4 * at + 1]);
          if (v === 0) g.moveTo(x, y); else g.lineTo(x, y);
        }
        g.closePath();
        g.stroke();
      }
      g.strokeStyle = '#ff5fb0';
      for (const [x, y] of h.solution) {
        g.beginPath();
        g.arc(px(x), py(y), Math.max(h.sigma_m * s, 3), 0, 2 * Math.PI);
        g.stroke();
      }
    });
    const error = (100 * h.reconstruction_rmse).toFixed(1);
    this.note.textContent = n === 0 ? 'no pressure on the hand' :
      `${h.mode.toUpperCase()}: ${n} of ${h.targets_total} array-facing samples, peak ${peak.toFixed(0)} Pa, ` +
      `reconstruction error ${error} % (RMSE / max p*, sigma ${(h.sigma_m * 1000).toFixed(1)} mm)`;
  }
}
