// Frames from sonoflow-view (daemon/view/frame_hub.hpp): [u32 kind][u32 bytes][payload], little-
// endian. Kind 1: status JSON, 2: scene (binary, scene_frame.hpp), 3: viewer JSON.
export const STATUS = 1, SCENE = 2, VIEWER = 3;

const text = new TextDecoder();

// Reads /api/stream until it ends, calling onFrame(kind, payloadArrayBuffer) for each frame.
export async function readStream(signal, onFrame) {
  const response = await fetch('api/stream', { signal, cache: 'no-store' });
  if (!response.ok || !response.body) throw new Error(`stream: HTTP ${response.status}`);
  const reader = response.body.getReader();
  let pending = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const joined = new Uint8Array(pending.length + value.length);
    joined.set(pending, 0);
    joined.set(value, pending.length);
    let at = 0;
    while (joined.length - at >= 8) {
      const view = new DataView(joined.buffer, joined.byteOffset + at, 8);
      const kind = view.getUint32(0, true), bytes = view.getUint32(4, true);
      if (joined.length - at - 8 < bytes) break;
      // A copy, so typed arrays over the payload start at offset 0 (4-byte aligned).
      onFrame(kind, joined.slice(at + 8, at + 8 + bytes).buffer);
      at += 8 + bytes;
    }
    pending = joined.slice(at);
  }
}

export function json(buffer) {
  return JSON.parse(text.decode(buffer));
}

// The scene frame: JSON meta and typed views of its arrays.
export function decodeScene(buffer) {
  const metaBytes = new DataView(buffer).getUint32(0, true);
  const meta = JSON.parse(text.decode(new Uint8Array(buffer, 4, metaBytes)));
  const base = 4 + metaBytes;
  const a = meta.arrays;
  const f32 = (name, per) => a[name] ? new Float32Array(buffer, base + a[name].offset, a[name].count * per) : new Float32Array(0);
  const u8 = (name, per) => a[name] ? new Uint8Array(buffer, base + a[name].offset, a[name].count * per) : new Uint8Array(0);
  return {
    fluid: meta.fluid ?? null,
    haptic: meta.haptic ?? null,
    particlePositions: f32('particle_positions', 3),
    particleColours: u8('particle_colours', 4),
    contact: f32('contact_samples', 4),
    targets: f32('targets', 4),
    reconstructed: f32('reconstructed', 1),
    paths: f32('paths', 4),
    trail: f32('trail', 4),
  };
}
