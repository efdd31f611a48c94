#include "output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <system_error>

#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

// The error of a failed write to `path`, with the system's reason.
Status WriteError(const std::string& path, int error) {
  return Status::IoError(fmt::format("cannot write {}: {}", QuoteForMessage(path),
                                     std::generic_category().message(error)));
}

// Writes all of `content` to the open descriptor `fd`; the errno of a
// failure, else 0.
int WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// A FIFO or a character device (/dev/null, a terminal): written through in
// place, never replaced.
Status WriteThrough(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return WriteError(path, errno);
  const int error = WriteAll(fd, content);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (error != 0 || closed != 0) return WriteError(path, error != 0 ? error : closed);
  return Status::Ok();
}

// A regular file, or a path where nothing is yet: a temporary file beside it
// renamed over it, so that a failed run never leaves a partial file. An
// existing file keeps its permissions; a new one gets 0666 less the umask.
Status WriteReplacing(const std::string& path, const std::string& content,
                      std::optional<mode_t> mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return WriteError(path, errno);
  int error = WriteAll(fd, content);
  // mkstemp makes the file 0600: a new file gets what open() would give it.
  if (!mode) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (error == 0 && ::fchmod(fd, *mode & 07777) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    return WriteError(path, error);
  }
  return Status::Ok();
}

// Where the symbolic link `link` points, as a path usable from here (a
// relative target is relative to the link's directory).
Result<std::string> LinkTarget(const std::string& link) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(link, ec);
  if (ec) return WriteError(link, ec.value());
  if (target.is_absolute()) return target.string();
  return (std::filesystem::path(link).parent_path() / target).string();
}

// `path` (not a link) by its type `mode`; `shown` is the path the user gave.
Status WriteByType(const std::string& path, mode_t mode, const std::string& shown,
                   const std::string& content) {
  if (S_ISREG(mode)) return WriteReplacing(path, content, mode);
  if (S_ISFIFO(mode) || S_ISCHR(mode)) return WriteThrough(path, content);
  const char* what = S_ISDIR(mode)    ? "a directory"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a regular file";
  return Status::IoError(
      fmt::format("cannot write {}: {} is {}; give a regular file, a FIFO or a character device",
                  QuoteForMessage(shown), path == shown ? "it" : QuoteForMessage(path), what));
}

// A symbolic link: what it leads to is written, never the link itself.
Status WriteThroughLink(const std::string& path, const std::string& content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    // The kernel follows the links (also /proc/self/fd/N, whose text may be
    // "pipe:[...]"): a FIFO or device is opened through them, a regular file
    // is replaced at its real path.
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return WriteThrough(path, content);
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    if (ec) return WriteError(path, ec.value());
    return WriteByType(real.string(), st.st_mode, path, content);
  }
  if (errno != ENOENT) return WriteError(path, errno);
  // A dangling link: follow it name by name to the file it would be, and
  // create that file (at most as many links as the system follows).
  constexpr int kMaxLinks = 40;
  std::string target = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    TESSERA_ASSIGN_OR_RETURN(target, LinkTarget(target));
    if (::lstat(target.c_str(), &st) != 0) {
      if (errno == ENOENT) return WriteReplacing(target, content, std::nullopt);
      return WriteError(path, errno);
    }
    if (!S_ISLNK(st.st_mode)) return WriteError(path, ENOENT);  // a missing directory
  }
  return WriteError(path, ELOOP);
}

}  // namespace

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("cannot write to stdout");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return WriteReplacing(path, content, std::nullopt);
    return WriteError(path, errno);
  }
  if (S_ISLNK(st.st_mode)) return WriteThroughLink(path, content);
  return WriteByType(path, st.st_mode, path, content);
}

}  // namespace tessera::cli
