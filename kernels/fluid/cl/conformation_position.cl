// Conformation constraints, position level of the DC-PBD step (thesis 3.14-3.18); the
// constraint, its symbols and the helpers both levels share are in conformation.cl.

// ---- position level ----------------------------------------------------------------------------

// The position sweep's multipliers come from two passes: conf_pos_sums reduces i's
// neighbourhood to a few sums (one neighbour loop), conf_pos_solve turns them into the rotation,
// the constraint and dlambda, for 8 particles at a time in float8 lanes (the rotation
// iteration is long and serial per particle; PoCL does not vectorise it across work-items).
// With p_j = x_j - x_i, p0_j = x0_j - x0_i (i sits at p = 0) and g_j = V_j grad W_ij:
//   shape matching (3.14)  A = sum p p0^T - N c c0^T   (fluid neighbours)
//   constraint (3.16)      sum_j A(g_j) (p_j - R p0_j) = Voigt(M + M^T),  M = S - R T,
//                          S = sum p g^T, T = sum p0 g^T  (fluid neighbours and ghosts)
// so R is applied to the sums. Per-particle planes (`plane` floats each, a multiple of 8):
// sums (PSUM_PLANES), the rotation (x, y, z, w) and the multipliers (6). The first 24 sums are
// stored as three float8 rows per particle in the space of planes 0-23 (row 3 i + c / 8 holds
// sums c .. c + 7; the plane is at least n): one vector store each where the planes took one
// scalar store per sum, and conf_pos_solve transposes them in-lane. The rest are planes.
#define PSUM_A 0      // 9: A row-major (A_ab = sum p_a p0_b - N c_a c0_b)
#define PSUM_S 9      // 6: S in Voigt order (symmetric: g is parallel to p)
#define PSUM_T 15     // 9: T row-major (T_ab = sum p0_a g_b)
#define PSUM_ROWS 3   // float8 rows per particle: sums 0-23
#define PSUM_G2 24    // 3: sum g_x^2, g_y^2, g_z^2 (fluid)
#define PSUM_G 27     // 3: s_i = sum g (fluid and ghosts)
#define PSUM_COEF 30  // 1: beta / n_i of constraint i
#define PSUM_PP 31    // 6: sum p p^T in Voigt order (fluid; with P->torque_free): the inertia
#define PSUM_PLANES 37

// Lanes 0-5 of v to planes c .. c + 5 of particle i.
inline void store_planes6(__global float* sums, int plane, int i, int c, float8 v) {
  __global float* p = sums + c * plane + i;
  p[0] = v.s0;
  p[plane] = v.s1;
  p[2 * plane] = v.s2;
  p[3 * plane] = v.s3;
  p[4 * plane] = v.s4;
  p[5 * plane] = v.s5;
}

inline void conf_pos_sums_at(int i, int n, int plane, __global const float4* x,
                             __global const float4* x0, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const uint* gnbr, __global const uint* gcount,
                             __global const float4* xg, __global const float4* xg0,
                             __global const float* gvol, __global const float* density, P_CONST P,
                             __global float2* restrict pair, __global float* restrict sums) {
  if (flags[i] & FLAG_DEAD) {
    for (int r = 0; r < PSUM_ROWS; ++r) vstore8((float8)(0.0f), PSUM_ROWS * i + r, sums);
    for (int c = PSUM_G2; c < PSUM_PLANES; ++c) sums[c * plane + i] = 0.0f;
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 x0i = x0[i].xyz;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  // Eight neighbours per step, in 8-lane sums (padding is i itself: p = p0 = 0, and f = 0).
  float8 px = 0, py = 0, pz = 0, qx = 0, qy = 0, qz = 0;
  Outer8 A = {0}, T = {0};  // A = sum p p0^T, T = sum p0 g^T
  Voigt8 S = {0};           // S = sum p (x) g
  Voigt8 O = {0};           // sum p p^T (torque-free turns)
  float8 gxx = 0, gyy = 0, gzz = 0, sx = 0, sy = 0, sz = 0;
  const int padded = padded_count(cnt, P->max_neighbours);
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 ax, ay, az, bx, by, bz;
    offsets8(x, j, xi, &ax, &ay, &az);
    offsets8(x0, j, x0i, &bx, &by, &bz);
    // grad W_ij = f r_ij = -f p_j
    const float8 f = live8(k, cnt) * kernel_grad_factor8(ax * ax + ay * ay + az * az, P);
    const float8 vj = P->mass / fmax(gather8(density, j), 0.5f * P->rest_density);
    store_pair8(pair, i, k, n, P->max_neighbours, f, vj);
    const float8 w = -f * vj;
    const float8 gx = w * ax, gy = w * ay, gz = w * az;
    px += ax;
    py += ay;
    pz += az;
    qx += bx;
    qy += by;
    qz += bz;
    add_outer8(&A, ax, ay, az, bx, by, bz);
    add_upper8(&S, ax, ay, az, gx, gy, gz);
    add_outer8(&T, bx, by, bz, gx, gy, gz);
    if (P->torque_free) add_upper8(&O, ax, ay, az, ax, ay, az);
    gxx += gx * gx;
    gyy += gy * gy;
    gzz += gz * gz;
    sx += gx;
    sy += gy;
    sz += gz;
  }
  // The lane sums, eight planes per vector: r0 = A_00 .. A_21, r1 = A_22, S, T_00,
  // r2 = T_01 .. T_22, r3 = G2, s, then sum p_x, p_y; r4 = sum p_z, sum p0. (Summed one by one
  // and stored from a local array, the sums had taken a fifth of this kernel's instructions.)
  float8 r0 = hsum8x8(A.xx, A.xy, A.xz, A.yx, A.yy, A.yz, A.zx, A.zy);
  float8 r1 = hsum8x8(A.zz, S.xx, S.yy, S.zz, S.xy, S.xz, S.yz, T.xx);
  float8 r2 = hsum8x8(T.xy, T.xz, T.yx, T.yy, T.yz, T.zx, T.zy, T.zz);
  float8 r3 = hsum8x8(gxx, gyy, gzz, sx, sy, sz, px, py);
  const float8 zero = (float8)(0.0f);
  const float8 r4 = hsum8x8(pz, qx, qy, qz, zero, zero, zero, zero);
  // Hand ghosts (viscous coupling only) enter S, T and s like fluid neighbours that take no
  // correction: p = x_g - x_i, p0 = x0_g - x0_i with x0_g the ghost's coupled start. Eight list
  // entries per step as above (the list is not padded: entries past the count weigh 0); one
  // entry per step ran scalar, its square roots and divisions in series (11 % of this kernel
  // with the no-slip hand at 5,000 particles).
  const int gc = P->ghost_viscosity ? (int)min(gcount[i], (uint)P->max_ghost_neighbours) : 0;
  if (gc > 0) {
    Voigt8 H = {0};  // the ghosts' S
    Outer8 U = {0};  // and T
    float8 ux = 0, uy = 0, uz = 0;
    for (int k = 0; k < gc; k += NBR_PAD) {
      const uint8 g = nbr8_unpadded(gnbr, i, k, gc, n, P->max_ghost_neighbours);
      float8 ex, ey, ez, ox, oy, oz;
      rows8(xg, g, &ex, &ey, &ez);
      rows8(xg0, g, &ox, &oy, &oz);
      // The ghost's step this substep, capped at half a kernel radius.
      const float8 dx = ex - ox, dy = ey - oy, dz = ez - oz;
      const float8 cap = coupled_ghost_cap8(dx, dy, dz, P);
      const float8 ax = ex - xi.x, ay = ey - xi.y, az = ez - xi.z;
      const float8 bx = ex - dx * cap - x0i.x, by = ey - dy * cap - x0i.y, bz = ez - dz * cap - x0i.z;
      // g = V_g grad W(x_i - x_g) = -V_g f p
      const float8 w = -(live8(k, gc) * gather8(gvol, g) *
                         kernel_grad_factor8(ax * ax + ay * ay + az * az, P));
      const float8 gx = w * ax, gy = w * ay, gz = w * az;
      add_upper8(&H, ax, ay, az, gx, gy, gz);
      add_outer8(&U, bx, by, bz, gx, gy, gz);
      ux += gx;
      uy += gy;
      uz += gz;
    }
    r1 += hsum8x8(zero, H.xx, H.yy, H.zz, H.xy, H.xz, H.yz, U.xx);
    r2 += hsum8x8(U.xy, U.xz, U.yx, U.yy, U.yz, U.zx, U.zy, U.zz);
    r3 += (float8)(0.0f, 0.0f, 0.0f, hsum8(ux), hsum8(uy), hsum8(uz), 0.0f, 0.0f);
  }
  // A about the centroid: sum p p0^T - (sum p)(sum p0)^T / N.
  const float inv = 1.0f / (float)(cnt + 1);
  const float cpx = r3.s6, cpy = r3.s7, cpz = r4.s0, cqx = r4.s1, cqy = r4.s2, cqz = r4.s3;
  r0 -= (float8)(cpx, cpx, cpx, cpy, cpy, cpy, cpz, cpz) *
        (float8)(cqx, cqy, cqz, cqx, cqy, cqz, cqx, cqy) * inv;
  r1.s0 -= cpz * cqz * inv;
  vstore8(r0, PSUM_ROWS * i, sums);
  vstore8(r1, PSUM_ROWS * i + 1, sums);
  vstore8(r2, PSUM_ROWS * i + 2, sums);
  store_planes6(sums, plane, i, PSUM_G2, r3);
  sums[PSUM_COEF * plane + i] = relaxation(cnt, P);
  if (P->torque_free)
    store_planes6(sums, plane, i, PSUM_PP, hsum8x8(O.xx, O.yy, O.zz, O.xy, O.xz, O.yz, zero, zero));
}

// The kernel conf_pos_sums itself is in hand.cl: its launch also carries the ghosts' reaction to
// the density sweep before it (defined there).

// One step of the rotation extraction of Mueller et al. 2016 on the unit quaternion q (float8
// lanes): omega = sum_c r_c x a_c / |sum_c r_c . a_c| over the columns r_c of R(q) and a_c of A;
// the rotation changes little between sweeps, so the step uses the small-angle quaternion
// (omega / 2, 1) and renormalises. A's entries come as named values (aRC = A_RC), not an array:
// PoCL kept an array of them in memory.
inline void rotation_step(float8* qx, float8* qy, float8* qz, float8* qw, float8 a00, float8 a01,
                          float8 a02, float8 a10, float8 a11, float8 a12, float8 a20, float8 a21,
                          float8 a22) {
  const float8 x = *qx, y = *qy, z = *qz, w = *qw;
  const float8 r00 = 1.0f - 2.0f * (y * y + z * z), r01 = 2.0f * (x * y - w * z);
  const float8 r02 = 2.0f * (x * z + w * y), r10 = 2.0f * (x * y + w * z);
  const float8 r11 = 1.0f - 2.0f * (x * x + z * z), r12 = 2.0f * (y * z - w * x);
  const float8 r20 = 2.0f * (x * z - w * y), r21 = 2.0f * (y * z + w * x);
  const float8 r22 = 1.0f - 2.0f * (x * x + y * y);
  const float8 ox = (r10 * a20 - r20 * a10) + (r11 * a21 - r21 * a11) + (r12 * a22 - r22 * a12);
  const float8 oy = (r20 * a00 - r00 * a20) + (r21 * a01 - r01 * a21) + (r22 * a02 - r02 * a22);
  const float8 oz = (r00 * a10 - r10 * a00) + (r01 * a11 - r11 * a01) + (r02 * a12 - r12 * a02);
  const float8 d = r00 * a00 + r10 * a10 + r20 * a20 + r01 * a01 + r11 * a11 + r21 * a21 +
                   r02 * a02 + r12 * a12 + r22 * a22;
  const float8 h = 0.5f / (fabs(d) + 1e-20f);
  const float8 hx = h * ox, hy = h * oy, hz = h * oz;
  // q = (omega / 2, 1) q
  const float8 nx = x + w * hx + (hy * z - hz * y);
  const float8 ny = y + w * hy + (hz * x - hx * z);
  const float8 nz = z + w * hz + (hx * y - hy * x);
  const float8 nw = w - (hx * x + hy * y + hz * z);
  const float8 norm = rsqrt(nx * nx + ny * ny + nz * nz + nw * nw);
  *qx = nx * norm;
  *qy = ny * norm;
  *qz = nz * norm;
  *qw = nw * norm;
}

// The turns of the eight constraints of a conf_pos_solve work-item (conformation.cl,
// torque-free corrections), stored one float4 per particle for conf_pos_apply.
inline void torque_free_turn(int w, int i0, int n, int plane, float8 live,
                             __global const float* sums, float8 o0, float8 o1, float8 o2, float8 o3,
                             float8 o4, float8 o5, Voigt8 S, __global float4* restrict turn) {
#define SUM(c) (live * vload8(w, sums + (c) * plane))
  Voigt8 inv;
  inverse_inertia8(SUM(PSUM_PP), SUM(PSUM_PP + 1), SUM(PSUM_PP + 2), SUM(PSUM_PP + 3),
                   SUM(PSUM_PP + 4), SUM(PSUM_PP + 5), &inv);
#undef SUM
  float8 w0, w1, w2;
  turn_of_step8(S, inv, o0, o1, o2, o3, o4, o5, &w0, &w1, &w2);
  // Dead lanes (live 0: I^-1 is 0 / 0) take no turn.
  w0 = select((float8)(0.0f), w0, live != 0.0f);
  w1 = select((float8)(0.0f), w1, live != 0.0f);
  w2 = select((float8)(0.0f), w2, live != 0.0f);
  float8 w3 = (float8)(0.0f), w4 = w3, w5 = w3, w6 = w3, w7 = w3;
  transpose8x8(&w0, &w1, &w2, &w3, &w4, &w5, &w6, &w7);
  if (i0 + 0 < n) turn[i0 + 0] = w0.lo;
  if (i0 + 1 < n) turn[i0 + 1] = w1.lo;
  if (i0 + 2 < n) turn[i0 + 2] = w2.lo;
  if (i0 + 3 < n) turn[i0 + 3] = w3.lo;
  if (i0 + 4 < n) turn[i0 + 4] = w4.lo;
  if (i0 + 5 < n) turn[i0 + 5] = w5.lo;
  if (i0 + 6 < n) turn[i0 + 6] = w6.lo;
  if (i0 + 7 < n) turn[i0 + 7] = w7.lo;
}

// Clay's plastic yield (ours; the thesis gives the clay no yield, see config/materials/clay.toml):
// the strain-rate viscosity holds the substep's deformation with a stress that grows with the
// multipliers accumulated over the sweeps, sigma ~ rho0 (beta / n_i) lambda / dt^2 (nominal: the
// kernel sums' geometric factors are left out). Where the deviatoric part of that stress would
// pass the yield stress, it keeps the yield plus a share of the excess (`clay.plastic_fraction`,
// 0.1 in the preset) and the rest of the deformation goes through: a Bingham plastic, whose
// stress past the yield still grows with the rate of deformation. Rigid - perfectly plastic (the
// excess dropped) let a surface particle of a block landing on clay_test's incline flow out
// alone, nothing resisting its shear, and leave the block: 5 of 25 drop heights 0.08-0.20 m
// spattered one. Stopping a 6 cm block landing at 1 m/s inside one substep asks about
// rho0 L v / dt = 40 kPa, its weight at rest rho0 g L = 1 kPa. The volumetric part is left alone
// (pressure does not make clay yield; the density constraint carries it). The cap scales the
// multipliers only: the corrections keep their zero-sum Jacobian rows (momentum).
inline void yield_clay_viscosity(float8 coef, float8 l0, float8 l1, float8 l2, float8 l3, float8 l4,
                                 float8 l5, float8* dl0, float8* dl1, float8* dl2, float8* dl3,
                                 float8* dl4, float8* dl5, P_CONST P) {
  const float8 t0 = l0 + *dl0, t1 = l1 + *dl1, t2 = l2 + *dl2;
  const float8 t3 = l3 + *dl3, t4 = l4 + *dl4, t5 = l5 + *dl5;
  const float8 mean = (t0 + t1 + t2) * (1.0f / 3.0f);
  const float8 e0 = t0 - mean, e1 = t1 - mean, e2 = t2 - mean;
  const float8 dev = sqrt(e0 * e0 + e1 * e1 + e2 * e2 + 2.0f * (t3 * t3 + t4 * t4 + t5 * t5));
  const float8 cap = P->clay_yield / fmax(coef, 1e-12f);  // unused lanes (coef 0): no cap
  const int8 over = dev > cap;
  const float8 s = (cap + P->clay_plastic_fraction * (dev - cap)) / fmax(dev, 1e-30f);
  *dl0 = select(*dl0, mean + s * e0 - l0, over);
  *dl1 = select(*dl1, mean + s * e1 - l1, over);
  *dl2 = select(*dl2, mean + s * e2 - l2, over);
  *dl3 = select(*dl3, s * t3 - l3, over);
  *dl4 = select(*dl4, s * t4 - l4, over);
  *dl5 = select(*dl5, s * t5 - l5, over);
}

// Best-fit rotation R_i (3.14), warm-started from the last sweep's (3 steps of the iteration
// above), then the constraint and the multiplier step (3.17), stored scaled by the constraint's
// beta / n_i; work-item w solves particles 8w .. 8w + 7 (lanes past n compute on stale sums and
// write only padding slots; their rows are read at slot n - 1). Every value is a named float8,
// no arrays, and the lanes are set up without branches: PoCL kept the arrays in memory and
// branched per lane.
__kernel void conf_pos_solve(int n, int plane, __global const uint* flags,
                             __global const float* sums, __global const float8* conf, P_CONST P,
                             __global float* restrict rot, __global float* restrict lambda,
                             __global float8* restrict dlambda, __global float4* restrict pconst,
                             __global float4* restrict turn) {
  const int w = get_global_id(0);
  const int i0 = 8 * w;
  if (i0 >= n) return;
  const int8 slot = min((int8)(0, 1, 2, 3, 4, 5, 6, 7) + i0, (int8)(n - 1));
  const uint8 fl = (uint8)(flags[slot.s0], flags[slot.s1], flags[slot.s2], flags[slot.s3],
                           flags[slot.s4], flags[slot.s5], flags[slot.s6], flags[slot.s7]);
  const float8 live = select((float8)(0.0f), (float8)(1.0f),
                             ((int8)(0, 1, 2, 3, 4, 5, 6, 7) < n - i0) & ((fl & FLAG_DEAD) == 0u));
#define SUM(c) (live * vload8(w, sums + (c) * plane))
  // Sums 0-23 from the eight particles' rows, transposed (row r of particle l to lane l).
#define ROW(l, r) vload8(PSUM_ROWS * slot.s##l + (r), sums)
  float8 a00 = ROW(0, 0), a01 = ROW(1, 0), a02 = ROW(2, 0), a10 = ROW(3, 0);
  float8 a11 = ROW(4, 0), a12 = ROW(5, 0), a20 = ROW(6, 0), a21 = ROW(7, 0);
  transpose8x8(&a00, &a01, &a02, &a10, &a11, &a12, &a20, &a21);
  float8 a22 = ROW(0, 1), sxx = ROW(1, 1), syy = ROW(2, 1), szz = ROW(3, 1);
  float8 sxy = ROW(4, 1), sxz = ROW(5, 1), syz = ROW(6, 1), t00 = ROW(7, 1);
  transpose8x8(&a22, &sxx, &syy, &szz, &sxy, &sxz, &syz, &t00);
  float8 t01 = ROW(0, 2), t02 = ROW(1, 2), t10 = ROW(2, 2), t11 = ROW(3, 2);
  float8 t12 = ROW(4, 2), t20 = ROW(5, 2), t21 = ROW(6, 2), t22 = ROW(7, 2);
  transpose8x8(&t01, &t02, &t10, &t11, &t12, &t20, &t21, &t22);
#undef ROW
  a00 *= live; a01 *= live; a02 *= live; a10 *= live; a11 *= live; a12 *= live;
  a20 *= live; a21 *= live; a22 *= live;
  float8 qx = (float8)(0.0f), qy = (float8)(0.0f), qz = (float8)(0.0f), qw = (float8)(1.0f);
  if (P->corotation) {
    qx = vload8(w, rot);
    qy = vload8(w, rot + plane);
    qz = vload8(w, rot + 2 * plane);
    qw = vload8(w, rot + 3 * plane);
    for (int step = 0; step < 3; ++step)
      rotation_step(&qx, &qy, &qz, &qw, a00, a01, a02, a10, a11, a12, a20, a21, a22);
    vstore8(qx, w, rot);
    vstore8(qy, w, rot + plane);
    vstore8(qz, w, rot + 2 * plane);
    vstore8(qw, w, rot + 3 * plane);
  }
  const float8 r00 = 1.0f - 2.0f * (qy * qy + qz * qz), r01 = 2.0f * (qx * qy - qw * qz);
  const float8 r02 = 2.0f * (qx * qz + qw * qy), r10 = 2.0f * (qx * qy + qw * qz);
  const float8 r11 = 1.0f - 2.0f * (qx * qx + qz * qz), r12 = 2.0f * (qy * qz - qw * qx);
  const float8 r20 = 2.0f * (qx * qz - qw * qy), r21 = 2.0f * (qy * qz + qw * qx);
  const float8 r22 = 1.0f - 2.0f * (qx * qx + qy * qy);
  t00 *= live; t01 *= live; t02 *= live; t10 *= live; t11 *= live; t12 *= live;
  t20 *= live; t21 *= live; t22 *= live;
  // M = S - R T, (R T)_ab = sum_c R_ac T_cb; c = Voigt(M + M^T)
  const float8 rt00 = r00 * t00 + r01 * t10 + r02 * t20, rt01 = r00 * t01 + r01 * t11 + r02 * t21;
  const float8 rt02 = r00 * t02 + r01 * t12 + r02 * t22, rt10 = r10 * t00 + r11 * t10 + r12 * t20;
  const float8 rt11 = r10 * t01 + r11 * t11 + r12 * t21, rt12 = r10 * t02 + r11 * t12 + r12 * t22;
  const float8 rt20 = r20 * t00 + r21 * t10 + r22 * t20, rt21 = r20 * t01 + r21 * t11 + r22 * t21;
  const float8 rt22 = r20 * t02 + r21 * t12 + r22 * t22;
  const float8 c0 = 2.0f * (live * sxx - rt00);
  const float8 c1 = 2.0f * (live * syy - rt11);
  const float8 c2 = 2.0f * (live * szz - rt22);
  const float8 c3 = 2.0f * (live * sxy) - rt01 - rt10;
  const float8 c4 = 2.0f * (live * sxz) - rt02 - rt20;
  const float8 c5 = 2.0f * (live * syz) - rt12 - rt21;
  // diag(J J^T) = diag of the fluid rows + voigt_sym_diag(s)
  const float8 gx = SUM(PSUM_G), gy = SUM(PSUM_G + 1), gz = SUM(PSUM_G + 2);
  const float8 hxx = SUM(PSUM_G2) + gx * gx, hyy = SUM(PSUM_G2 + 1) + gy * gy;
  const float8 hzz = SUM(PSUM_G2 + 2) + gz * gz;
  const float8 d0 = 4.0f * hxx, d1 = 4.0f * hyy, d2 = 4.0f * hzz;
  const float8 d3 = hxx + hyy, d4 = hxx + hzz, d5 = hyy + hzz;
  const float8 coef = SUM(PSUM_COEF);  // 0 in unused lanes
#undef SUM
  // Q0 - I, component by component: the eight particles' rows transposed.
  float8 q0 = conf[slot.s0], q1 = conf[slot.s1], q2 = conf[slot.s2], q3 = conf[slot.s3];
  float8 q4 = conf[slot.s4], q5 = conf[slot.s5], q6 = conf[slot.s6], q7 = conf[slot.s7];
  transpose8x8(&q0, &q1, &q2, &q3, &q4, &q5, &q6, &q7);
  const float at = P->alpha * P->inv_dt * P->inv_dt;
  // dlambda_k = (-C_k - at lambda_k) / (diag_k + at), C = q0 - I + c; a dead particle gets 0.
#define STEP(k, qk, ck, dk)                                                          \
  const float8 l##k = vload8(w, lambda + (k) * plane);                               \
  float8 dl##k = live * (-(qk + ck) - at * l##k) / (dk + at + 1e-12f);
  STEP(0, (q0 - 1.0f), c0, d0)
  STEP(1, (q1 - 1.0f), c1, d1)
  STEP(2, (q2 - 1.0f), c2, d2)
  STEP(3, q3, c3, d3)
  STEP(4, q4, c4, d4)
  STEP(5, q5, c5, d5)
#undef STEP
  if (P->clay_yield > 0.0f) yield_clay_viscosity(coef, l0, l1, l2, l3, l4, l5, &dl0, &dl1, &dl2,
                                                 &dl3, &dl4, &dl5, P);
  vstore8(l0 + dl0, w, lambda);
  vstore8(l1 + dl1, w, lambda + plane);
  vstore8(l2 + dl2, w, lambda + 2 * plane);
  vstore8(l3 + dl3, w, lambda + 3 * plane);
  vstore8(l4 + dl4, w, lambda + 4 * plane);
  vstore8(l5 + dl5, w, lambda + 5 * plane);
  // Back to one float8 ((beta / n_i) dlambda) and one float4 (s_i) per particle: the same
  // transpose, with zero rows for the unused lanes.
  float8 o0 = coef * dl0, o1 = coef * dl1, o2 = coef * dl2, o3 = coef * dl3, o4 = coef * dl4;
  float8 o5 = coef * dl5, o6 = (float8)(0.0f), o7 = (float8)(0.0f);
  if (P->torque_free)
    torque_free_turn(w, i0, n, plane, live, sums, o0, o1, o2, o3, o4, o5,
                     (Voigt8){sxx, syy, szz, sxy, sxz, syz}, turn);
  transpose8x8(&o0, &o1, &o2, &o3, &o4, &o5, &o6, &o7);
  float8 s0 = gx, s1 = gy, s2 = gz, s3 = (float8)(0.0f), s4 = s3, s5 = s3, s6 = s3, s7 = s3;
  transpose8x8(&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s7);
#define STORE_LANE(l)              \
  if (i0 + l < n) {                \
    dlambda[i0 + l] = o##l;        \
    pconst[i0 + l] = s##l.lo;      \
  }
  STORE_LANE(0)
  STORE_LANE(1)
  STORE_LANE(2)
  STORE_LANE(3)
  STORE_LANE(4)
  STORE_LANE(5)
  STORE_LANE(6)
  STORE_LANE(7)
#undef STORE_LANE
}

// x_i += sum_j (beta / n_j) J~_ji^T dl_j (3.18), dl already scaled (conformation_correction),
// with the pair terms of conf_pos_sums (same positions). Then the walls and their friction.
inline void conf_pos_apply_at(int i, int n, __global const float4* x, __global float4* x_out,
                              __global const uint* flags, __global const uint* nbr,
                              __global const uint* ncount, __global const float2* pair,
                              __global const float4* pconst, __global const float* density,
                              __global const float8* dlambda, P_CONST P,
                              __global WallContact* contact, __global const float4* anchor,
                              __global const float4* x0, __global const float4* turn) {
  if (flags[i] & FLAG_DEAD) {
    x_out[i] = x[i];
    return;
  }
  const float3 s_i = pconst[i].xyz;
  float3 p = x[i].xyz + conformation_correction(i, n, x, nbr, ncount, pair, s_i, density, dlambda,
                                                P->torque_free ? turn : 0, P);
  p = walls_and_friction(i, p, contact[i], contact, flags, anchor, x0, P);
  x_out[i] = (float4)(p, 0.0f);
}

// Reaction of the conformation constraints on the ghosts: ghost g's share of the momentum of
// constraint i, m V_g A(grad W_ig)^T dl_i with dl_i already scaled by the constraint's
// relaxation, times `scale` (1/dt for a position sweep, 1 for the velocity phase). Exactly minus
// what constraint i gives its fluid particles (its Jacobian rows sum to zero).
inline void ghost_conf_reaction_at(int g, int ng, __global const float4* xg,
                                   __global const uint* gflags, __global const uint* fnbr,
                                   __global const uint* fcount, __global const float4* x,
                                   __global const float* gvol, __global const float8* dlambda,
                                   float scale, P_CONST P, __global float4* gimpulse) {
  if (gflags[g] & FLAG_DEAD) return;
  // Eight fluid particles per step in 8-lane sums (common.cl); entries past the count weigh 0.
  const float3 xgg = xg[g].xyz;
  float8 dx = 0.0f, dy = 0.0f, dz = 0.0f;
  const int cnt = (int)min(fcount[g], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 i = nbr8_unpadded(fnbr, g, k, cnt, ng, P->max_neighbours);
    float8 rx, ry, rz, ax, ay, az;
    offsets8(x, i, xgg, &rx, &ry, &rz);  // r = x_i - x_g
    const float8 f = live8(k, cnt) * kernel_grad_factor8(rx * rx + ry * ry + rz * rz, P);
    voigt_sym_t8(f * rx, f * ry, f * rz, dlambda, i, &ax, &ay, &az);
    dx += ax;
    dy += ay;
    dz += az;
  }
  const float3 d = (float3)(hsum8(dx), hsum8(dy), hsum8(dz));
  gimpulse[g] += (float4)(P->mass * scale * gvol[g] * d, 0.0f);
}

__kernel void ghost_conf_reaction(int ng, __global const float4* xg, __global const uint* gflags,
                                  __global const uint* fnbr, __global const uint* fcount,
                                  __global const float4* x, __global const float* gvol,
                                  __global const float8* dlambda, float scale, P_CONST P,
                                  __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  ghost_conf_reaction_at(g, ng, xg, gflags, fnbr, fcount, x, gvol, dlambda, scale, P, gimpulse);
}

// A position sweep's apply and, with the no-slip hand, the ghosts' reaction to it in one launch:
// both only read the multipliers conf_pos_solve wrote and the positions the sweep started from,
// so they need no barrier between them (a launch less per sweep; on the CPU every launch is a
// barrier that waits for its slowest work-group). Items [0, fluid_items) are the particles
// (fluid_items is n rounded up to the work-group size, so no work-group mixes the two), the
// next ng the ghosts (ng = 0: no reaction).
__kernel void conf_pos_apply(int n, int fluid_items, __global const float4* x,
                             __global float4* x_out, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const float2* pair, __global const float4* pconst,
                             __global const float* density, __global const float8* dlambda,
                             P_CONST P, __global WallContact* contact,
                             __global const float4* anchor, __global const float4* x0,
                             int ng, __global const float4* xg, __global const uint* gflags,
                             __global const uint* fnbr, __global const uint* fcount,
                             __global const float* gvol, float scale,
                             __global float4* gimpulse, __global const float4* turn){
  const int k = get_global_id(0);
  if (k < fluid_items) {
    if (k < n)
      conf_pos_apply_at(k, n, x, x_out, flags, nbr, ncount, pair, pconst, density, dlambda, P,
                        contact, anchor, x0, turn);
  } else if (k - fluid_items < ng) {
    ghost_conf_reaction_at(k - fluid_items, ng, xg, gflags, fnbr, fcount, x, gvol, dlambda, scale,
                           P, gimpulse);
  }
}
