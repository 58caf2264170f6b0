// Position Based Fluids density constraint (Macklin & Mueller 2013), one Jacobi sweep =
// pbf_lambda then pbf_apply. Written with volumes so the numbers do not depend on the scale:
//
//   C_i = V0 sum_j W_ij + sum_g V_g W_ig + sum_w psi(d_w) - 1
//         (fluid j incl. i itself, hand ghosts g, walls w at distance d_w)
//   lambda_i = -C_i / (|grad_i C_i|^2 + sum_j |grad_j C_i|^2 + epsilon)
//   dx_i = V0 sum_j (lambda_i + lambda_j + s_corr_ij) grad W_ij
//          + lambda_i (sum_g V_g grad W_ig + sum_w grad psi(d_w))
//
// with C clamped at 0 (the constraint only pushes apart, so the free surface does not clump)
// and s_corr = -k (W(r) / W(dq))^4 the tensile correction, less the cohesion that balances it
// at a free surface when pbf.cohesion > 0 (cohesion8). The lambdas of the iterations of a
// substep sum to the pressure p = -rho0 sum(kappa lambda) / dt^2 (see pbf_lambda).
// Particles of different mass (media: liquids of different density, frozen solids) move in
// proportion to their inverse-mass weight w = rho_ref / rho0 (0 for a solid, which keeps no
// constraint of its own): |grad_k C_i|^2 terms and dx_i are weighted by w, the relaxation by
// the particle's compliance scale (media_weight = (w, scale); (1, 1) without media).
// pbf_lambda leaves the pair terms (V0 f_ij, k (W_ij / W(dq))^4), grad W_ij = f_ij (x_i - x_j),
// in `pair` for pbf_apply, which runs at the same positions and so evaluates no kernel.

// Cohesion between first-shell neighbours (pbf.cohesion > 0), as a share of the pair's s_corr
// term so pbf_apply runs unchanged: dx_i = -c C(r) (x_i - x_j) / r, i.e. s += c C(r) / (r V0 f) (f < 0).
// C is Akinci, Akinci & Teschner 2013's cohesion spline (1 - q)^3 q^3, centred on the rest
// spacing d (q = (r - r0) / (r1 - r0) over [(2 - sqrt 2) d, sqrt 2 d]): it pulls hardest at d
// and vanishes at the second neighbours' sqrt 2 d, so s_corr and it cancel pair by pair on the
// lattice at rest, at any surface (flat, edge, corner) and with no stress left inside. Its
// strength c cancels s_corr's outward push on the top layer of a flat lattice at rest
// (fluid_params.cpp, balancing_cohesion). Macklin's two-sided constraint held the surface with
// the under-dense layer's pull; ours is one-sided, so without this a free body swells.
inline float8 cohesion8(float8 r2, float8 f, P_CONST P) {
  const float8 len = sqrt(fmax(r2, 1e-24f));
  const float8 q = clamp((len - P->cohesion_r0) * P->cohesion_inv_width, 0.0f, 1.0f);
  const float8 a = (1.0f - q) * q;
  return select((float8)(0.0f), P->cohesion * a * a * a / (len * f), f != 0.0f);
}

// Adds the cohesion to the pair terms pbf_lambda stored for particle i (padding has f = 0): a
// loop of its own, so pbf_lambda's costs nothing more without it.
inline void add_cohesion(int i, float3 xi, __global const float4* x, __global const uint* nbr,
                         __global float2* pair, int padded, int n, P_CONST P) {
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 px, py, pz;
    offsets8(x, j, xi, &px, &py, &pz);
    float8 f, s;
    load_pair8(pair, i, k, n, P->max_neighbours, &f, &s);
    store_pair8(pair, i, k, n, P->max_neighbours, f, s + cohesion8(px * px + py * py + pz * pz, f, P));
  }
}

__kernel void pbf_lambda(int n, __global const float4* x, __global const uint* flags,
                         __global const uint* nbr, __global const uint* ncount,
                         __global const uint* gnbr, __global const uint* gcount,
                         __global const float4* xg, __global const float* gvol, P_CONST P,
                         __global float* restrict density, __global float* restrict lambda,
                         __global float* restrict lambda_sum, __global const float2* weight,
                         __global float2* restrict pair, int weighted) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    lambda[i] = 0.0f;
    return;
  }
  const float3 xi = x[i].xyz;
  const float v0 = P->rest_volume;
  // Eight neighbours per step in 8-lane sums (common.cl nbr8/offsets8); padding weighs 0.
  const float sk = P->scorr_k, sq = P->scorr_inv_wdq;
  float8 sw = 0.0f, gx8 = 0.0f, gy8 = 0.0f, gz8 = 0.0f, g2 = 0.0f, kap = 0.0f;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  const int padded = padded_count(cnt, P->max_neighbours);
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 px, py, pz;  // p = x_j - x_i = -r_ij
    offsets8(x, j, xi, &px, &py, &pz);
    const float8 r2 = px * px + py * py + pz * pz;
    const float8 live = live8(k, cnt);
    const float8 w = live * kernel_w8(r2, P);
    sw += w;
    const float8 f = live * v0 * kernel_grad_factor8(r2, P);
    // s_corr = -k (W / W(dq))^4
    const float8 ws = w * sq;
    const float8 ws2 = ws * ws;
    store_pair8(pair, i, k, n, P->max_neighbours, f, sk * ws2 * ws2);
    gx8 -= f * px;  // grad_i W_ij = f r_ij
    gy8 -= f * py;
    gz8 -= f * pz;
    g2 += f * f * r2;
    kap -= f * r2;
  }
  if (P->cohesion > 0.0f) add_cohesion(i, xi, x, nbr, pair, padded, n, P);
  const float sum_w = P->w_zero + hsum8(sw);
  float sum_grad2 = hsum8(g2), kappa = hsum8(kap);
  __global const float* xs = (__global const float*)x;
  if (weighted) {  // media: neighbours of other mass; a separate loop keeps the one above lean
    for (int k = 0; k < cnt; ++k) {
      const uint j = NBR(nbr, i, k, n, P->max_neighbours);
      const float rx = xi.x - xs[4 * j], ry = xi.y - xs[4 * j + 1], rz = xi.z - xs[4 * j + 2];
      const float r2 = rx * rx + ry * ry + rz * rz;
      const float f = v0 * kernel_grad_factor(r2, P);
      sum_grad2 += (weight[j].x - 1.0f) * f * f * r2;
    }
  }
  float3 grad_i = (float3)(hsum8(gx8), hsum8(gy8), hsum8(gz8));
  float volume = v0 * sum_w;
  wall_volume(xi, P, &volume, &grad_i);
  const int gc = P->density_coupling ? (int)min(gcount[i], (uint)P->max_ghost_neighbours) : 0;
  if (gc > 0) {
    // The hand's ghosts, eight list entries per step (entries past the count weigh 0): one
    // entry per step ran scalar, its square root and division in series.
    float8 gw = 0.0f, hx = 0.0f, hy = 0.0f, hz = 0.0f;
    for (int k = 0; k < gc; k += NBR_PAD) {
      const uint8 g = nbr8_unpadded(gnbr, i, k, gc, n, P->max_ghost_neighbours);
      float8 px, py, pz;  // p = x_g - x_i = -r
      offsets8(xg, g, xi, &px, &py, &pz);
      const float8 r2 = px * px + py * py + pz * pz;
      const float8 v = live8(k, gc) * gather8(gvol, g);
      gw += v * kernel_w8(r2, P);
      const float8 f = v * kernel_grad_factor8(r2, P);
      hx -= f * px;
      hy -= f * py;
      hz -= f * pz;
    }
    volume += hsum8(gw);
    grad_i += (float3)(hsum8(hx), hsum8(hy), hsum8(hz));
  }
  density[i] = volume * P->rest_density;
  const float2 wi = weight[i];
  const float c = wi.x > 0.0f ? fmax(volume - 1.0f, 0.0f) : 0.0f;
  const float l = -c / (wi.x * dot(grad_i, grad_i) + sum_grad2 + wi.y * P->epsilon);
  lambda[i] = l;
  // Pressure bookkeeping: the sweep moves particles by kappa grad(lambda), kappa = the share
  // of a linear field's gradient this neighbourhood recovers, so p = -rho0 sum(kappa lambda)/dt^2.
  lambda_sum[i] += l * kappa * (1.0f / 3.0f);
}

// Signed distance from p to the union of the hands' capsules (cap_pose: a.xyz radius, b.xyz per
// capsule) and its gradient, the outward normal, in *nrm (`fallback` where p is on an axis).
// Only the capsules in `mask` (bit c: capsule c) are tried, in index order (pbf_apply: the listed
// ghosts' candidates); with every capsule that can count among them (the nearest; for k > 0
// those within ~1.25 k of it: HandGhosts::capsule_mask's margin) the result is the full scan's. k > 0 (hand.capsule_blend): the smooth union, the polynomial smooth minimum
// smin(a, b) = min(a, b) - k/4 max(1 - |a - b| / k, 0)^2 folded in index order, its gradient the
// same blend of the capsules' gradients (w = clamp(1/2 + (b - a) / 2k, 0, 1) on a's): it fills
// the creases between neighbouring capsules (flesh), equal to the exact union wherever the
// second-nearest capsule is k farther.
inline float hand_surface(float3 p, ulong mask, __global const float4* cap_pose, float k,
                          float3 fallback, float3* nrm) {
  float best = INFINITY;
  float3 r_best = (float3)(0.0f);
  float3 grad = (float3)(0.0f);  // k > 0: the blended gradient
  const float inv_k = k > 0.0f ? 1.0f / k : 0.0f;
  while (mask != 0) {
    const int c = (int)(63 - clz(mask & (~mask + 1)));  // the lowest set bit
    mask &= mask - 1;
    const float4 a = cap_pose[2 * c];
    const float3 ab = cap_pose[2 * c + 1].xyz - a.xyz;
    const float3 pa = p - a.xyz;
    const float l2 = dot(ab, ab);
    const float t = l2 > 1e-12f ? clamp(dot(pa, ab) / l2, 0.0f, 1.0f) : 0.0f;
    const float3 r = pa - t * ab;
    const float r2 = dot(r, r);
    const float beat = best + k + a.w;  // |r| must be under this to count: no root otherwise
    if (beat > 0.0f && r2 >= beat * beat) continue;
    const float rl = sqrt(r2);
    const float d = rl - a.w;
    if (k > 0.0f) {
      const float3 g = rl > 1e-7f ? r / rl : fallback;
      const float w = clamp(0.5f + 0.5f * (best - d) * inv_k, 0.0f, 1.0f);  // the new capsule's
      const float m = max(1.0f - fabs(best - d) * inv_k, 0.0f);
      grad = mix(grad, g, w);
      best = min(best, d) - 0.25f * k * m * m;
    } else if (d < best) {
      best = d;
      r_best = r;
    }
  }
  if (k > 0.0f) {
    const float gl = length(grad);
    *nrm = gl > 1e-7f ? grad / gl : fallback;
    return best;
  }
  const float rl = length(r_best);
  *nrm = rl > 1e-7f ? r_best / rl : fallback;
  return best;
}

// Applies the density correction, then the one-sided contact with the nearest hand ghost
// (|x - g| >= R, or (x - g) . n_g >= R with hand.closed_contact; with Coulomb friction against
// the ghost's motion) and the walls. Writes the
// new positions to x_out (Jacobi). The displacement the contact caused, and which ghost caused
// it, go to ghost_contact for the hand's reaction.
__kernel void pbf_apply(int n, __global const float4* x, __global float4* x_out,
                        __global const uint* flags, __global const uint* nbr,
                        __global const uint* ncount, __global const uint* gnbr,
                        __global const uint* gcount, __global const float4* xg,
                        __global const float4* gnormal, __global const float* gvol,
                        __global const float* lambda, __global const float2* pair,
                        P_CONST P, __global WallContact* contact, __global float4* ghost_contact,
                        __global const float4* anchor, __global const float4* x0,
                        __global const float2* weight, __global const float4* xg0,
                        int inelastic, __global float4* hand_push, int nc,
                        __global const float4* cap_pose, int hand_ng,
                        __global const ulong* gcaps, float capsule_blend) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float wi = weight[i].x;
  if ((flags[i] & FLAG_DEAD) || wi == 0.0f) {  // dead, or a solid: stays where it is
    x_out[i] = x[i];
    ghost_contact[i] = (float4)(0.0f, 0.0f, 0.0f, as_float(INVALID_INDEX));
    return;
  }
  const float3 xi = x[i].xyz;
  const float li = lambda[i];
  // dx_i = sum_j (lambda_i + lambda_j + s_corr_ij) V0 f_ij (x_i - x_j): whole float4 loads per
  // neighbour, two accumulators to halve the dependency chain; padded entries have f = 0.
  float4 acc = (float4)(0.0f), acc2 = (float4)(0.0f);
  const float4 x4 = x[i];
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  int k = 0;
  for (; k + 1 < cnt; k += 2) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours), jb = NBR(nbr, i, k + 1, n, P->max_neighbours);
    const float2 pa = NBR(pair, i, k, n, P->max_neighbours);
    const float2 pb = NBR(pair, i, k + 1, n, P->max_neighbours);
    acc += ((li + lambda[ja] - pa.y) * pa.x) * (x4 - x[ja]);
    acc2 += ((li + lambda[jb] - pb.y) * pb.x) * (x4 - x[jb]);
  }
  if (k < cnt) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours);
    const float2 pa = NBR(pair, i, k, n, P->max_neighbours);
    acc += ((li + lambda[ja] - pa.y) * pa.x) * (x4 - x[ja]);
  }
  float3 dx = wi * (acc + acc2).xyz;
  const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
  if (P->density_coupling && gc > 0) {
    // The ghosts' boundary volume pushes with lambda_i alone; eight list entries per step as in
    // pbf_lambda.
    float8 hx = 0.0f, hy = 0.0f, hz = 0.0f;
    for (int k = 0; k < (int)gc; k += NBR_PAD) {
      const uint8 g = nbr8_unpadded(gnbr, i, k, (int)gc, n, P->max_ghost_neighbours);
      float8 px, py, pz;  // p = x_g - x_i = -r
      offsets8(xg, g, xi, &px, &py, &pz);
      const float8 f = live8(k, (int)gc) * gather8(gvol, g) *
                       kernel_grad_factor8(px * px + py * py + pz * pz, P);
      hx -= f * px;
      hy -= f * py;
      hz -= f * pz;
    }
    dx += (wi * li) * (float3)(hsum8(hx), hsum8(hy), hsum8(hz));
  }
  // The walls' boundary volume pushes too; that push, with the projections below, is the
  // walls' correction of this particle (its contact's load), the normal load of its friction
  // (particles held by it never penetrate the particle radius).
  WallContact wall = contact[i];
  {
    float wv = 0.0f;
    float3 wg = (float3)(0.0f);
    wall_volume(xi, P, &wv, &wg);
    const float3 push = wi * li * wg;
    dx += push;
    const float pl = norm3(push);
    wall.load += (float4)(push, pl);
  }
  float3 p = xi + dx;

  // One-sided contact with the nearest hand ghost. Closed (hand.closed_contact, the default):
  // the nearest ghost within 2R (the ghosts' spacing by default, so every point of the hand's
  // surface has one that near) stands for the surface there, the plane through it normal to its
  // outward normal, and the particle is pushed along that normal to R in front of it, at most R
  // a sweep; more than R behind the plane it is not at this ghost's surface (across a finger:
  // a full ghost list may miss the ghosts on its own side). A particle whose ghost list is full
  // takes the radial push: the nearest ghost it lists need not be the nearest (with ghosts 4 mm
  // apart in lists of 32 the plane flung one out of the domain). Radial (the ablation): a ghost
  // within R pushes the particle out to R from it; the hand is then porous, a particle between
  // ghosts d apart sits 0.7 d from each, out of their reach, and water seeps in (a palm lowered
  // into a pool took in about a particle per mm).
  const float rr = P->contact_radius;
  const bool closed = P->closed_contact != 0 && gcount[i] <= (uint)P->max_ghost_neighbours;
  // Capsules (closed_contact 2, hand.capsule_contact, the default): the hand's surface is its
  // capsules' smooth union (hand_surface: no grooves between the ghosts' planes, the creases
  // between capsules filled, and a particle inside the hand is pushed out whatever its depth);
  // the nearest listed ghost takes the reaction. The tool's ghosts (index >= hand_ng) keep the plane.
  const bool capsules = P->closed_contact == 2 && nc > 0;
  const float reach = closed ? 4.0f * rr * rr : rr * rr;
  float best = capsules ? INFINITY : reach;
  uint hit = INVALID_INDEX;
  // The capsules that can hold the particle's nearest surface: those of the ghosts it lists
  // (HandGhosts::capsule_mask: a ghost's own and those it lies within a spacing of; the list
  // reaches h > R), typically 1-3 of the 23 a hand; all where the list is full.
  ulong cands = capsules && gcount[i] > (uint)P->max_ghost_neighbours ? ~(ulong)0 >> (64 - nc) : 0;
  for (uint k = 0; k < gc; ++k) {
    const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = p - xg[g].xyz;
    const float d2 = dot(r, r);
    if (capsules && g < (uint)hand_ng) cands |= gcaps[g];
    if (d2 < best) {
      best = d2;
      hit = g;
    }
  }
  float4 gc_out = (float4)(0.0f, 0.0f, 0.0f, as_float(INVALID_INDEX));
  float push = 0.0f;  // m, along dir
  float3 dir = (float3)(0.0f);
  if (capsules && hit != INVALID_INDEX && hit < (uint)hand_ng) {
    const float d = hand_surface(p, cands, cap_pose, capsule_blend, gnormal[hit].xyz, &dir);
    push = d < rr ? min(rr - d, rr) : 0.0f;
  } else if (hit != INVALID_INDEX && best < reach) {
    const float3 r = p - xg[hit].xyz;
    if (closed) {
      dir = gnormal[hit].xyz;
      const float above = dot(r, dir);
      push = above > -rr ? min(rr - above, rr) : 0.0f;
    } else {
      const float d = sqrt(best);
      dir = d > 1e-6f * rr ? r / d : gnormal[hit].xyz;
      push = rr - d;
    }
  }
  if (push > 0.0f) {
    float3 corr = push * dir;
    p += corr;
    // The substep's normal pushes and the last ghost that gave one, for finalize's inelastic
    // contact (integrate.cl; zeroed after the sort).
    if (inelastic) hand_push[i] = (float4)(hand_push[i].xyz + corr, as_float(hit));
    // Coulomb friction with the hand: the particle's motion relative to the ghost over the
    // substep loses its tangential part, up to mu times the push.
    if (P->hand_friction > 0.0f) {
      const float3 rel = (p - x0[i].xyz) - (xg[hit].xyz - xg0[hit].xyz);
      const float3 t = rel - dot(rel, dir) * dir;
      const float tl = norm3(t);
      const float limit = P->hand_friction * push;
      const float3 f = tl <= limit ? -t : -t * (limit / tl);
      p += f;
      corr += f;
    }
    gc_out = (float4)(corr, as_float(hit));
  }
  ghost_contact[i] = gc_out;

  p = walls_and_friction(i, p, wall, contact, flags, anchor, x0, P);
  x_out[i] = (float4)(p, 0.0f);
}
