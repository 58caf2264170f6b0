#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/force_feedback/tool_body.hpp"
#include "kernels/force_feedback/tool_force.hpp"

namespace sonoflow::force_feedback {
namespace {

TEST(ToolBody, ParticleVelocitiesAreTheRigidMotionOfEquationFifteen) {
  ToolShapeConfig shape;
  shape.shape = ToolShape::Ladle;
  ToolBody tool(shape);
  ASSERT_GT(tool.positions().size(), 20u);
  const double dt = 1e-4;
  ToolPose a;
  a.position = {0.01, 0.02, 0.15};
  a.orientation = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized());
  ToolPose b = a;
  const Eigen::Vector3d v(0.4, -0.1, 0.2), omega(2.0, -1.0, 3.0);
  b.position += v * dt;
  b.orientation = Eigen::Quaterniond(Eigen::AngleAxisd(omega.norm() * dt, omega.normalized())) *
                  a.orientation;
  tool.move_to(a, 0);
  const std::vector<Eigen::Vector3d> before = tool.positions();
  tool.move_to(b, dt);
  EXPECT_TRUE(tool.linear_velocity().isApprox(v, 1e-9));
  EXPECT_TRUE(tool.angular_velocity().isApprox(omega, 1e-6));
  for (std::size_t i = 0; i < before.size(); ++i) {
    const Eigen::Vector3d finite_difference = (tool.positions()[i] - before[i]) / dt;
    EXPECT_LT((tool.velocities()[i] - finite_difference).norm(), 1e-3 * (1 + v.norm()));
  }
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  for (const auto& x : tool.positions()) centroid += x;
  EXPECT_TRUE((centroid / before.size()).isApprox(b.position, 1e-9));
}

// A block of fluid particles on a lattice at rest density, at rest.
struct Pool {
  double spacing = 0.005;
  ToolCouplingConfig coupling;
  std::vector<FluidParticle> particles;

  explicit Pool(double viscosity) {
    coupling.support_radius_m = 2 * spacing;
    coupling.particle_mass_kg = 1000 * spacing * spacing * spacing;
    for (int k = 0; k < 14; ++k)
      for (int j = 0; j < 14; ++j)
        for (int i = 0; i < 24; ++i) {
          FluidParticle p;
          p.position = {(i - 11.5) * spacing, (j - 6.5) * spacing, k * spacing};
          p.viscosity = viscosity;
          particles.push_back(p);
        }
  }
};

ToolForce drag(const Pool& pool, double speed, double height = 0.03,
               std::vector<Eigen::Vector3d>* reaction = nullptr) {
  ToolShapeConfig shape;
  shape.radius_m = 0.004;
  shape.length_m = 0.05;
  ToolBody tool(shape);
  ToolPose pose;
  pose.position = {0, 0, height};
  tool.move_to(pose, 0);
  pose.position.x() += speed * 1e-3;
  tool.move_to(pose, 1e-3);
  if (reaction) {
    reaction->assign(pool.particles.size(), Eigen::Vector3d::Zero());
    return compute_tool_force(tool, pool.particles, pool.coupling, *reaction);
  }
  return compute_tool_force(tool, pool.particles, pool.coupling);
}

TEST(ToolForce, OpposesTheMotionAndGrowsWithSpeedAndViscosity) {
  const Pool water(1.0), honey(10.0);
  const ToolForce slow = drag(water, 0.1), fast = drag(water, 0.3), thick = drag(honey, 0.1);
  ASSERT_GT(slow.fluid_neighbours, 50);
  EXPECT_LT(slow.force.x(), 0);  // drag points against +x motion
  EXPECT_LT(fast.force.x(), 2.5 * slow.force.x());  // about 3x (viscous drag is linear)
  EXPECT_LT(thick.force.x(), 5 * slow.force.x());   // about 10x
  // Whatever pressure the overlap creates is the same at any speed: the difference is drag.
  EXPECT_NEAR((fast.force - slow.force).x() / (0.2), (slow.force - drag(water, 0.0).force).x() / 0.1,
              1e-6 + 0.01 * std::abs(slow.force.x()) / 0.1);
}

TEST(ToolForce, IsZeroOutOfTheFluid) {
  const Pool water(1.0);
  const ToolForce above = drag(water, 0.3, 0.3);
  EXPECT_EQ(above.fluid_neighbours, 0);
  EXPECT_EQ(above.force, Eigen::Vector3d::Zero());
}

TEST(ToolForce, TheFluidReceivesExactlyTheOppositeForce) {
  const Pool water(1.0);
  std::vector<Eigen::Vector3d> reaction;
  const ToolForce f = drag(water, 0.2, 0.03, &reaction);
  Eigen::Vector3d total = Eigen::Vector3d::Zero();
  for (const auto& r : reaction) total += r;
  EXPECT_LT((total + f.force).norm(), 1e-12 * (1 + f.force.norm()));
  EXPECT_GT(f.force.norm(), 0);
}

}  // namespace
}  // namespace sonoflow::force_feedback
