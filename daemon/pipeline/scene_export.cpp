#include "daemon/pipeline/scene_export.hpp"

#include <algorithm>
#include <cstring>

namespace sonoflow::daemon {
namespace {

// v rotated by the unit quaternion q: v + 2w (q x v) + 2 q x (q x v).
Vec3f rotate(const Quatf& q, const Vec3f& v) noexcept {
  const float tx = 2 * (q.y * v.z - q.z * v.y);
  const float ty = 2 * (q.z * v.x - q.x * v.z);
  const float tz = 2 * (q.x * v.y - q.y * v.x);
  return {v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
          v.z + q.w * tz + (q.x * ty - q.y * tx)};
}

const HandPose* hand_with_id(const HandFrame& frame, std::uint32_t id) noexcept {
  for (int h = 0; h < frame.hand_count && h < kMaxHands; ++h)
    if (frame.hands[static_cast<std::size_t>(h)].hand_id == id) return &frame.hands[static_cast<std::size_t>(h)];
  return nullptr;
}

// Publication times: one period after the last, or now if the stage fell more than a period
// behind (the export never tries to catch up).
bool due(std::int64_t now_ns, std::int64_t& next_ns, std::int64_t period_ns) noexcept {
  if (now_ns < next_ns) return false;
  next_ns = std::max(next_ns + period_ns, now_ns);
  return true;
}

}  // namespace

FluidSceneExport::FluidSceneExport(scene::SceneWriter& writer)
    : writer_(writer), particles_(writer.capacity().max_particles),
      samples_(writer.capacity().max_samples), shapes_(scene::kMaxShapes) {}

void FluidSceneExport::after_frame(std::int64_t now_ns, FluidModel& model, const HandFrame& hand,
                                   const ContactField& field, const char* material,
                                   std::uint64_t frames, std::uint32_t particles) noexcept {
  if (!due(now_ns, next_ns_, writer_.period_ns())) return;
  scene::FluidSceneHead head;
  head.time_ns = now_ns;
  head.frame = frames;
  head.colour_by = scene::ColourBy::Material;
  const std::uint32_t shown = model.view_particles(particles_, head.colour_by);
  head.shape_count = model.view_container(shapes_);
  for (std::uint32_t s = 0; s < head.shape_count; ++s) head.shapes[s] = shapes_[s];
  std::strncpy(head.material.data(), material, head.material.size() - 1);

  head.hand_count = std::min<std::uint32_t>(hand.hand_count, kMaxHands);
  for (std::uint32_t h = 0; h < head.hand_count; ++h) {
    const HandPose& pose = hand.hands[h];
    scene::SceneHand& out = head.hands[h];
    out.hand_id = pose.hand_id;
    out.chirality = static_cast<std::uint32_t>(pose.chirality);
    out.valid_mask = 0;
    for (int j = 0; j < kHandJointCount; ++j) {
      const JointPose& joint = pose.joints[static_cast<std::size_t>(j)];
      out.joints[static_cast<std::size_t>(j)] = {joint.position.x, joint.position.y, joint.position.z, joint.radius};
      if (joint.valid) out.valid_mask |= 1u << j;
    }
  }

  // Contact samples: every k-th, so the shown ones spread over the whole hand.
  const std::uint32_t total = std::min(field.count, kMaxContactSamples);
  head.samples_total = total;
  const std::size_t cap = samples_.size();
  const std::size_t stride = cap == 0 ? 1 : std::max<std::size_t>(1, (total + cap - 1) / cap);
  std::size_t n = 0;
  for (std::size_t i = 0; i < total; ++i) {
    const ContactSample& s = field.samples[i];
    head.max_pressure = std::max(head.max_pressure, s.pressure);
    if (i % stride == 0 && n < cap) samples_[n++] = {s.position.x, s.position.y, s.position.z, s.pressure};
  }
  head.particles_total = particles;
  writer_.publish_fluid(head, std::span(particles_).first(shown), std::span(samples_).first(n));
  ++published_;
}

HapticSceneExport::HapticSceneExport(scene::SceneWriter& writer)
    : writer_(writer), trail_(std::max<std::uint32_t>(writer.capacity().max_trail, 1)),
      trail_ordered_(trail_.size()), targets_(writer.capacity().max_samples) {}

void HapticSceneExport::record(const FocalBlock& block) noexcept {
  for (const FocalSample& sample : block.samples) {
    for (int f = 0; f < sample.count && f < kMaxFoci; ++f) {
      const Focus& focus = sample.foci[static_cast<std::size_t>(f)];
      trail_[trail_next_] = {focus.position.x, focus.position.y, focus.position.z, focus.intensity};
      trail_next_ = (trail_next_ + 1) % trail_.size();
      trail_size_ = std::min(trail_size_ + 1, trail_.size());
    }
  }
}

void HapticSceneExport::after_tick(std::int64_t now_ns, const HapticRenderer& renderer,
                                   const FocalBlock& block, const HandFrame& hand,
                                   const ContactField* field, std::uint64_t blocks) noexcept {
  if (!due(now_ns, next_ns_, writer_.period_ns())) return;
  scene::HapticSceneHead head;
  head.time_ns = now_ns;
  head.blocks = blocks;
  head.mode = static_cast<std::uint32_t>(block.mode);
  const FocalSample& last = block.samples[kSamplesPerBlock - 1];
  head.emitted_count = std::min<std::uint32_t>(last.count, kMaxFoci);
  for (std::uint32_t f = 0; f < head.emitted_count; ++f) {
    const Focus& focus = last.foci[f];
    head.emitted[f] = {focus.position.x, focus.position.y, focus.position.z, focus.intensity};
  }

  renderer.describe(view_);
  head.sigma_m = view_.sigma_m;
  head.gamma = view_.gamma;
  head.solution_count = std::min<std::uint32_t>(view_.focus_count, kMaxFoci);
  for (std::uint32_t f = 0; f < head.solution_count; ++f) head.solution[f] = view_.foci[f];
  head.path_count = std::min<std::uint32_t>(view_.path_count, scene::kMaxPaths);
  for (std::uint32_t p = 0; p < head.path_count; ++p) head.path_vertices[p] = view_.path_vertices[p];

  // The trail, oldest first.
  const std::size_t start = (trail_next_ + trail_.size() - trail_size_) % trail_.size();
  for (std::size_t i = 0; i < trail_size_; ++i) trail_ordered_[i] = trail_[(start + i) % trail_.size()];

  // Target samples: the newest field's array-facing samples (the renderer's own selection:
  // normal towards the array centre), every k-th, carried onto the newest hand pose.
  std::size_t n = 0;
  if (field != nullptr) {
    const std::uint32_t total = std::min(field->count, kMaxContactSamples);
    std::uint32_t facing = 0;
    for (std::uint32_t i = 0; i < total; ++i) {
      const ContactSample& s = field->samples[i];
      if (-(s.normal.x * s.position.x + s.normal.y * s.position.y + s.normal.z * s.position.z) > 0) ++facing;
    }
    head.targets_total = facing;
    const std::size_t cap = targets_.size();
    const std::size_t stride = cap == 0 ? 1 : std::max<std::size_t>(1, (facing + cap - 1) / cap);
    std::size_t k = 0;
    for (std::uint32_t i = 0; i < total && n < cap; ++i) {
      const ContactSample& s = field->samples[i];
      if (-(s.normal.x * s.position.x + s.normal.y * s.position.y + s.normal.z * s.position.z) <= 0) continue;
      if (k++ % stride != 0) continue;
      Vec3f x = s.position;
      const HandPose* pose = s.hand < field->hand_count ? hand_with_id(hand, field->hand_ids[s.hand]) : nullptr;
      if (pose != nullptr && s.joint < kHandJointCount && pose->joints[s.joint].valid) {
        const JointPose& joint = pose->joints[s.joint];
        const Vec3f r = rotate(joint.orientation, s.offset);
        x = {joint.position.x + r.x, joint.position.y + r.y, joint.position.z + r.z};
      }
      targets_[n++] = {x.x, x.y, x.z, s.pressure};
    }
  }
  writer_.publish_haptic(head, std::span<const scene::SceneFocus>(view_.paths).first(head.path_count * scene::kMaxPathVertices),
                         std::span(trail_ordered_).first(trail_size_), std::span(targets_).first(n));
  ++published_;
}

}  // namespace sonoflow::daemon
