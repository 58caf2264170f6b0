// Evaluates the configured smoothing kernel at given offsets r = x_i - x_j: out = (grad W, W).
// Used at start-up to calibrate the rest volume, and by the kernel tests, so both see exactly
// the code the solver runs.
__kernel void probe_kernel(int n, __global const float4* r, P_CONST P, __global float4* out) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float3 d = r[i].xyz;
  const float r2 = dot(d, d);
  out[i] = (float4)(kernel_grad(d, r2, P), kernel_w(r2, P));
}

// sizeof(SimParams) as the device compiler sees it; the host refuses to run on a mismatch.
__kernel void params_size(__global uint* out) {
  if (get_global_id(0) == 0) out[0] = (uint)sizeof(SimParams);
}
