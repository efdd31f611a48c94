// HaproxyRuntime: HAProxy 2.6's runtime API on its stats socket (the
// `stats socket ... level admin` line FormatHaproxyConfig writes), as the
// rehearsal moves a router through a transition: a server is drained before
// its process stops, put in maintenance once nothing of it is outstanding,
// and given its weight and made ready once its process answers.
//
// One command per connection (HAProxy's non-interactive mode): the command
// and a newline go out, the answer is everything until HAProxy closes. A
// `set server` command succeeds with an empty answer, `add server` and
// `del server` with their own sentence; any other text is HAProxy's reason,
// returned as the error.
//
// Thread-safety: const methods open their own connection; safe to share.
#ifndef TESSERA_SERVING_HAPROXY_RUNTIME_H_
#define TESSERA_SERVING_HAPROXY_RUNTIME_H_

#include <sys/types.h>

#include <atomic>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serving/children.h"
#include "tessera/status.h"

namespace tessera::serving {

// What a server holds now (`show stat`): requests in its own queue and
// sessions (requests) in flight to it.
struct ServerLoad {
  long queued = 0;
  long sessions = 0;
  std::string status;  // UP, DOWN, MAINT, DRAIN, ...
};

enum class ServerState { kReady, kDrain, kMaint };

class HaproxyRuntime {
 public:
  explicit HaproxyRuntime(std::string socket_path, double timeout_s = 5);

  // The answer to one command; IoError when the socket does not answer.
  Result<std::string> Command(std::string_view command) const;

  // `set server B/S state ready|drain|maint`.
  Status SetState(std::string_view backend, std::string_view server, ServerState state) const;
  // `set server B/S weight W` (0..256).
  Status SetWeight(std::string_view backend, std::string_view server, int weight) const;
  // `set server B/S health up`: the server's check passed as far as the
  // caller knows (the agent waited for its readiness), so that it takes
  // requests at once instead of after its next check.
  Status SetHealthUp(std::string_view backend, std::string_view server) const;

  // `add server B/S ARGS disabled` (a dynamic server, in maintenance; ARGS
  // as FormatServerArgs writes them), then `enable health B/S` so that its
  // checks run once it is made ready.
  Status AddServer(std::string_view backend, std::string_view server, std::string_view args) const;
  // `del server B/S`: HAProxy deletes only a server in maintenance with
  // nothing in flight.
  Status DelServer(std::string_view backend, std::string_view server) const;

  // Every server's load, keyed by (backend, server).
  Result<std::map<std::pair<std::string, std::string>, ServerLoad>> Servers() const;
  // Each frontend's requests received so far, keyed by its name (`show
  // stat`'s req_tot): counted as they arrive, before any queue, where the
  // request log counts a request when its answer ends.
  Result<std::map<std::string, long>> FrontendRequests() const;

  // Until nothing is queued for or in flight at any of `servers` (backend,
  // server), or `halt` is set; IoError naming a server HAProxy does not
  // list, or one still busy after `timeout_s`.
  Status WaitIdle(const std::vector<std::pair<std::string, std::string>>& servers, double timeout_s,
                  const std::atomic<bool>* halt) const;

 private:
  // The command, answered with exactly `success` (after trailing blanks);
  // any other answer is HAProxy's reason, an IoError.
  Status Expect(const std::string& command, std::string_view success = "") const;

  std::string socket_path_;
  double timeout_s_;
};

// The first line of `haproxy -v` (run by `children`, its output in `log`);
// InvalidArgument when the binary does not run.
Result<std::string> HaproxyVersion(const std::string& binary, const std::string& log,
                                   Children& children);

// The most connections (HAProxy's global maxconn) up to `wanted` that this
// process's hard file limit lets a child HAProxy hold: each connection takes
// two descriptors, and HAProxy keeps some for itself.
int HaproxyConnectionLimit(int wanted);

// InvalidArgument naming the first of `ports` on `address` (empty: every
// address) that something already listens on. HAProxy binds with
// SO_REUSEPORT, so a second one on a port a first still holds starts
// without complaint and the kernel splits the connections between them:
// measured, a router left by an interrupted run took about a third of a
// later rehearsal's requests to its own stale servers.
Status CheckPortsFree(const std::vector<int>& ports, const std::string& address);

// Waits until HAProxy (`pid`, logging to `log`) accepts connections on every
// one of `ports` on 127.0.0.1, then for its first health checks; IoError
// with the log's tail when it exits or does not listen within 20 s.
Status WaitForHaproxy(const std::vector<int>& ports, pid_t pid, const std::string& log);

// The servers of `show stat`'s CSV answer (header "# pxname,svname,...");
// InvalidArgument for an answer without the columns it needs.
Result<std::map<std::pair<std::string, std::string>, ServerLoad>> ParseShowStat(
    std::string_view csv);
// The FRONTEND rows' req_tot of the same answer, by frontend name;
// InvalidArgument as ParseShowStat.
Result<std::map<std::string, long>> ParseFrontendRequests(std::string_view csv);

}  // namespace tessera::serving

#endif  // TESSERA_SERVING_HAPROXY_RUNTIME_H_
