// The still hand held in water (hand_scenes.hpp): the pool, the hand lowered to each depth and held,
// and what the hand, the floor, the level and the palm's samples measure over the hold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numbers>
#include <tuple>
#include <vector>

#include <Eigen/Geometry>

#include "tests/kernels/fluid/hand_scenes.hpp"
#include "kernels/fluid/material.hpp"
#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::fluid::test {
namespace {

// A still hand in a pool (thesis 6.2.1: the pressure rendered on the skin is the fluid's on the
// hand): does it feel what hydrostatics says? The flat hand with its forearm as thick as its palm
// (radius 12 mm instead of 30), so the palm's lower surface is the hand's lowest point and an 8 cm
// pool holds it 4 cm deep with room under it.
HandFrame still_hand(Vec3f palm, std::uint64_t frame_id) {
  HandFrame f = flat_hand(palm, frame_id, 0);
  f.hands[0].joint(HandJoint::Elbow).radius = 0.012f;
  return f;
}
constexpr float kPalmRadius = 0.011f;  // m, the metacarpals' radius: palm centre line to its lower surface
// The still-hand pool: 25 x 20 x 8 cm (4,000 particles), the palm over its middle, the fingertips
// 2.8 cm from its +x wall, the forearm through its -x wall.
constexpr float kStillX0 = -0.10f, kStillX1 = 0.15f, kStillY0 = -0.08f, kStillY1 = 0.12f;
constexpr float kStillDepth = 0.08f;
constexpr float kStillArea = (kStillX1 - kStillX0) * (kStillY1 - kStillY0);  // m^2

// Volume of the hand's capsules (their union: the ghosts sit on its surface) inside the pool's
// walls and below z = surface, counted on a 1 mm grid.
double submerged_volume(const HandFrame& f, float surface) {
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  const double step = 0.001;
  const double zc = f.hands[0].joint(HandJoint::Palm).position.z;
  long inside = 0;
  for (double x = kStillX0 + 0.5 * step; x < kStillX1; x += step)
    for (double y = kStillY0 + 0.5 * step; y < kStillY1; y += step)
      for (double z = zc - 0.0125 + 0.5 * step; z < std::min<double>(surface, zc + 0.0125); z += step) {
        const Eigen::Vector3f p(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z));
        for (const hand::Capsule& c : caps)
          if (c.valid && hand::axis_distance(p, c) < c.radius) {
            ++inside;
            break;
          }
      }
  return static_cast<double>(inside) * step * step * step;
}

// The free surface from the particles: the 95th percentile of z of the particles beyond the
// fingertips (x > 13 cm) or beside the little finger (y < -5 cm), plus half a spacing (a layer
// of particles carries the fluid up to d/2 above their centres).
double free_surface(const ParticleSnapshot& s, float d) {
  std::vector<float> z;
  for (const Vec3f& p : s.position)
    if (p.x > 0.13f || p.y < -0.05f) z.push_back(p.z);
  if (z.empty()) return 0;
  std::sort(z.begin(), z.end());
  return z[static_cast<std::size_t>(0.95 * static_cast<double>(z.size() - 1))] + 0.5 * d;
}

// Particles inside the hand's capsules.
int particles_inside(const ParticleSnapshot& s, const HandFrame& f) {
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  int inside = 0;
  for (const Vec3f& q : s.position)
    for (const hand::Capsule& c : caps)
      if (c.valid && hand::axis_distance(to_eigen(q), c) < c.radius) {
        ++inside;
        break;
      }
  return inside;
}

// The nearest point of the hand's surface (its capsules' union) to p: distance (negative inside)
// and the outward normal of the capsule there.
struct SurfacePoint {
  float distance = 1e9f;  // m
  Eigen::Vector3f normal = Eigen::Vector3f::Zero();
};
SurfacePoint nearest_surface(const Eigen::Vector3f& p, const hand::HandCapsules& caps) {
  SurfacePoint out;
  for (const hand::Capsule& c : caps) {
    if (!c.valid) continue;
    const Eigen::Vector3f ab = c.b - c.a;
    const float t = std::clamp((p - c.a).dot(ab) / std::max(ab.squaredNorm(), 1e-12f), 0.0f, 1.0f);
    const Eigen::Vector3f r = p - (c.a + t * ab);
    const float d = r.norm() - c.radius;
    if (d < out.distance) {
      out.distance = d;
      out.normal = r / std::max(r.norm(), 1e-9f);
    }
  }
  return out;
}


// Adds one frame's particles near the hand to h's near_max, away_max and towards_max.
void near_hand_speeds(const ParticleSnapshot& s, const hand::HandCapsules& caps, HeldFigures& h) {
  for (std::size_t i = 0; i < s.position.size(); ++i) {
    const SurfacePoint q = nearest_surface(to_eigen(s.position[i]), caps);
    if (q.distance > 0.02f) continue;
    const Eigen::Vector3f v = to_eigen(s.velocity[i]);
    h.near_max = std::max<double>(h.near_max, v.norm());
    if (q.distance > 0.01f) continue;
    const double vn = v.dot(q.normal);
    h.away_max = std::max(h.away_max, vn);
    h.towards_max = std::max(h.towards_max, -vn);
  }
}

// The palm's downward samples over the averaged frames of a hold: their mean pressure per frame,
// and each sample's own series (keyed by its joint and offset; a frame it was missing from counts
// as no pressure).
struct PalmSeries {
  std::vector<double> mean;      // Pa, per frame
  double expected = 0;           // Pa, rho0 g (surface - z) over the same samples, summed over frames
  std::map<std::tuple<int, int, int, int>, std::vector<double>> per_sample;
};

// Adds one frame's field to the series; `level` is the free surface in that frame.
void record_palm(const ContactField& field, double level, double rho0_g, PalmSeries& s) {
  double p = 0, pe = 0;
  int n = 0;
  for (std::uint32_t q = 0; q < field.count; ++q) {
    const ContactSample& cs = field.samples[q];
    if (!on_palm(cs) || cs.normal.z > -0.9f || cs.joint == static_cast<std::uint8_t>(HandJoint::Wrist))
      continue;  // the palm's downward samples (the forearm's and the thumb's, on the wrist, left out)
    p += cs.pressure;
    pe += rho0_g * (level - cs.position.z);
    ++n;
    std::vector<double>& v = s.per_sample[{cs.joint, static_cast<int>(std::lround(cs.offset.x * 1e4f)),
                                           static_cast<int>(std::lround(cs.offset.y * 1e4f)),
                                           static_cast<int>(std::lround(cs.offset.z * 1e4f))}];
    v.resize(s.mean.size(), 0.0);
    v.push_back(cs.pressure);
  }
  s.mean.push_back(n > 0 ? p / n : 0);
  s.expected += n > 0 ? pe / n : 0;
}

// The water's force on the palm apart from its pressure reading, from the ghosts' raw impulses
// (FluidEngine::hand_ghost_impulses). The patch: the hand's ghosts within a box centred under
// the Palm joint in the hand's frame (|x| <= half_x, |y| <= half_y; the flat hand's joint frames are
// the array's), below the palm's centre line, whose normals face down (n.z < -cos_max; cos_max = 0:
// the whole underside). Its projected area A = sum_j A_j max(-n_j.z, 0) (A_j: HandGhosts' areas,
// the ghosts' shares of the hand's surface); the force F = sum_j f_j.z (up: the water pushes the
// palm up). Hydrostatics puts F = rho0 g sum_j (surface - z_j) A_j max(-n_j.z, 0), the
// "expected" force. Both over frame_dt into Pa (over A).
struct PalmForce {
  double force = 0, expected = 0, area = 0;  // Pa, Pa, m^2
};
PalmForce palm_force(const std::vector<FluidEngine::GhostImpulse>& ghosts, const Vec3f& palm,
                     double level, double rho0_g, double frame_dt, float half_x, float half_y,
                     float cos_max) {
  PalmForce pf;
  double f = 0, fe = 0;
  for (const FluidEngine::GhostImpulse& gi : ghosts) {
    if (gi.hand != 0 || std::fabs(gi.position.x - palm.x) > half_x ||
        std::fabs(gi.position.y - palm.y) > half_y)
      continue;
    if (gi.position.z >= palm.z || gi.normal.z >= -cos_max) continue;
    f += gi.impulse.z / frame_dt;
    const double a = gi.area * -gi.normal.z;
    pf.area += a;
    fe += rho0_g * (level - gi.position.z) * a;
  }
  if (pf.area > 0) pf.force = f / pf.area, pf.expected = fe / pf.area;
  return pf;
}

// The series' mean, expected value and fluctuations into h (palm, palm_expected, fluct, jump,
// sample_fluct).
void palm_statistics(PalmSeries& s, HeldFigures& h) {
  const double cnt = static_cast<double>(std::max<std::size_t>(s.mean.size(), 1));
  h.palm_expected = s.expected / cnt;
  for (const double v : s.mean) h.palm += v / cnt;
  for (const double v : s.mean) h.fluct += (v - h.palm) * (v - h.palm) / cnt;
  h.fluct = std::sqrt(h.fluct) / h.palm;
  for (std::size_t k = 1; k < s.mean.size(); ++k)
    h.jump = std::max(h.jump, std::fabs(s.mean[k] - s.mean[k - 1]) / h.palm);
  std::vector<double> rel;
  for (auto& [key, v] : s.per_sample) {
    v.resize(s.mean.size(), 0.0);
    double mean = 0, var = 0;
    for (const double x : v) mean += x / cnt;
    for (const double x : v) var += (x - mean) * (x - mean) / cnt;
    if (mean > 0) rel.push_back(std::sqrt(var) / mean);
  }
  std::sort(rel.begin(), rel.end());
  h.sample_fluct = rel.empty() ? 0 : rel[rel.size() / 2];
}

void print_held(const FluidConfig& c, const HeldFigures& h, double volume) {
  const double rho0_g = c.material.rest_density * 9.81;
  std::printf("%s, %d substeps%s%s: D %.1f mm (level up %.2f mm): hand %.3f N, floor - weight %.3f N, "
              "rho0 g A rise %.3f N, rho0 g V_capsules %.3f N (V %.0f cm^3); palm %.0f Pa vs "
              "rho0 g depth %.0f Pa (%.3f); frame to frame std/mean %.3f, largest jump %.3f, per "
              "sample %.3f; %d particles inside the hand; near it fastest %.3f m/s, away %.3f, "
              "towards %.3f m/s\n",
              c.material.name.c_str(), c.material.substeps, c.hand.density_coupling ? "" : ", contact only",
              c.hand.inelastic_contact ? ", inelastic" : "",
              1e3 * h.depth, 1e3 * h.rise, h.force, h.floor_load - h.weight, h.displaced, h.archimedes,
              1e6 * volume, h.palm, h.palm_expected, h.palm / h.palm_expected, h.fluct, h.jump,
              h.sample_fluct, h.inside, h.near_max, h.away_max, h.towards_max);
  std::printf("  the water's force on the palm over its projected area / rho0 g depth: 7 x 5 cm underside "
              "%.3f (%.0f vs %.0f Pa; one frame %.3f-%.3f; against rho0 g D at the palm's lower surface "
              "%.3f), 10 x 7 cm %.3f, 7 x 5 cm within 25 degrees of down %.3f; palm reading / force %.3f\n",
              h.palm_force / h.palm_force_expected, h.palm_force, h.palm_force_expected,
              h.palm_force_min, h.palm_force_max, h.palm_force / (rho0_g * h.depth),
              h.wide_force / h.wide_force_expected, h.bottom_force / h.bottom_force_expected,
              (h.palm / h.palm_expected) / (h.palm_force / h.palm_force_expected));
}


}  // namespace

std::vector<HeldFigures> hold_still(FluidConfig c, const std::vector<float>& depths, double hold,
                                    double average) {
  std::vector<HeldFigures> out;
  c.max_particles = 4000;
  auto e = make_engine(c);
  if (!e) return out;
  EXPECT_FALSE(e->load_scene(box_pool(kStillX0, kStillY0, kStillX1, kStillY1, kStillDepth)));
  run(*e, 45);
  const float d = c.particle_spacing;
  const double surface0 = free_surface(snapshot(*e), d);
  const double rho0 = c.material.rest_density, g = 9.81;
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  float z = static_cast<float>(surface0) + 0.01f + kPalmRadius;  // the palm's centre line
  std::uint64_t id = 0;
  HandFrame prev = still_hand({0, 0, z}, id);
  const auto step = [&] {
    const HandFrame now = still_hand({0, 0, z}, ++id);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
  };
  for (const float depth : depths) {
    const float target = static_cast<float>(surface0) - depth + kPalmRadius;
    while (z > target) {
      z = std::max(target, z - static_cast<float>(0.1 * dt));
      step();
    }
    const int frames = static_cast<int>(hold * 90), averaged = static_cast<int>(average * 90);
    HeldFigures h;
    double surface = 0;
    PalmSeries palm;
    hand::HandCapsules caps;
    hand::hand_capsules(prev.hands[0], caps);
    for (int k = 0; k < frames; ++k) {
      step();
      EXPECT_EQ(st.non_finite, 0);
      if (k < frames - averaged) continue;
      const ParticleSnapshot now = snapshot(*e);
      const double level = free_surface(now, d);
      near_hand_speeds(now, caps, h);
      surface += level;
      h.force += st.hand_force.z;
      h.floor_load -= st.wall_force.z;
      record_palm(field, level, rho0 * g, palm);
      const std::vector<FluidEngine::GhostImpulse> ghosts = e->hand_ghost_impulses();
      const Vec3f centre = prev.hands[0].joint(HandJoint::Palm).position;
      const PalmForce under = palm_force(ghosts, centre, level, rho0 * g, dt, 0.035f, 0.025f, 0.0f);
      const PalmForce wide = palm_force(ghosts, centre, level, rho0 * g, dt, 0.05f, 0.035f, 0.0f);
      const PalmForce bottom = palm_force(ghosts, centre, level, rho0 * g, dt, 0.035f, 0.025f,
                                          std::cos(25.0f * std::numbers::pi_v<float> / 180.0f));
      const double r = under.force / under.expected;
      h.palm_force_min = palm.mean.size() == 1 ? r : std::min(h.palm_force_min, r);
      h.palm_force_max = std::max(h.palm_force_max, r);
      h.palm_force += under.force, h.palm_force_expected += under.expected;
      h.wide_force += wide.force, h.wide_force_expected += wide.expected;
      h.bottom_force += bottom.force, h.bottom_force_expected += bottom.expected;
    }
    const double cnt = static_cast<double>(std::max<std::size_t>(palm.mean.size(), 1));
    surface /= cnt;
    h.force /= cnt;
    h.floor_load /= cnt;
    for (double* x : {&h.palm_force, &h.palm_force_expected, &h.wide_force, &h.wide_force_expected,
                      &h.bottom_force, &h.bottom_force_expected})
      *x /= cnt;
    palm_statistics(palm, h);
    h.depth = surface - (z - kPalmRadius);
    h.rise = surface - surface0;
    h.weight = e->particle_mass() * st.particles * g;
    const double volume = submerged_volume(prev, static_cast<float>(surface));
    h.archimedes = rho0 * g * volume;
    h.displaced = rho0 * g * kStillArea * h.rise;
    h.inside = particles_inside(snapshot(*e), prev);
    print_held(c, h, volume);
    out.push_back(h);
  }
  return out;
}

FluidConfig still_water(bool density_coupling) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  EXPECT_TRUE(lib && lib->find("water") != nullptr);
  FluidConfig c = pool_config();
  if (lib && lib->find("water") != nullptr) c.material = *lib->find("water");
  c.hand.density_coupling = density_coupling;
  // the default (hand.closed_contact): radially the hand lets the water in (bench/RESULTS.md)
  return c;
}

}  // namespace sonoflow::fluid::test
