// Children: the processes a rehearsal or a router agent starts (agents,
// HAProxy), each in a process group of its own (which its own children
// join), all stopped together: SIGTERM to every group, then SIGKILL.
//
// Thread-safety: one owner; Wait is a static function of a pid.
#ifndef TESSERA_SERVING_CHILDREN_H_
#define TESSERA_SERVING_CHILDREN_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::serving {

class Children {
 public:
  Children() = default;
  ~Children() { StopAll(); }
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;

  // Starts argv (found on PATH) with `env` added to this process's
  // environment, stdin from /dev/null, stdout and stderr appended to `log`.
  Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log);
  // Waits for `pid` to exit: its exit code (128 + signal when killed), or -1
  // after `timeout_s` (0: a look, no wait).
  static int Wait(pid_t pid, double timeout_s);
  // Stops the group of `pid` (SIGTERM, then SIGKILL after 200 ms) and forgets it.
  void Stop(pid_t pid);
  void StopAll();

 private:
  std::vector<pid_t> groups_;
};

// Writes `content` to `path` (replacing it); IoError naming it.
Status WriteTextFile(const std::string& path, const std::string& content);
// The last 600 characters of the file at `path` (a log), "" when unreadable.
std::string Tail(const std::string& path);

}  // namespace tessera::serving

#endif  // TESSERA_SERVING_CHILDREN_H_
