// Router config: the HAProxy 2.6 configuration that routes each service's
// requests over its serving processes by the rule its plan was made under
// (docs/routing.md). `tessera deploy` writes it twice: router/haproxy.cfg
// with each process at its node's address and node-plan port, and the
// Kubernetes ConfigMap's copy with each process behind its own Service.
//
//   * one frontend per service (a port of its own; the Service of the model
//     points there), one backend per service, one server per serving
//     process in the plan's order (GPU, instance, process: the simulator's);
//   * the balance of the plan's router: first -> `balance first` with
//     `maxconn` = FirstMaxconn(the process's planned batch); leastconn ->
//     `balance leastconn` with ProxyWeights; weighted -> `balance random(1)` with
//     ProxyWeights; equal -> `balance random(1)` with equal weights. jsq is
//     the simulator's ideal and no proxy here decides that way:
//     CheckShippable refuses it;
//   * a request whose server closed an idle connection under it (no
//     answer, nothing of it processed) is sent again: `retry-on
//     conn-failure empty-response`, 3 retries;
//   * with RouterSettings::request_log, one raw log line per request,
//     "%b %ST %Ta" (backend, status, active milliseconds), over UDP;
//   * health checks `GET /v2/health/ready`, the runtime API on a stats
//     socket (level admin: `set server B/S state drain|ready`, `set server
//     B/S weight N`), and the Prometheus exporter at /metrics.
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_ROUTER_CONFIG_H_
#define TESSERA_ROUTER_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/emit/node_plan.h"
#include "tessera/latency_rule.h"
#include "tessera/status.h"

namespace tessera {

// One life a router server serves through a transition (an instance at its
// place): it takes requests from the end of phase `from_phase` (0: from the
// start) until the start of phase `to_phase` (0: to the end), with `weight`.
struct RouterLife {
  int from_phase = 0;
  int to_phase = 0;
  int weight = 1;
};

// One serving process as the router sees it.
struct RouterServer {
  std::string name;     // unique within its backend: "<node>-g<gpu>-s<start>-p<process>"
  std::string address;  // host name or IP
  int port = 0;
  int batch = 1;   // its planned batch: FirstMaxconn of it under balance first
  int weight = 1;  // ProxyWeights of its RouterCapacity among its service's
  // Where it runs: node, local GPU, start slice, process index.
  std::string node;
  int gpu = 0, start = 0, process = 0;
  // false: in maintenance from the start (`disabled`), until the runtime API
  // sets it ready (a process a transition starts later).
  bool enabled = true;
  // Through a transition (BuildTransitionRouterBackends), the lives of the
  // instances at its place in phase order; empty otherwise.
  std::vector<RouterLife> lives;
};

// One service's frontend and backend.
struct RouterBackend {
  std::string service;  // the plan's name
  std::string name;     // the proxies' name: a DNS-1123 label
  int port = 0;         // the frontend's
  std::vector<RouterServer> servers;
};

struct RouterSettings {
  std::string bind_address;  // empty: every address
  int metrics_port = 8404;   // /metrics (Prometheus) and /stats
  std::string stats_socket = "/var/run/haproxy/admin.sock";
  // HAProxy's global maxconn (each connection takes two descriptors, so
  // HAProxy raises its file limit to about twice this); each frontend may
  // hold half of it.
  int max_connections = 100000;
  // HAProxy's client, server and queue timeouts (seconds).
  int timeout_s = 60;
  // How long an idle client connection is kept open (seconds): idle
  // keep-alive connections count towards maxconn, and a client holding many
  // would keep the proxy from accepting new ones.
  int keep_alive_s = 10;
  // Resolve server names through /etc/resolv.conf at run time (a
  // Kubernetes cluster's DNS); otherwise once, by libc, at start.
  bool dns_resolvers = false;
  // "host:port" of a RouterObserver (router_observer.h): every service
  // frontend logs each request there over UDP; empty: no request log.
  std::string request_log;
};

// The backends of `deployment` run by `plans` (BuildNodePlans of it, with
// `gpu_map`): one per service with instances, in deployment order, named
// KubernetesName(service, 55), frontend ports first_port, first_port + 1,
// ...; one server per serving process in the deployment's order of GPUs,
// instances and processes (the simulator's), at its node's name and the
// HTTP port its node plan's serving settings give it (BuildNodeInstance:
// two instances may share a place, as the lives of a transition do),
// weighted by ProxyWeights of RouterCapacity. InvalidArgument for a
// frontend port outside 1-65535 or on RouterSettings' metrics port, or an
// instance on a node no plan is for.
Result<std::vector<RouterBackend>> BuildRouterBackends(const Deployment& deployment,
                                                       const std::vector<NodePlan>& plans,
                                                       const std::map<int, int>& gpu_map,
                                                       int first_port);

// The backends of every instance that lives during a transition: `every`
// (TransitionLives' deployment) with `phases` (its lives' phases, one per
// instance in `every`'s order), as BuildRouterBackends builds them, each
// server once per name with the lives of the instances at its place, and
// enabled iff its first life runs from the start.
Result<std::vector<RouterBackend>> BuildTransitionRouterBackends(
    const Deployment& every, const std::vector<std::pair<int, int>>& phases,
    const std::vector<NodePlan>& plans, const std::map<int, int>& gpu_map, int first_port);

// Where a transition's phase stands, as a router sees it: draining what the
// phase stops, the phase's steps running on the nodes, making ready what it
// started.
enum class RouterStage { kDrain, kApply, kReady };

// What a server of BuildTransitionRouterBackends is while `phase` (1-based)
// runs at `stage`: kReady with its life's weight when a life of it takes
// requests (started before the phase, or at it once the stage is kReady,
// and not stopped by the phase), kDrain when the phase stops a life of it
// and the stage is kDrain, kMaint otherwise. A server without lives is
// always ready with its weight.
enum class RouterServerState { kReady, kDrain, kMaint };
std::pair<RouterServerState, int> ServerStateAt(const RouterServer& server, int phase,
                                                RouterStage stage);
std::string_view RouterServerStateName(RouterServerState state);  // "ready", "drain", "maint"

// The arguments of a server line after its name, "ADDRESS:PORT check inter
// 2s fall 2 rise 1[ maxconn N][ weight W]" under `router`'s balance (never
// "disabled"): FormatHaproxyConfig's lines, and the runtime API's `add
// server`, whose servers take no default-server settings.
std::string FormatServerArgs(Router router, const RouterServer& server);

// InvalidArgument naming the router unless a deployment can ship it.
Status CheckShippable(Router router);

// The HAProxy configuration for `backends` under `rule`'s router, with a
// comment naming the rule. REQUIRES: CheckShippable(rule.router).ok().
std::string FormatHaproxyConfig(const LatencyRule& rule, const std::vector<RouterBackend>& backends,
                                const RouterSettings& settings);

}  // namespace tessera

#endif  // TESSERA_ROUTER_CONFIG_H_
