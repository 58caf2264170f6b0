#pragma once
// The parameter block every smoke kernel reads from __constant memory. It mirrors the
// SmokeParams struct of kernels/smoke/cl/common.cl field by field: only 4-byte members, so host
// and device agree on the layout without padding rules (create() checks the size). Change both
// together.
#include <cstdint>

namespace sonoflow::smoke {

enum CellType : std::uint8_t { kCellFluid = 0, kCellSolid = 1, kCellWall = 2, kCellOpen = 3 };

struct SmokeParams {
  std::int32_t n[4];       // nx, ny, nz, nx ny nz
  std::int32_t stride[4];  // 1, NX, NX NY, NX NY NZ on the padded grid
  float origin[4];         // m
  float h, inv_h, dt, inv_dt;
  float rho;
  float smoke_weight;
  float heat_lift;
  float vorticity;
  float up[4];
  float body_force[4];
  float density_keep;
  float heat_keep;
  float max_obstacle_speed;
  float far_distance;
  std::int32_t source_count;
  std::int32_t open_faces;
  float project_scale;
  float rhs_scale;
  float divergence_scale;
  float pad[3];
};

static_assert(sizeof(SmokeParams) == 40 * 4);

}  // namespace sonoflow::smoke
