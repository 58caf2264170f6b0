#include "daemon/shm/shared_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

namespace sonoflow::daemon::shm {
namespace {

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

std::optional<SharedFile> SharedFile::create(const std::string& path, std::size_t size, const char* what,
                                             std::string& error) {
  const std::string temp = path + ".new." + std::to_string(getpid());
  unlink(temp.c_str());
  const int fd = open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) {
    error = errno_text(std::string("cannot create ") + what, temp);
    return std::nullopt;
  }
  fchmod(fd, 0640);  // exact mode whatever the umask
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    error = errno_text(std::string("cannot size ") + what, temp);
    close(fd);
    unlink(temp.c_str());
    return std::nullopt;
  }
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    error = errno_text(std::string("cannot map ") + what, temp);
    unlink(temp.c_str());
    return std::nullopt;
  }
  return SharedFile(path, temp, memory, size, 0);
}

std::optional<SharedFile> SharedFile::open_read_only(const std::string& path, std::size_t min_size,
                                                     const char* what, std::string& error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno_text("cannot open", path);
    return std::nullopt;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < min_size) {
    error = path + ": too small to be a sonoflow " + what;
    close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* memory = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    error = errno_text("cannot map", path);
    return std::nullopt;
  }
  return SharedFile(path, {}, memory, size, st.st_ino);
}

SharedFile::SharedFile(SharedFile&& other) noexcept
    : path_(std::move(other.path_)), temp_path_(std::move(other.temp_path_)),
      memory_(std::exchange(other.memory_, nullptr)), size_(other.size_), inode_(other.inode_) {
  other.temp_path_.clear();
}

SharedFile::~SharedFile() {
  if (memory_ != nullptr) munmap(memory_, size_);
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
}

bool SharedFile::publish(std::string& error) {
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    error = errno_text("cannot move " + temp_path_ + " into place at", path_);
    return false;
  }
  temp_path_.clear();
  struct stat st {};
  if (stat(path_.c_str(), &st) == 0) inode_ = st.st_ino;
  return true;
}

void SharedFile::unlink_if_ours(std::size_t generation_offset, std::uint64_t generation) const {
  if (!temp_path_.empty()) return;  // never published: the path belongs to someone else
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::uint64_t found = 0;
  if (pread(fd, &found, sizeof found, static_cast<off_t>(generation_offset)) ==
          static_cast<ssize_t>(sizeof found) &&
      found == generation) {
    unlink(path_.c_str());
  }
  close(fd);
}

bool SharedFile::replaced() const noexcept {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) return true;
  return st.st_ino != inode_;
}

std::uint64_t new_generation() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ static_cast<std::uint64_t>(getpid());
}

}  // namespace sonoflow::daemon::shm
