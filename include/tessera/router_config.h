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
#include "tessera/latency_rule.h"
#include "tessera/node_plan.h"
#include "tessera/status.h"

namespace tessera {

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

// InvalidArgument naming the router unless a deployment can ship it.
Status CheckShippable(Router router);

// The HAProxy configuration for `backends` under `rule`'s router, with a
// comment naming the rule. REQUIRES: CheckShippable(rule.router).ok().
std::string FormatHaproxyConfig(const LatencyRule& rule, const std::vector<RouterBackend>& backends,
                                const RouterSettings& settings);

}  // namespace tessera

#endif  // TESSERA_ROUTER_CONFIG_H_
