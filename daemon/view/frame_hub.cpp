#include "daemon/view/frame_hub.hpp"

namespace sonoflow::daemon::view {

void FrameHub::publish(FrameKind kind, std::string payload) {
  while (payload.size() % 4 != 0) payload.push_back(' ');  // JSON allows trailing spaces
  {
    std::lock_guard lock(mutex_);
    const auto k = static_cast<std::size_t>(kind);
    frames_[k] = std::move(payload);
    ++versions_[k];
  }
  changed_.notify_all();
}

bool FrameHub::next(Seen& seen, std::string& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return closed_ || seen != versions_; });
  if (closed_) return false;
  for (std::size_t k = 1; k < kFrameKinds; ++k) {
    if (seen[k] == versions_[k]) continue;
    seen[k] = versions_[k];
    const auto kind = static_cast<std::uint32_t>(k);
    const auto bytes = static_cast<std::uint32_t>(frames_[k].size());
    out.append(reinterpret_cast<const char*>(&kind), 4);
    out.append(reinterpret_cast<const char*>(&bytes), 4);
    out += frames_[k];
  }
  return true;
}

std::string FrameHub::latest(FrameKind kind) const {
  std::lock_guard lock(mutex_);
  return frames_[static_cast<std::size_t>(kind)];
}

void FrameHub::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

}  // namespace sonoflow::daemon::view
