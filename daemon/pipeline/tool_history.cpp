#include "daemon/pipeline/tool_history.hpp"

#include "daemon/pipeline/pose_blend.hpp"

namespace sonoflow::daemon {

void ToolBlend::blend(const ToolPoseSample& earlier, const ToolPoseSample& later, float s,
                      std::int64_t time_ns, ToolPoseSample& out) noexcept {
  out.time_ns = time_ns;
  out.position = lerp(earlier.position, later.position, s);
  out.orientation = nlerp(earlier.orientation, later.orientation, s);
}

}  // namespace sonoflow::daemon
