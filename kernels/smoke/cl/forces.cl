// Scene sources and body forces, integrated by explicit Euler (thesis 4.2.1):
//   - jets prescribe their velocity on the faces inside their sphere and fill it with smoke;
//     plumes fill theirs with warm smoke and let buoyancy lift it;
//   - buoyancy f = (-alpha d + beta T) up (Fedkiw, Stam, Jensen 2001), d smoke density, T the
//     temperature above ambient, plus a uniform body force;
//   - vorticity confinement f = eps h (N x omega), N = grad|omega| / |grad|omega||, puts back the
//     small eddies that the semi-Lagrangian step smooths away (same paper).

// Everything below is in scalars, with the parameters read before the row loop, so that LLVM
// vectorises the rows on a CPU (common.cl). The vorticity and the confinement force are stored
// as planes of one component each (`plane` = the padded cell count apart): omega x, y, z,
// |omega|, and force x, y, z.

// Sources: three float4 each, [centre, radius], [velocity, kind: 1 jet, 0 plume],
// [smoke density, temperature excess, -, -]. One pass over the grid per source (a row's cells
// then test one sphere each, which vectorises); a row entirely outside the sphere does nothing.
// q holds the density and temperature planes.
__kernel void apply_sources(P_CONST p, __global const float4* sources, __global float* q,
                            __global float* u, __global float* v, __global float* w) {
  const int count = p->source_count, plane = p->stride[3];
  const float h = p->h, half_cell = 0.5f * h;
  const float ox = p->origin[0] - half_cell, oy = p->origin[1] - half_cell, oz = p->origin[2] - half_cell;
  for (int n = 0; n < count; ++n) {
    const float4 at = sources[3 * n], vel = sources[3 * n + 1], fill = sources[3 * n + 2];
    const float r2 = at.w * at.w, reach = at.w + h;
    const int jet = vel.w > 0.5f;
    const float vx = vel.x, vy = vel.y, vz = vel.z, density = fill.x, heat = fill.y;
    const float cx = at.x - ox, cy = at.y - oy, cz = at.z - oz;  // centre from cell 0's centre
    FOR_EACH_CELL(p) {
      const float dy = (float)j * h - cy, dz = (float)k * h - cz;
      if (dy * dy + dz * dz > reach * reach) continue;  // the whole row misses the sphere
      const int c = cell_index(p, i, j, k);
      const float dx = (float)i * h - cx;
      const float d2 = dx * dx + dy * dy + dz * dz;
      if (d2 <= r2) {
        q[c] = fmax(q[c], density);
        q[plane + c] = fmax(q[plane + c], heat);
      }
      if (jet) {
        // The cell's low faces sit half a cell below its centre on their own axis.
        const float dxu = dx - half_cell, dyv = dy - half_cell, dzw = dz - half_cell;
        if (dxu * dxu + dy * dy + dz * dz <= r2) u[c] = vx;
        if (dx * dx + dyv * dyv + dz * dz <= r2) v[c] = vy;
        if (dx * dx + dy * dy + dzw * dzw <= r2) w[c] = vz;
      }
    }
  }
}

// omega = curl u at cell centres (central differences of the centre velocities, each the mean
// of a cell's two faces on its axis), written as planes x, y, z, |omega|; 0 outside the fluid.
__kernel void vorticity_curl(P_CONST p, __global const float* u, __global const float* v,
                             __global const float* w, __global const uchar* type, __global float* omega) {
  const int sy = SY(p), sz = SZ(p), plane = p->stride[3];
  const float s = 0.25f * p->inv_h;  // central difference (1/2h) of centre means (1/2)
  __global float* wx = omega;
  __global float* wy = omega + plane;
  __global float* wz = omega + 2 * plane;
  __global float* wn = omega + 3 * plane;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    // d(centre w)/dy - d(centre v)/dz, and so on, as differences of face sums.
    const float dwdy = (w[c + sy] + w[c + sy + sz]) - (w[c - sy] + w[c - sy + sz]);
    const float dvdz = (v[c + sz] + v[c + sz + sy]) - (v[c - sz] + v[c - sz + sy]);
    const float dudz = (u[c + sz] + u[c + sz + 1]) - (u[c - sz] + u[c - sz + 1]);
    const float dwdx = (w[c + 1] + w[c + 1 + sz]) - (w[c - 1] + w[c - 1 + sz]);
    const float dvdx = (v[c + 1] + v[c + 1 + sy]) - (v[c - 1] + v[c - 1 + sy]);
    const float dudy = (u[c + sy] + u[c + sy + 1]) - (u[c - sy] + u[c - sy + 1]);
    const int fluid = type[c] == CELL_FLUID;
    const float x = fluid ? (dwdy - dvdz) * s : 0.0f;
    const float y = fluid ? (dudz - dwdx) * s : 0.0f;
    const float z = fluid ? (dvdx - dudy) * s : 0.0f;
    wx[c] = x;
    wy[c] = y;
    wz[c] = z;
    wn[c] = sqrt(x * x + y * y + z * z);
  }
}

// force = eps h (N x omega) per fluid cell (m/s^2), N = grad|omega| / |grad|omega||; planes
// x, y, z of `force`.
__kernel void confinement_force(P_CONST p, __global const float* omega, __global const uchar* type,
                                __global float* force) {
  const int sy = SY(p), sz = SZ(p), plane = p->stride[3];
  const float eps_h = p->vorticity * p->h;
  __global const float* wx = omega;
  __global const float* wy = omega + plane;
  __global const float* wz = omega + 2 * plane;
  __global const float* wn = omega + 3 * plane;
  __global float* fx = force;
  __global float* fy = force + plane;
  __global float* fz = force + 2 * plane;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const float ex = wn[c + 1] - wn[c - 1], ey = wn[c + sy] - wn[c - sy], ez = wn[c + sz] - wn[c - sz];
    const float len = sqrt(ex * ex + ey * ey + ez * ez);
    const float scale = (type[c] == CELL_FLUID && len > 1e-12f) ? eps_h / len : 0.0f;
    const float nx = ex * scale, ny = ey * scale, nz = ez * scale;
    const float ox = wx[c], oy = wy[c], oz = wz[c];
    fx[c] = ny * oz - nz * oy;
    fy[c] = nz * ox - nx * oz;
    fz[c] = nx * oy - ny * ox;
  }
}

// Adds buoyancy, the body force and (with_confinement) the confinement force to every face the
// cell owns (its low faces), each the mean of the two cells it separates. q holds the density
// and temperature planes; `force` planes x, y, z.
__kernel void add_forces(P_CONST p, __global const float* q, __global const float* force,
                         int with_confinement, __global float* u, __global float* v, __global float* w) {
  const int sy = SY(p), sz = SZ(p), plane = p->stride[3];
  const float upx = p->up[0], upy = p->up[1], upz = p->up[2];
  const float bx = p->body_force[0], by = p->body_force[1], bz = p->body_force[2];
  const float lift = p->heat_lift, weight = p->smoke_weight, half_dt = 0.5f * p->dt;
  const int confine = with_confinement;
  __global const float* fx = force;
  __global const float* fy = force + plane;
  __global const float* fz = force + 2 * plane;
  __global const float* heat = q + plane;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    // Buoyancy per cell along up: this cell's and its lower neighbours' on each axis.
    const float lc = lift * heat[c] - weight * q[c];
    const float lx = lift * heat[c - 1] - weight * q[c - 1];
    const float ly = lift * heat[c - sy] - weight * q[c - sy];
    const float lz = lift * heat[c - sz] - weight * q[c - sz];
    const float cu = confine ? fx[c - 1] + fx[c] : 0.0f;
    const float cv = confine ? fy[c - sy] + fy[c] : 0.0f;
    const float cw = confine ? fz[c - sz] + fz[c] : 0.0f;
    u[c] += half_dt * (2.0f * bx + (lx + lc) * upx + cu);
    v[c] += half_dt * (2.0f * by + (ly + lc) * upy + cv);
    w[c] += half_dt * (2.0f * bz + (lz + lc) * upz + cw);
  }
}
