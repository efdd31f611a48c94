// TestProcesses: the processes a whole-process test starts (etcd, kube-apiserver,
// `tessera serve` replicas, node agents), each in its own process group with
// stdout and stderr in <log_dir>/<name>.log, killed (SIGKILL, by
// PR_SET_PDEATHSIG) when the thread that started it ends, so a test process
// that dies leaves nothing behind. The destructor stops every one still
// running, the last started first: SIGTERM to its group, up to 5 s for it
// to end, then SIGKILL to the group.
//
// Thread-safety: none; one thread owns a TestProcesses.
#ifndef TESSERA_TESTS_TEST_PROCESSES_H_
#define TESSERA_TESTS_TEST_PROCESSES_H_

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace httplib {
class Client;
}

namespace tessera::testing {

// `count` distinct free TCP ports of 127.0.0.1: each stays bound until all
// are chosen, so none is chosen twice.
Result<std::vector<int>> FreePorts(int count);

// "" when GET `path` answers 200, otherwise what it answered.
std::string ProbeHttp(httplib::Client& client, const std::string& path);
// A short connection timeout and a 5 s read timeout, for probes.
void SetProbeTimeouts(httplib::Client& client);

class TestProcesses {
 public:
  explicit TestProcesses(std::filesystem::path log_dir);
  ~TestProcesses();
  TestProcesses(const TestProcesses&) = delete;
  TestProcesses& operator=(const TestProcesses&) = delete;

  // Starts `argv` (argv[0] a path) as `name`, a name not running already;
  // IoError when it cannot be run.
  Status Launch(const std::string& name, const std::vector<std::string>& argv);
  // Runs `argv` to its end, its output in <log>.log; IoError with the log
  // tail unless it exits 0.
  Status Run(const std::string& log, const std::vector<std::string>& argv);
  // Calls `probe` every 100 ms until it returns "" (ready; otherwise what
  // it saw). IoError with the probe's last answer and the log tail when
  // `name` exits first or `timeout_s` passes.
  Status WaitReady(const std::string& name, double timeout_s,
                   const std::function<std::string()>& probe) const;
  // SIGTERM, the grace, SIGKILL, reaped: as the destructor does.
  Status Stop(const std::string& name);
  // `signal` to the group of `name`; SIGKILL also reaps it and forgets it.
  Status Signal(const std::string& name, int signal);
  bool Running(const std::string& name) const;
  // Launched and not yet stopped (it may have ended by itself).
  bool Started(const std::string& name) const { return Find(name) != nullptr; }

  std::filesystem::path LogPath(const std::string& name) const;
  // The last 20 lines of <name>.log, headed by its path.
  std::string LogTail(const std::string& name) const;

 private:
  struct Child {
    std::string name;
    pid_t pid = 0;  // also its process group's ID
  };
  const Child* Find(const std::string& name) const;

  std::filesystem::path log_dir_;
  std::vector<Child> children_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TEST_PROCESSES_H_
