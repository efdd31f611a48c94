// Supervisor: the processes the node agent starts (MPS control daemons and
// serving processes), found again by the environment they were given, so
// that an agent killed at any point and restarted sees every process any
// earlier agent started, including one whose start it never saw finish.
//
// Every process is a "unit" named by the agent ("mps:gpu0-start4",
// "serve:<process name>"). Its environment carries
//   TESSERA_AGENT_STATE_DIR = the agent's state directory (absolute),
//   TESSERA_AGENT_UNIT      = the unit's name,
//   TESSERA_AGENT_PLACE     = "gpu<g>-start<s>", the MIG instance it runs on,
//   TESSERA_AGENT_SPEC      = a fingerprint of its argv and environment,
// which its children inherit (a daemon that forks away is still found).
// Scan reads /proc/<pid>/environ of every process: what carries this state
// directory is the node's observed set of units. A unit is started in a new
// session (setsid) with stdin from /dev/null and stdout and stderr appended
// to <state-dir>/logs/<unit>.log; an exec failure is reported by Start.
//
// Thread-safety: one Supervisor per agent.
#ifndef TESSERA_AGENT_SUPERVISOR_H_
#define TESSERA_AGENT_SUPERVISOR_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera::agent {

struct UnitSpec {
  std::string name;
  std::string place;  // "gpu<g>-start<s>"
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // added to the agent's
  // A fingerprint of argv and env: a running unit whose fingerprint differs
  // runs something else and is replaced.
  std::string Fingerprint() const;
};

struct RunningUnit {
  std::string name;
  std::string place;
  std::string spec;            // its TESSERA_AGENT_SPEC
  std::string pipe_directory;  // its CUDA_MPS_PIPE_DIRECTORY
  std::vector<int> pids;       // every live process carrying the unit
};

class Supervisor {
 public:
  Supervisor(std::string state_dir, const Clock& clock);

  // Reaps finished children, then returns the live units by name.
  std::map<std::string, RunningUnit> Scan();

  // Starts `unit` (fork, setsid, exec). IoError naming the unit and the
  // command when the exec fails (no such program, not executable).
  Status Start(const UnitSpec& unit);

  // Runs `argv` in `env` with `input` on its stdin and waits up to
  // `timeout_s` for it to exit; an error names the command and its exit.
  Status RunToEnd(const std::vector<std::string>& argv,
                  const std::vector<std::pair<std::string, std::string>>& env,
                  const std::string& input, double timeout_s);

  // SIGTERM to every process of `unit`, then waits up to `grace_s` for them
  // to exit. Returns true when none is left.
  bool Terminate(const std::string& unit, double grace_s);
  // SIGKILL to whatever is left of `unit`; waits (up to 10 s) until nothing
  // of it lives. IoError when something still does.
  Status Kill(const std::string& unit);

  // Polls http://127.0.0.1:<port>/v2/health/ready until it answers 200,
  // the unit dies, or `timeout_s` passes; the error says which, with the
  // last lines of the unit's log.
  Status WaitReady(const std::string& unit, int port, double timeout_s);

  // The last `lines` lines of the unit's log, for error messages.
  std::string LogTail(const std::string& unit, int lines = 3) const;
  std::string LogPath(const std::string& unit) const;

 private:
  bool Alive(const std::string& unit);

  std::string state_dir_;
  const Clock* clock_;
};

}  // namespace tessera::agent

#endif  // TESSERA_AGENT_SUPERVISOR_H_
