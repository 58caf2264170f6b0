#include "daemon/view/daemon_link.hpp"

namespace sonoflow::daemon::view {

DaemonLink::DaemonLink(std::string status_path, std::string scene_path)
    : status_path_(std::move(status_path)), scene_path_(std::move(scene_path)) {}

bool DaemonLink::refresh() {
  bool changed = false;
  if (status_ && status_->replaced()) {
    status_.reset();
    changed = true;
  }
  if (scene_ && scene_->replaced()) {
    scene_.reset();
    changed = true;
  }
  std::string status_problem, scene_problem;
  if (!status_) {
    status_ = status::StatusReader::attach(status_path_, status_problem);
    if (status_) {
      ++attachments_;
      changed = true;
    }
  }
  if (!scene_) {
    scene_ = scene::SceneReader::attach(scene_path_, scene_problem);
    if (scene_) changed = true;
  }
  std::string problem;
  if (!status_) problem = "waiting for sonoflowd: " + status_problem;
  else if (!scene_) problem = "no scene from sonoflowd: " + scene_problem;
  if (problem != problem_) changed = true;
  problem_ = problem;
  return changed;
}

}  // namespace sonoflow::daemon::view
