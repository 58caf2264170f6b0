// Target extraction (thesis 4.1.2, 4.2.2): the array sits on the domain's low-z wall; from each
// cell of that wall, march up into the domain to the first cell within one cell of the hand
// (signed distance <= h) and take its pressure, clamped at zero ("we clamp to zero the negative
// target pressure values that occur when the hand moves away from the flow"). The sample is
// placed on the hand's surface (the cell centre moved along the distance gradient), with that
// gradient as its normal and the nearest bone for its joint anchor. A cell already inside the
// hand (a surface crossing within the cell below) takes the pressure of the fluid cell below it.
//
// Output per wall column (i, j), at (j - 1) nx + (i - 1): out_position = (position, p*),
// out_normal = (normal, bone id), bone id -1 where the column misses the hand.
__kernel void extract_targets(P_CONST p, __global const float* sdf, __global const uchar* type,
                              __global const float* pressure, __global const int* bone,
                              __global float4* out_position, __global float4* out_normal) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1;
  if (i > NX(p) || j > NY(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int column = (j - 1) * NX(p) + (i - 1);
  float4 position = (float4)(0.0f);
  float4 normal = (float4)(0.0f, 0.0f, 0.0f, -1.0f);
  for (int k = 1; k <= NZ(p); ++k) {
    const int c = cell_index(p, i, j, k);
    const float d = sdf[c];
    if (d > p->h) continue;
    float3 g = (float3)(sdf[c + 1] - sdf[c - 1], sdf[c + sy] - sdf[c - sy], sdf[c + sz] - sdf[c - sz]);
    const float len = length(g);
    g = len > 1e-12f ? g / len : (float3)(0.0f, 0.0f, -1.0f);
    float pc = 0.0f;
    if (type[c] == CELL_FLUID) pc = pressure[c];
    else if (k > 1 && type[c - sz] == CELL_FLUID) pc = pressure[c - sz];
    position = (float4)(cell_centre(p, i, j, k) - d * g, fmax(pc, 0.0f));
    normal = (float4)(g, (float)bone[c]);
    break;
  }
  out_position[column] = position;
  out_normal[column] = normal;
}
