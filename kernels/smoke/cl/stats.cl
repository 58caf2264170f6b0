// Per-frame statistics of the flow, reduced like every grid sum (reduce.cl):
//   s0 kinetic energy (J), s1 smoke amount (density x m^3), s2 heat (K m^3), s3 cells in the hand,
//   s4 largest speed (m/s), s5 largest |div u| over the fluid after the projection (1/s),
//   s6 largest smoke density.
__kernel void flow_stats(P_CONST p, __global const float* u, __global const float* v,
                         __global const float* w, __global const float2* q, __global const uchar* type,
                         __global const float* inv_diag, __global float8* partials,
                         __local float8* scratch) {
  SUMS_IN_ANY_ORDER
  const int sy = SY(p), sz = SZ(p);
  const float volume = p->h * p->h * p->h, energy = 0.5f * p->rho * volume, inv_h = p->inv_h;
  GRID_REDUCTION_BEGIN(p)
    const uchar t = type[c];
    const int fluid = t == CELL_FLUID;
    const float3 vel = centre_velocity(u, v, w, p, c);
    const float2 q_c = q[c];
    const float speed2 = dot(vel, vel);
    s0 += fluid ? energy * speed2 : 0.0f;
    s1 += fluid ? q_c.x * volume : 0.0f;
    s2 += fluid ? q_c.y * volume : 0.0f;
    s3 += t == CELL_SOLID ? 1.0f : 0.0f;
    RAISE(m0, fluid ? sqrt(speed2) : 0.0f);
    RAISE(m2, fluid ? q_c.x : 0.0f);
    const float div = ((u[c + 1] - u[c]) + (v[c + sy] - v[c]) + (w[c + sz] - w[c])) * inv_h;
    RAISE(m1, fluid && inv_diag[c] > 0.0f ? fabs(div) : 0.0f);
  GRID_REDUCTION_END(scratch, partials)
}
