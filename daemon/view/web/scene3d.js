// The 3-D view (three.js): fluid particles in their colours, the container, the tracked hand as
// joints and capsules, the contact samples coloured by pressure, the array, and the haptic
// output: AM foci as spheres sized by intensity, STM paths as loops with the moving focus and
// its trail. Array frame, metres, +z up from the array surface.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/OrbitControls.js';
import { pressureRgb } from './colour_map.js';

// Bones of the 27-joint hand (kernels/types/hand_pose.hpp): each finger from the wrist.
const BONES = [[26, 1]];
for (const first of [2, 6, 11, 16, 21]) {
  const last = first === 2 ? 5 : first + 4;
  BONES.push([1, first]);
  for (let j = first; j < last; j++) BONES.push([j, j + 1]);
}
// Round points: a white disc the point colours tint.
let discTexture = null;
function disc() {
  if (discTexture) return discTexture;
  const c = document.createElement('canvas');
  c.width = c.height = 32;
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  g.beginPath();
  g.arc(16, 16, 15, 0, 2 * Math.PI);
  g.fill();
  discTexture = new THREE.CanvasTexture(c);
  return discTexture;
}
const MAX_PARTICLES = 1 << 16, MAX_SAMPLES = 4096, MAX_TRAIL = 4096, MAX_FOCI = 8;

export class Scene3d {
  constructor(element) {
    this.element = element;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio || 1);
    this.renderer.setClearColor(0x0b0e11);
    element.appendChild(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.005, 5);
    this.camera.up.set(0, 0, 1);
    // From the fingertips' side (the emulated forearm comes in along -y), above the pool.
    this.camera.position.set(0.30, 0.34, 0.40);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.target.set(0, -0.02, 0.12);
    this.controls.update();
    this.scene.add(new THREE.AmbientLight(0xffffff, 0.55));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(0.3, -0.2, 0.8);
    this.scene.add(sun);

    // The fluid lets the hand show through; pressure samples and foci draw over everything.
    this.particles = this.#points(MAX_PARTICLES, 0.011, 0.7);
    this.contact = this.#points(MAX_SAMPLES, 0.006, 1);
    this.contact.material.depthTest = false;
    this.contact.renderOrder = 2;
    this.container = new THREE.Group();
    this.array = new THREE.Group();
    this.scene.add(this.container, this.array);

    const skin = new THREE.MeshStandardMaterial({ color: 0xe8b89a, roughness: 0.6, transparent: true, opacity: 0.55 });
    this.joints = new THREE.InstancedMesh(new THREE.SphereGeometry(1, 16, 12), skin, 2 * 27);
    this.bones = new THREE.InstancedMesh(new THREE.CylinderGeometry(1, 1, 1, 12, 1, true), skin, 2 * BONES.length);
    this.joints.count = 0;
    this.bones.count = 0;
    // Instances move every frame: no culling by a bounding sphere computed once.
    this.joints.frustumCulled = this.bones.frustumCulled = false;
    this.scene.add(this.joints, this.bones);

    this.foci = new THREE.InstancedMesh(new THREE.SphereGeometry(1, 20, 14),
      new THREE.MeshStandardMaterial({ color: 0xff5fb0, emissive: 0x801040, depthTest: false }), MAX_FOCI);
    this.foci.renderOrder = 3;
    this.foci.frustumCulled = false;
    this.foci.count = 0;
    this.scene.add(this.foci);
    this.paths = new THREE.Group();
    this.scene.add(this.paths);
    const trailGeometry = new THREE.BufferGeometry();
    trailGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(MAX_TRAIL * 3), 3));
    this.trail = new THREE.Points(trailGeometry, new THREE.PointsMaterial({ color: 0xffd0ea, size: 0.0025 }));
    this.trail.frustumCulled = false;
    this.scene.add(this.trail);

    this.resize();
    new ResizeObserver(() => this.resize()).observe(element);
  }

  #points(capacity, size, opacity) {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(capacity * 3), 3));
    geometry.setAttribute('color', new THREE.BufferAttribute(new Uint8Array(capacity * 3), 3, true));
    geometry.setDrawRange(0, 0);
    const material = new THREE.PointsMaterial({ size, vertexColors: true, sizeAttenuation: true, map: disc(),
                                                alphaTest: 0.5, transparent: opacity < 1, opacity,
                                                depthWrite: opacity >= 1 });
    const points = new THREE.Points(geometry, material);
    points.frustumCulled = false;
    this.scene.add(points);
    return points;
  }

  resize() {
    const w = Math.max(this.element.clientWidth, 1), h = Math.max(this.element.clientHeight, 1);
    this.renderer.setSize(w, h);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  // The transducer grid (viewer info): small discs on z = 0 and the board's outline.
  setArray(array) {
    this.array.clear();
    if (!array) return;
    const t = array.transducers;
    const positions = new Float32Array(t.length / 2 * 3);
    for (let i = 0; i < t.length / 2; i++) positions.set([t[2 * i], t[2 * i + 1], 0], 3 * i);
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(positions, 3));
    this.array.add(new THREE.Points(g, new THREE.PointsMaterial({ color: 0x7fa7c9, size: 0.007 })));
    const half = array.pitch_m * array.columns / 2, halfY = array.pitch_m * array.rows / 2;
    const outline = new THREE.BufferGeometry().setFromPoints(
      [[-half, -halfY], [half, -halfY], [half, halfY], [-half, halfY]].map(([x, y]) => new THREE.Vector3(x, y, 0)));
    this.array.add(new THREE.LineLoop(outline, new THREE.LineBasicMaterial({ color: 0x7fa7c9 })));
  }

  #setContainer(shapes) {
    const key = JSON.stringify(shapes);
    if (key === this.containerKey) return;
    this.containerKey = key;
    this.container.clear();
    const material = new THREE.LineBasicMaterial({ color: 0x5a6a7a });
    for (const s of shapes) {
      if (s.kind === 'box') {
        const size = s.b.map((b, i) => b - s.a[i]);
        const edges = new THREE.EdgesGeometry(new THREE.BoxGeometry(...size));
        const box = new THREE.LineSegments(edges, material);
        box.position.set(...s.a.map((a, i) => a + size[i] / 2));
        this.container.add(box);
      } else if (s.kind === 'bowl') {
        const ring = new THREE.Mesh(new THREE.SphereGeometry(s.radius, 24, 12, 0, Math.PI * 2, Math.PI / 2, Math.PI / 2),
          new THREE.MeshBasicMaterial({ color: 0x5a6a7a, wireframe: true }));
        ring.rotation.x = Math.PI / 2;
        ring.position.set(...s.a);
        this.container.add(ring);
      } else {  // a plane or incline: a 20 cm square patch through its point
        const plane = new THREE.Mesh(new THREE.PlaneGeometry(0.2, 0.2),
          new THREE.MeshBasicMaterial({ color: 0x5a6a7a, wireframe: true }));
        plane.position.set(...s.a);
        const normal = s.kind === 'incline' ? [-Math.sin(s.angle), 0, Math.cos(s.angle)] : s.b;
        plane.lookAt(plane.position.clone().add(new THREE.Vector3(...normal)));
        this.container.add(plane);
      }
    }
  }

  #setHands(hands) {
    const m = new THREE.Matrix4(), q = new THREE.Quaternion(), up = new THREE.Vector3(0, 1, 0);
    let nj = 0, nb = 0;
    for (const hand of hands) {
      const J = hand.joints;  // [x, y, z, radius, valid]
      for (const j of J) {
        if (!j[4]) continue;
        const r = Math.max(j[3], 0.004) * 1.1;
        m.compose(new THREE.Vector3(j[0], j[1], j[2]), q.identity(), new THREE.Vector3(r, r, r));
        this.joints.setMatrixAt(nj++, m);
      }
      for (const [a, b] of BONES) {
        if (!J[a][4] || !J[b][4]) continue;
        const pa = new THREE.Vector3(J[a][0], J[a][1], J[a][2]), pb = new THREE.Vector3(J[b][0], J[b][1], J[b][2]);
        const axis = pb.clone().sub(pa), length = axis.length();
        if (length < 1e-6) continue;
        const r = Math.max(J[b][3], 0.004);
        q.setFromUnitVectors(up, axis.normalize());
        m.compose(pa.clone().add(pb).multiplyScalar(0.5), q, new THREE.Vector3(r, length, r));
        this.bones.setMatrixAt(nb++, m);
      }
    }
    this.joints.count = nj;
    this.bones.count = nb;
    this.joints.instanceMatrix.needsUpdate = true;
    this.bones.instanceMatrix.needsUpdate = true;
    return nj;
  }

  // One scene frame (frames.js decodeScene). Returns what it drew, for the page's facts.
  update(frame) {
    const drawn = { particles: 0, joints: 0, samples: 0, foci: 0, paths: 0 };
    if (frame.fluid) {
      const n = Math.min(frame.particlePositions.length / 3, MAX_PARTICLES);
      const pos = this.particles.geometry.attributes.position, col = this.particles.geometry.attributes.color;
      pos.array.set(frame.particlePositions.subarray(0, n * 3));
      for (let i = 0; i < n; i++) {
        col.array[3 * i] = frame.particleColours[4 * i];
        col.array[3 * i + 1] = frame.particleColours[4 * i + 1];
        col.array[3 * i + 2] = frame.particleColours[4 * i + 2];
      }
      pos.needsUpdate = col.needsUpdate = true;
      this.particles.geometry.setDrawRange(0, n);
      drawn.particles = n;
      this.#setContainer(frame.fluid.shapes);
      drawn.joints = this.#setHands(frame.fluid.hands);
      drawn.samples = this.#setSamples(frame.contact, frame.fluid.max_pressure);
    }
    if (frame.haptic) Object.assign(drawn, this.#setHaptic(frame));
    return drawn;
  }

  #setSamples(samples, maxPressure) {
    const n = Math.min(samples.length / 4, MAX_SAMPLES);
    const pos = this.contact.geometry.attributes.position, col = this.contact.geometry.attributes.color;
    const scale = maxPressure > 0 ? 1 / maxPressure : 0;
    for (let i = 0; i < n; i++) {
      pos.array.set(samples.subarray(4 * i, 4 * i + 3), 3 * i);
      col.array.set(pressureRgb(samples[4 * i + 3] * scale), 3 * i);
    }
    pos.needsUpdate = col.needsUpdate = true;
    this.contact.geometry.setDrawRange(0, n);
    return n;
  }

  #setHaptic(frame) {
    const h = frame.haptic, m = new THREE.Matrix4(), q = new THREE.Quaternion();
    let n = 0;
    for (const [x, y, z, intensity] of h.emitted) {
      const r = 0.003 + 0.009 * Math.max(intensity, 0);  // sized by intensity
      m.compose(new THREE.Vector3(x, y, z), q, new THREE.Vector3(r, r, r));
      this.foci.setMatrixAt(n++, m);
    }
    this.foci.count = n;
    this.foci.instanceMatrix.needsUpdate = true;
    this.paths.clear();
    let at = 0;
    for (const count of h.path_vertices) {
      const points = [];
      for (let v = 0; v < count; v++, at++) points.push(new THREE.Vector3(frame.paths[4 * at], frame.paths[4 * at + 1], frame.paths[4 * at + 2]));
      this.paths.add(new THREE.LineLoop(new THREE.BufferGeometry().setFromPoints(points),
                                        new THREE.LineBasicMaterial({ color: 0x40e0ff })));
    }
    const trail = this.trail.geometry.attributes.position;
    const tn = h.mode === 'stm' ? Math.min(frame.trail.length / 4, MAX_TRAIL) : 0;
    for (let i = 0; i < tn; i++) trail.array.set(frame.trail.subarray(4 * i, 4 * i + 3), 3 * i);
    trail.needsUpdate = true;
    this.trail.geometry.setDrawRange(0, tn);
    return { foci: n, paths: h.path_vertices.length };
  }

  render() {
    this.controls.update();
    this.renderer.render(this.scene, this.camera);
  }
}
