// RouterAgent: the router beside `tessera serve` (`tessera router-agent`,
// docs/routing.md, "The router agent"). It runs HAProxy with the
// configuration deploy writes (router_config.h) and keeps it in step with
// the control plane:
//
//   GET  /v1/routers/{name}/work?since=V&wait=W
//     every server HAProxy should hold, by backend (name, node, port,
//     weight, state ready|drain|maint) and the agent's running step. The
//     agent adds the servers HAProxy lacks (the runtime API's `add server`,
//     FormatServerArgs), deletes those no longer listed (in maintenance,
//     idle), and sets weights and states. A "drain" step is acknowledged
//     once its draining servers are idle and in maintenance; a "ready" step
//     once its servers are ready (their health set up: the node agents
//     waited for each process's readiness before their steps were done):
//   POST /v1/routers/{name}/status {"transition": {"id", "phase", "step", "ok"}}
//
//   Every report_interval_s it posts what HAProxy's request log
//   (router_observer.h) counted per service: the rate, the share within
//   the service's SLO and the p99, in the plan's time (rates x dilation,
//   latencies / dilation):
//   POST /v1/routers/{name}/status {"observed": {service: {"rate_rps",
//   "requests", "slo_compliance", "p99_ms"}}} ("requests": the count the
//   rate comes from, which lets the control plane tell a move from noise)
//
// HAProxy starts with the first work that holds a backend: one frontend per
// service from frontend_base_port in the work's order; a work with a
// service it has no frontend for restarts it with a new configuration (the
// services listed before keep their ports). Each server's address is its
// node's (`nodes`: a host, and the first serving port of the node when its
// agent was given another than the plan's: ports keep their offset from
// the plan's base port); a node not listed is reached by its name.
//
// Errors: network errors and 5xx answers are retried (control_client.h);
// Run returns an error for what retrying does not mend: a 4xx to the poll
// (404: the control plane names no such router), HAProxy refusing its
// configuration or a runtime command, or HAProxy exiting.
//
// Thread-safety: Run from one thread (it starts the reporting thread);
// Stop from any other.
#ifndef TESSERA_ROUTER_AGENT_H_
#define TESSERA_ROUTER_AGENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tessera/status.h"

namespace tessera {

struct NodeAddress {
  std::string host;
  int base_port = 0;  // the node's first serving port; 0: the plan's
};

// "NODE=HOST" or "NODE=HOST:PORT" (an --node-address value); InvalidArgument
// naming the flag otherwise.
Result<std::pair<std::string, NodeAddress>> ParseNodeAddress(const std::string& text);

struct RouterAgentOptions {
  std::string server;  // the control plane, "http://HOST[:PORT]"
  std::string name;    // the router's name (tessera serve --router-agent NAME)
  std::string token;
  std::string haproxy_binary = "haproxy";
  std::string work_dir;      // created; haproxy.cfg, its socket and log
  std::string bind_address;  // the frontends' and metrics' address; empty: every one
  int frontend_base_port = 9000;
  int metrics_port = 8404;
  std::map<std::string, NodeAddress> nodes;
  double report_interval_s = 5;
  double dilation = 1;  // a rehearsal's k: rates x k, latencies / k in reports
  int poll_wait_s = 30;
  int keep_alive_s = 10;  // RouterSettings::keep_alive_s
  int max_connections = 100000;
  double drain_timeout_s = 120;                      // a drain step fails after this long
  std::function<void(const std::string&)> progress;  // one line per change; may be empty
};

class RouterAgent {
 public:
  // Checks the options (InvalidArgument naming the flag); starts nothing.
  static Result<std::unique_ptr<RouterAgent>> Create(RouterAgentOptions options);
  ~RouterAgent();

  // Until Stop (then Ok, HAProxy stopped) or an error (see above).
  Status Run();
  void Stop();

  class Impl;

 private:
  explicit RouterAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_ROUTER_AGENT_H_
