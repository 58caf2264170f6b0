#include "daemon/view/scene_frame.hpp"

#include <cstring>
#include <string_view>
#include <vector>

#include "daemon/status/json_writer.hpp"
#include "daemon/view/reconstruction.hpp"

namespace sonoflow::daemon::view {
namespace {

const char* colour_by_name(scene::ColourBy c) {
  switch (c) {
    case scene::ColourBy::Fraction: return "fraction";
    case scene::ColourBy::Temperature: return "temperature";
    case scene::ColourBy::Material: break;
  }
  return "material";
}

const char* mode_name(std::uint32_t mode) { return mode == 1 ? "am" : mode == 2 ? "stm" : "silent"; }
const char* shape_name(std::uint32_t kind) {
  static const char* const names[] = {"box", "plane", "incline", "bowl"};
  return kind < 4 ? names[kind] : "unknown";
}

// The typed arrays, appended back to back; each entry remembers where it went.
class Arrays {
 public:
  template <typename T>
  void add(const char* name, const T* data, std::size_t count, std::size_t floats_per_item) {
    entries_.push_back({name, bytes_.size(), count});
    const std::size_t n = count * sizeof(T) * floats_per_item;
    const auto* p = reinterpret_cast<const char*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
    while (bytes_.size() % 4 != 0) bytes_.push_back('\0');
  }
  void describe(Json& j) const {
    j.key("arrays").open('{');
    for (const auto& e : entries_) {
      j.key(e.name).open('{').field("offset", static_cast<std::uint64_t>(e.offset))
          .field("count", static_cast<std::uint64_t>(e.count)).close('}');
    }
    j.close('}');
  }
  const std::vector<char>& bytes() const { return bytes_; }

 private:
  struct Entry {
    const char* name;
    std::size_t offset, count;
  };
  std::vector<Entry> entries_;
  std::vector<char> bytes_;
};

void focus_list(Json& j, const char* key, const scene::SceneFocus* foci, std::uint32_t n) {
  j.key(key).open('[');
  for (std::uint32_t i = 0; i < n; ++i) {
    j.open('[').value(static_cast<double>(foci[i].x)).value(static_cast<double>(foci[i].y))
        .value(static_cast<double>(foci[i].z)).value(static_cast<double>(foci[i].value)).close(']');
  }
  j.close(']');
}

}  // namespace

std::string encode_scene_frame(const scene::FluidScene* fluid, const scene::HapticScene* haptic) {
  Arrays arrays;
  Json j;
  j.open('{');
  if (fluid != nullptr) {
    const auto& h = fluid->head;
    j.key("fluid").open('{');
    j.field("time_ns", h.time_ns).field("frame", h.frame);
    j.field("particles_total", h.particles_total).field("particles_shown", h.particles_shown);
    j.field("samples_total", h.samples_total).field("samples_shown", h.samples_shown);
    j.field("colour_by", std::string_view(colour_by_name(h.colour_by)));
    j.field("material", std::string_view(h.material.data(), strnlen(h.material.data(), h.material.size())));
    j.field("max_pressure", static_cast<double>(h.max_pressure));
    j.key("hands").open('[');
    for (std::uint32_t k = 0; k < h.hand_count; ++k) {
      const auto& hand = h.hands[k];
      j.open('{').field("id", hand.hand_id).field("chirality", std::string_view(hand.chirality ? "right" : "left"));
      j.key("joints").open('[');
      for (int i = 0; i < kHandJointCount; ++i) {
        const auto& joint = hand.joints[static_cast<std::size_t>(i)];
        j.open('[').value(static_cast<double>(joint.x)).value(static_cast<double>(joint.y))
            .value(static_cast<double>(joint.z)).value(static_cast<double>(joint.radius))
            .value(((hand.valid_mask >> i) & 1u) != 0).close(']');
      }
      j.close(']').close('}');
    }
    j.close(']');
    j.key("shapes").open('[');
    for (std::uint32_t k = 0; k < h.shape_count; ++k) {
      const auto& s = h.shapes[k];
      j.open('{').field("kind", std::string_view(shape_name(s.kind)));
      j.key("a").open('[').value(static_cast<double>(s.a[0])).value(static_cast<double>(s.a[1]))
          .value(static_cast<double>(s.a[2])).close(']');
      j.key("b").open('[').value(static_cast<double>(s.b[0])).value(static_cast<double>(s.b[1]))
          .value(static_cast<double>(s.b[2])).close(']');
      j.field("angle", static_cast<double>(s.angle)).field("radius", static_cast<double>(s.radius));
      j.field("thickness", static_cast<double>(s.thickness)).close('}');
    }
    j.close(']');
    j.close('}');
    std::vector<float> positions;
    std::vector<std::uint8_t> colours;
    positions.reserve(fluid->particles.size() * 3);
    colours.reserve(fluid->particles.size() * 4);
    for (const auto& p : fluid->particles) {
      positions.insert(positions.end(), {p.x, p.y, p.z});
      colours.insert(colours.end(), {p.r, p.g, p.b, p.flags});
    }
    arrays.add("particle_positions", positions.data(), fluid->particles.size(), 3);
    arrays.add("particle_colours", colours.data(), fluid->particles.size(), 4);
    arrays.add("contact_samples", reinterpret_cast<const float*>(fluid->samples.data()), fluid->samples.size(), 4);
  }
  if (haptic != nullptr) {
    const auto& h = haptic->head;
    const std::vector<float> reconstructed = reconstruct(*haptic);
    j.key("haptic").open('{');
    j.field("time_ns", h.time_ns).field("blocks", h.blocks);
    j.field("mode", std::string_view(mode_name(h.mode)));
    j.field("sigma_m", static_cast<double>(h.sigma_m)).field("gamma", static_cast<double>(h.gamma));
    j.field("targets_total", h.targets_total).field("targets_shown", h.targets_shown);
    j.field("reconstruction_rmse", static_cast<double>(normalised_rmse(haptic->targets, reconstructed)));
    focus_list(j, "emitted", h.emitted.data(), h.emitted_count);
    focus_list(j, "solution", h.solution.data(), h.solution_count);
    j.key("path_vertices").open('[');
    std::vector<float> paths;
    for (std::uint32_t p = 0; p < h.path_count; ++p) {
      j.value(h.path_vertices[p]);
      for (std::uint32_t v = 0; v < h.path_vertices[p]; ++v) {
        const auto& f = haptic->paths[p * scene::kMaxPathVertices + v];
        paths.insert(paths.end(), {f.x, f.y, f.z, f.value});
      }
    }
    j.close(']');
    j.close('}');
    arrays.add("targets", reinterpret_cast<const float*>(haptic->targets.data()), haptic->targets.size(), 4);
    arrays.add("reconstructed", reconstructed.data(), reconstructed.size(), 1);
    arrays.add("paths", paths.data(), paths.size() / 4, 4);
    arrays.add("trail", reinterpret_cast<const float*>(haptic->trail.data()), haptic->trail.size(), 4);
  }
  arrays.describe(j);
  j.close('}');
  std::string meta = j.str();
  while (meta.size() % 4 != 0) meta.push_back(' ');
  std::string out;
  const auto meta_bytes = static_cast<std::uint32_t>(meta.size());
  out.append(reinterpret_cast<const char*>(&meta_bytes), 4);
  out += meta;
  out.append(arrays.bytes().data(), arrays.bytes().size());
  return out;
}

}  // namespace sonoflow::daemon::view
