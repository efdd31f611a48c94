// ControlServer: the HTTP face of a ControlPlane (docs/control-plane.md),
// on cpp-httplib. It maps each HTTP request to ControlPlane::Handle, and
// adds what belongs to HTTP: bearer-token checks on mutations (constant-time
// compare), the 1 MiB body limit (413), long-polls of
// /v1/nodes/{node}/plan (ControlPlane::WaitForVersion), the request-latency
// histogram appended to /metrics, the OpenAPI document at /v1/openapi.json
// and the dashboard's static files (embedded in the binary, served at / and
// /static/...), and the scheduler extender's routes (/scheduler/..., which
// take no token: kube-scheduler sends none).
//
// Start refuses (InvalidArgument) a listen address that is not loopback
// (127.0.0.0/8, ::1, localhost) when no token is given, and an address it
// cannot bind (IoError naming it).
//
// Thread-safety: Start once; Stop from any thread (also a signal-handling
// thread); the server's worker threads call the ControlPlane concurrently.
#ifndef TESSERA_CONTROL_SERVER_H_
#define TESSERA_CONTROL_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/control/control_plane.h"
#include "tessera/k8s/scheduler_extender.h"
#include "tessera/status.h"

namespace tessera {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port (tests); port() says which
  std::string token;  // empty: mutations need no token (loopback only)
  size_t max_body_bytes = 1 << 20;
  int threads = 8;  // worker threads (long-polls hold one each)
  // HTTP keep-alive: a connection serves at most this many requests and is
  // closed after this long idle (an idle connection holds a worker thread).
  size_t keep_alive_max_requests = 1000;
  int keep_alive_timeout_s = 5;
  // The scheduler extender served under /scheduler/ (docs/kubernetes.md);
  // nullptr: those routes answer 404. Must outlive the server.
  SchedulerExtender* extender = nullptr;
};

// Splits "HOST:PORT" ("127.0.0.1:8080", "[::1]:8080", "localhost:0");
// InvalidArgument naming `flag` otherwise.
Status ParseListenAddress(const std::string& text, const std::string& flag, ServerOptions& options);

class ControlServer {
 public:
  // Binds and starts serving on background threads. `plane` must outlive
  // the server.
  static Result<std::unique_ptr<ControlServer>> Start(ControlPlane& plane, ServerOptions options);
  ~ControlServer();  // stops

  int port() const;
  // Stops accepting, wakes long-polls (ControlPlane::Shutdown) and joins.
  void Stop();
  // Blocks until Stop.
  void Wait();

  class Impl;

 private:
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_SERVER_H_
