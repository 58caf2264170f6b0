#pragma once
// The extracted targets (cl/extract.cl: one per column of the array's wall that meets the hand)
// as the ContactField the haptic side consumes, the same as the particle engine gives it: the
// samples with pressure (p* > 0; zero, i.e. clamped suction, renders nothing), each anchored to
// the base joint of the bone it lies on (joint index + offset in that joint's frame), so the
// 1 kHz thread can carry it with the hand between fluid frames. When more samples have pressure
// than a field holds, every k-th is kept (an even thinning, counted as dropped).
#include <span>

#include "kernels/smoke/hand_obstacle.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::smoke {

struct TargetSummary {
  int hand_columns = 0;     // wall columns whose march met the hand
  int samples = 0;          // of those, with p* > 0 and in the field
  int dropped = 0;          // columns that met the hand but did not fit the field
  float max_pressure = 0;   // Pa
};

// `position` = (surface point, p* >= 0), `normal` = (unit normal, bone id or -1) per column.
TargetSummary fill_contact_field(std::span<const Float4> position, std::span<const Float4> normal,
                                 const HandFrame& newest, ContactField& out);

}  // namespace sonoflow::smoke
