#pragma once
// A hand-held tool (stirring rod, ladle) as a rigid set of equal-mass particles (patent
// CN 105825059 A, "unified particle model": the tool mesh voxelised at the fluid's particle
// spacing). The tool is kinematic: a 6-DoF pose from the device or the hand tracker moves it, and
// every particle gets u_i = u_r + omega x q_i (the patent's eq. 15), with u_r the centroid velocity
// and omega the angular velocity from the change of orientation between two poses.
#include <vector>

#include <Eigen/Geometry>

namespace sonoflow::force_feedback {

struct ToolPose {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // centroid, m, array frame
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
};

enum class ToolShape { Rod, Ladle };

struct ToolShapeConfig {
  ToolShape shape = ToolShape::Rod;
  double spacing_m = 0.005;    // particle spacing (the fluid's)
  double radius_m = 0.006;     // rod radius; ladle bowl radius
  double length_m = 0.12;      // rod length along local z; ladle handle length
};

class ToolBody {
 public:
  explicit ToolBody(const ToolShapeConfig& config);

  // Moves the tool to a new pose reached dt seconds after the previous one and updates every
  // particle's position and velocity. The first call only places the tool (velocity zero).
  void move_to(const ToolPose& pose, double dt);

  const std::vector<Eigen::Vector3d>& positions() const { return positions_; }
  const std::vector<Eigen::Vector3d>& velocities() const { return velocities_; }
  const std::vector<Eigen::Vector3d>& local_offsets() const { return offsets_; }
  const Eigen::Vector3d& linear_velocity() const { return linear_velocity_; }
  const Eigen::Vector3d& angular_velocity() const { return angular_velocity_; }
  const ToolPose& pose() const { return pose_; }
  double spacing() const { return spacing_; }

 private:
  double spacing_;
  std::vector<Eigen::Vector3d> offsets_;  // q_i^0, centroid at the origin
  std::vector<Eigen::Vector3d> positions_, velocities_;
  ToolPose pose_;
  bool placed_ = false;
  Eigen::Vector3d linear_velocity_ = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity_ = Eigen::Vector3d::Zero();
};

}  // namespace sonoflow::force_feedback
