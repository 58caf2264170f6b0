// Pressure colours: a perceptual dark-to-bright ramp (close to matplotlib's "inferno"), so zero
// pressure recedes and the peaks stand out, the way the thesis's pressure figures read.
const STOPS = [
  [0.0, [0, 0, 4]], [0.25, [87, 16, 110]], [0.5, [188, 55, 84]], [0.75, [249, 142, 9]], [1.0, [252, 255, 164]],
];

export function pressureRgb(t) {
  t = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), 1);
  for (let i = 1; i < STOPS.length; i++) {
    const [t1, c1] = STOPS[i];
    if (t <= t1) {
      const [t0, c0] = STOPS[i - 1];
      const u = (t - t0) / (t1 - t0);
      return c0.map((c, k) => Math.round(c + (c1[k] - c) * u));
    }
  }
  return STOPS[STOPS.length - 1][1];
}
