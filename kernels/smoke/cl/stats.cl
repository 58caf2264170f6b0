// Per-frame statistics of the flow, reduced like every grid sum (reduce.cl):
//   s0 kinetic energy (J), s1 smoke amount (density x m^3), s2 heat (K m^3), s3 cells in the hand,
//   s4 largest speed (m/s), s5 largest |div u| over the fluid after the projection (1/s),
//   s6 largest smoke density.
__kernel void flow_stats(P_CONST p, __global const float* u, __global const float* v,
                         __global const float* w, __global const float2* q, __global const uchar* type,
                         __global const float* inv_diag, __global float8* partials,
                         __local float8* scratch) {
  COLUMN_REDUCTION_BEGIN(p)
    const float volume = p->h * p->h * p->h;
    const uchar t = type[c];
    if (t == CELL_FLUID) {
      const float3 vel = centre_velocity(u, v, w, p, c);
      const float2 s = q[c];
      const float speed2 = dot(vel, vel);
      sums.x += 0.5f * p->rho * speed2 * volume;
      sums.y += s.x * volume;
      sums.z += s.y * volume;
      maxima.x = fmax(maxima.x, sqrt(speed2));
      maxima.z = fmax(maxima.z, s.x);
      if (inv_diag[c] > 0.0f) {
        const float div = ((u[c + 1] - u[c]) + (v[c + SY(p)] - v[c]) + (w[c + SZ(p)] - w[c])) * p->inv_h;
        maxima.y = fmax(maxima.y, fabs(div));
      }
    } else if (t == CELL_SOLID) {
      sums.w += 1.0f;
    }
  COLUMN_REDUCTION_END(scratch, partials)
}
