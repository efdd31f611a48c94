// FormatHaproxyConfig (router_config.h): HAProxy 2.6's configuration text.
#include "emit/router_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "tessera/emit/deploy_artifacts.h"
#include "tessera/gpu_catalog.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

std::string Bind(const RouterSettings& settings, int port) {
  return fmt::format("{}:{}", settings.bind_address, port);
}

// The balance line, and whether servers carry weights and batch slots.
struct Balance {
  std::string_view line;
  bool weights;
  bool slots;
};

Balance BalanceOf(Router router) {
  switch (router) {
    case Router::kFirst:
      return {"balance first", false, true};
    case Router::kLeastConn:
      return {"balance leastconn", true, false};
    case Router::kWeighted:
      return {"balance random(1)", true, false};
    case Router::kEqual:
    case Router::kShortestQueue:
      break;
  }
  return {"balance random(1)", false, false};
}

}  // namespace

Result<std::vector<RouterBackend>> BuildRouterBackends(const Deployment& deployment,
                                                       const std::vector<NodePlan>& plans,
                                                       const std::map<int, int>& gpu_map,
                                                       int first_port) {
  std::map<int, const NodePlan*> node_plan;  // node index -> its plan
  for (const NodePlan& plan : plans) node_plan[plan.node_index] = &plan;
  const int per_node = plans.empty() ? 1 : plans.front().gpus_per_node;
  std::vector<RouterBackend> backends;
  std::map<std::string, size_t> backend_of;
  for (const GpuAssignment& g : deployment.gpus) {
    for (const Instance& in : g.instances()) backend_of.emplace(in.service, 0);
  }
  for (const ServiceOutcome& s : deployment.services) {
    if (!backend_of.count(s.name)) continue;
    backend_of[s.name] = backends.size();
    const int port = first_port + static_cast<int>(backends.size());
    if (port < 1 || port > 65535 || port == RouterSettings{}.metrics_port) {
      return Status::InvalidArgument(fmt::format(
          "router base port {} gives service {} port {}, outside 1-65535 or the router's metrics "
          "port {}",
          first_port, QuoteForMessage(s.name), port, RouterSettings{}.metrics_port));
    }
    backends.push_back({s.name, KubernetesName(s.name, 55), port, {}});
  }
  std::vector<std::vector<double>> capacities(backends.size());
  for (const GpuAssignment& g : deployment.gpus) {
    const auto mapped = gpu_map.find(g.index);
    const int cluster = mapped == gpu_map.end() ? g.index : mapped->second;
    for (const Instance& in : g.instances()) {
      TESSERA_ASSIGN_OR_RETURN(const ServiceOutcome* service, ServiceOfInstance(deployment, in));
      const auto plan = node_plan.find(cluster / per_node);
      if (plan == node_plan.end()) {
        return Status::InvalidArgument(
            fmt::format("no node plan holds gpu {} start {}", cluster, in.start));
      }
      const NodePlan& node = *plan->second;
      const int local = cluster % per_node;
      TESSERA_ASSIGN_OR_RETURN(const GpuModel* model, FindMigGpu(node.gpu));
      TESSERA_ASSIGN_OR_RETURN(const NodeInstance node_instance,
                               BuildNodeInstance(node.serving, *model, local, in));
      const size_t b = backend_of.at(in.service);
      for (const NodeProcess& proc : node_instance.processes) {
        backends[b].servers.push_back(
            {fmt::format("{}-g{}-s{}-p{}", node.node, local, in.start, proc.index),
             node.node,
             proc.http_port,
             in.batch,
             1,
             node.node,
             local,
             in.start,
             proc.index,
             true,
             {}});
        capacities[b].push_back(RouterCapacity(deployment.rule, in.batch, in.latency_ms,
                                               service->slo_ms, service->rate_rps));
      }
    }
  }
  for (size_t b = 0; b < backends.size(); ++b) {
    const std::vector<int> weights = ProxyWeights(capacities[b]);
    for (size_t k = 0; k < weights.size(); ++k) backends[b].servers[k].weight = weights[k];
  }
  return backends;
}

Result<std::vector<RouterBackend>> BuildTransitionRouterBackends(
    const Deployment& every, const std::vector<std::pair<int, int>>& phases,
    const std::vector<NodePlan>& plans, const std::map<int, int>& gpu_map, int first_port) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<RouterBackend> backends,
                           BuildRouterBackends(every, plans, gpu_map, first_port));
  std::map<std::string, size_t> backend_of;
  for (size_t b = 0; b < backends.size(); ++b) backend_of[backends[b].service] = b;
  // BuildRouterBackends lists a backend's servers in the order of the
  // deployment's instances and their processes: each server's instance.
  std::vector<std::vector<size_t>> life_of(backends.size());
  size_t i = 0;
  for (const GpuAssignment& g : every.gpus) {
    for (const Instance& instance : g.instances()) {
      for (int p = 0; p < instance.procs; ++p)
        life_of[backend_of.at(instance.service)].push_back(i);
      ++i;
    }
  }
  if (i != phases.size()) {
    return Status::InvalidArgument(
        fmt::format("{} lives for a deployment of {} instances", phases.size(), i));
  }
  for (size_t b = 0; b < backends.size(); ++b) {
    std::vector<RouterServer> unique;
    std::map<std::string, size_t> position;
    for (size_t k = 0; k < backends[b].servers.size(); ++k) {
      RouterServer& server = backends[b].servers[k];
      const auto [phase_in, phase_out] = phases[life_of[b][k]];
      const auto [it, fresh] = position.emplace(server.name, unique.size());
      if (fresh) {
        server.enabled = phase_in == 0;
        unique.push_back(server);
      }
      unique[it->second].lives.push_back({phase_in, phase_out, server.weight});
    }
    backends[b].servers = std::move(unique);
  }
  return backends;
}

std::pair<RouterServerState, int> ServerStateAt(const RouterServer& server, int phase,
                                                RouterStage stage) {
  if (server.lives.empty()) return {RouterServerState::kReady, server.weight};
  bool draining = false;
  for (const RouterLife& life : server.lives) {
    const bool started =
        life.from_phase < phase || (life.from_phase == phase && stage == RouterStage::kReady);
    const bool stopped = life.to_phase != 0 && life.to_phase <= phase;
    if (started && !stopped) return {RouterServerState::kReady, life.weight};
    if (started && life.to_phase == phase && stage == RouterStage::kDrain) draining = true;
  }
  return {draining ? RouterServerState::kDrain : RouterServerState::kMaint, server.weight};
}

std::string_view RouterServerStateName(RouterServerState state) {
  switch (state) {
    case RouterServerState::kReady:
      return "ready";
    case RouterServerState::kDrain:
      return "drain";
    case RouterServerState::kMaint:
      break;
  }
  return "maint";
}

std::string FormatServerArgs(Router router, const RouterServer& server) {
  const Balance balance = BalanceOf(router);
  std::string out = fmt::format("{}:{} check inter 2s fall 2 rise 1", server.address, server.port);
  if (balance.slots) out += fmt::format(" maxconn {}", FirstMaxconn(server.batch));
  if (balance.weights) out += fmt::format(" weight {}", server.weight);
  return out;
}

Status CheckShippable(Router router) {
  if (router != Router::kShortestQueue) return Status::Ok();
  return Status::InvalidArgument(
      "the plan's router is jsq, the simulator's join-shortest-queue, which no router deploy "
      "ships decides like; plan with --router leastconn (the default: HAProxy's weighted "
      "leastconn), first, weighted or equal");
}

std::string FormatHaproxyConfig(const LatencyRule& rule, const std::vector<RouterBackend>& backends,
                                const RouterSettings& settings) {
  const Balance balance = BalanceOf(rule.router);
  std::string out = fmt::format(
      "# Written by `tessera deploy` (docs/routing.md): HAProxy 2.6 routes each service's\n"
      "# requests over its serving processes by the plan's router.\n"
      "# Rule: {}.\n"
      "global\n"
      "    maxconn {}\n"
      "    stats socket {} mode 600 level admin\n"
      "    stats timeout 30s\n"
      "{}"
      "\n",
      DescribeRule(rule), settings.max_connections, settings.stats_socket,
      settings.request_log.empty()
          ? ""
          : fmt::format("    log {} len 1024 format raw local0 info\n", settings.request_log));
  if (settings.dns_resolvers) {
    out +=
        "resolvers cluster\n"
        "    parse-resolv-conf\n"
        "    hold valid 10s\n"
        "\n";
  }
  out += fmt::format(
      "defaults\n"
      "    mode http\n"
      "    maxconn {}\n"
      "    timeout connect 5s\n"
      "    timeout client {}s\n"
      "    timeout server {}s\n"
      "    timeout queue {}s\n"
      "    timeout http-keep-alive {}s\n"
      "    timeout check 2s\n"
      "    retries 3\n"
      "    retry-on conn-failure empty-response\n"
      "    default-server init-addr last,libc,none{}\n"
      "\n"
      "frontend metrics\n"
      "    bind {}\n"
      "    http-request use-service prometheus-exporter if {{ path /metrics }}\n"
      "    stats enable\n"
      "    stats uri /stats\n"
      "    stats refresh 10s\n",
      std::max(1, settings.max_connections / 2), settings.timeout_s, settings.timeout_s,
      settings.timeout_s, settings.keep_alive_s, settings.dns_resolvers ? " resolvers cluster" : "",
      Bind(settings, settings.metrics_port));
  for (const RouterBackend& b : backends) {
    out += fmt::format(
        "\n"
        "# service {}\n"
        "frontend {}\n"
        "    bind {}\n"
        "{}"
        "    default_backend {}\n"
        "\n"
        "backend {}\n"
        "    {}\n"
        "    option httpchk GET /v2/health/ready\n"
        "    http-check expect status 200\n",
        b.service, b.name, Bind(settings, b.port),
        settings.request_log.empty()
            ? ""
            : "    log global\n    option dontlognull\n    log-format \"%b %ST %Ta\"\n",
        b.name, b.name, balance.line);
    for (const RouterServer& s : b.servers) {
      out += fmt::format("    server {} {}{}\n", s.name, FormatServerArgs(rule.router, s),
                         s.enabled ? "" : " disabled");
    }
  }
  return out;
}

}  // namespace tessera
