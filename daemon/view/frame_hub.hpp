#pragma once
// The newest frame of each kind, handed from the sampler thread to every open page stream.
// Streams never queue old frames: a slow page skips to the newest (what a live view wants).
//
// On the wire each frame is [u32 kind][u32 bytes][payload, bytes long, a multiple of 4].
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace sonoflow::daemon::view {

enum class FrameKind : std::uint32_t { Status = 1, Scene = 2, Viewer = 3 };
inline constexpr int kFrameKinds = 4;  // index by kind; 0 unused

class FrameHub {
 public:
  using Seen = std::array<std::uint64_t, kFrameKinds>;

  void publish(FrameKind kind, std::string payload);
  // Waits up to `timeout` for frames newer than `seen`; appends them (wire format) to `out`
  // and updates `seen`. False when closed.
  bool next(Seen& seen, std::string& out, std::chrono::milliseconds timeout);
  std::string latest(FrameKind kind) const;
  void close();

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::array<std::string, kFrameKinds> frames_;
  Seen versions_{};
  bool closed_ = false;
};

}  // namespace sonoflow::daemon::view
