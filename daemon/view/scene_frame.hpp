#pragma once
// The scene as the page receives it: one binary message per scene publication,
//
//   [u32 meta_bytes][meta: UTF-8 JSON, padded with spaces to a multiple of 4][arrays]
//
// The JSON carries the small things (hands, container, foci, counts, the reconstruction error)
// and, under "arrays", the byte offset (from the start of the arrays) and element count of each
// typed array: particle positions (float32 x,y,z), particle colours (uint8 r,g,b,flags),
// contact samples and target samples (float32 x,y,z,p), reconstructed pressure (float32 per
// target), STM path vertices (float32 x,y,z,p*, paths back to back) and the focus trail
// (float32 x,y,z,intensity). Little-endian, each array 4-byte aligned, so the page views them
// in place (new Float32Array(buffer, offset, n)). Particles go binary because they are most of
// the bytes: 4,096 particles are 64 KiB a frame this way, several times that as JSON.
#include <string>

#include "daemon/scene/scene_file.hpp"

namespace sonoflow::daemon::view {

// Either section may be null (not published yet).
std::string encode_scene_frame(const scene::FluidScene* fluid, const scene::HapticScene* haptic);

}  // namespace sonoflow::daemon::view
