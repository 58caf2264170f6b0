#pragma once
// A file mapped into memory and shared between sonoflowd and its monitors (the status file and
// the scene file). The daemon builds it under a temporary name and renames it into place, so a
// reader never maps a half-made file; readers map it read-only and notice when a newer daemon has
// put another file at the same path.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace sonoflow::daemon::shm {

class SharedFile {
 public:
  // Creates `<path>.new.<pid>` (mode 0640 whatever the umask) of `size` zero bytes, mapped
  // read-write; publish() moves it to `path`. `what` names the file in errors ("status file").
  static std::optional<SharedFile> create(const std::string& path, std::size_t size, const char* what,
                                          std::string& error);
  // Maps an existing file read-only. Refuses files shorter than `min_size`, naming `what`.
  static std::optional<SharedFile> open_read_only(const std::string& path, std::size_t min_size,
                                                  const char* what, std::string& error);

  SharedFile(SharedFile&& other) noexcept;
  SharedFile& operator=(SharedFile&&) = delete;
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  ~SharedFile();  // unmaps; removes the temporary file if it was never published

  // Renames the temporary file into place (replacing any older file there).
  bool publish(std::string& error);
  // Removes the file at the path if it still holds `generation` at byte `generation_offset`:
  // it is ours, not a newer daemon's that replaced it.
  void unlink_if_ours(std::size_t generation_offset, std::uint64_t generation) const;
  // True when the path now names another file, or none (readers: detach and attach again).
  bool replaced() const noexcept;

  void* data() const noexcept { return memory_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  SharedFile(std::string path, std::string temp_path, void* memory, std::size_t size, ino_t inode)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), memory_(memory), size_(size), inode_(inode) {}
  std::string path_;
  std::string temp_path_;  // non-empty until published
  void* memory_;
  std::size_t size_;
  ino_t inode_;
};

// A random generation number that tells one daemon run's file from the next one's.
std::uint64_t new_generation();

}  // namespace sonoflow::daemon::shm
