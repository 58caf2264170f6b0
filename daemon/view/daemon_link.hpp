#pragma once
// The viewer's read-only view of one daemon: its status file and its scene file, attached and
// re-attached as the daemon starts, stops and restarts. Never writes to either.
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/scene/scene_file.hpp"
#include "daemon/status/status_file.hpp"

namespace sonoflow::daemon::view {

class DaemonLink {
 public:
  DaemonLink(std::string status_path, std::string scene_path);

  // Attaches what is not attached, and re-attaches what the daemon replaced (a restart makes
  // new files; a stopped daemon removed them). Returns true when anything changed.
  bool refresh();

  const status::StatusReader* status() const noexcept { return status_.get(); }
  const scene::SceneReader* scene() const noexcept { return scene_.get(); }
  // Why the status or the scene is not attached (empty when both are).
  const std::string& problem() const noexcept { return problem_; }
  // Times the status file was attached; more than one means the viewer followed a restart.
  std::uint64_t attachments() const noexcept { return attachments_; }
  const std::string& status_path() const noexcept { return status_path_; }
  const std::string& scene_path() const noexcept { return scene_path_; }

 private:
  std::string status_path_, scene_path_;
  std::unique_ptr<status::StatusReader> status_;
  std::unique_ptr<scene::SceneReader> scene_;
  std::string problem_;
  std::uint64_t attachments_ = 0;
};

}  // namespace sonoflow::daemon::view
