// Per-frame statistics of the flow, reduced like every grid sum (reduce.cl):
//   s0 kinetic energy (J), s1 smoke amount (density x m^3), s2 heat (K m^3), s3 cells in the hand,
//   s4 largest speed (m/s), s5 largest |div u| over the fluid after the projection (1/s),
//   s6 largest smoke density.
__kernel void flow_stats(P_CONST p, __global const float* u, __global const float* v,
                         __global const float* w, __global const float2* q, __global const uchar* type,
                         __global const float* inv_diag, __global float8* partials,
                         __local float8* scratch) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  float8 mine = (float8)(0.0f);
  if (i <= NX(p) && j <= NY(p) && k <= NZ(p)) {
    const int c = cell_index(p, i, j, k);
    const float volume = p->h * p->h * p->h;
    const uchar t = type[c];
    if (t == CELL_FLUID) {
      const float3 vel = centre_velocity(u, v, w, p, c);
      const float2 s = q[c];
      const float speed2 = dot(vel, vel);
      mine.s0 = 0.5f * p->rho * speed2 * volume;
      mine.s1 = s.x * volume;
      mine.s2 = s.y * volume;
      mine.s4 = sqrt(speed2);
      mine.s6 = s.x;
      if (inv_diag[c] > 0.0f) {
        const float div = ((u[c + 1] - u[c]) + (v[c + SY(p)] - v[c]) + (w[c + SZ(p)] - w[c])) * p->inv_h;
        mine.s5 = fabs(div);
      }
    } else if (t == CELL_SOLID) {
      mine.s3 = 1.0f;
    }
  }
  group_reduce8(mine, scratch, partials);
}
