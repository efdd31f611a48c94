// FormatHaproxyConfig (router_config.h): HAProxy 2.6's configuration text.
#include "tessera/router_config.h"

#include <fmt/format.h>

#include <string>

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

Status CheckShippable(Router router) {
  if (router != Router::kShortestQueue) return Status::Ok();
  return Status::InvalidArgument(
      "the plan's router is jsq, the simulator's join-shortest-queue, which no router deploy "
      "ships decides like; plan with --router first (the default: HAProxy's balance first), "
      "leastconn, weighted or equal");
}

std::string FormatHaproxyConfig(const LatencyRule& rule, const std::vector<RouterBackend>& backends,
                                const RouterSettings& settings) {
  const Balance balance = BalanceOf(rule.router);
  std::string out = fmt::format(
      "# Written by `tessera deploy` (docs/routing.md): HAProxy 2.6 routes each service's\n"
      "# requests over its serving processes by the plan's router.\n"
      "# Rule: {}.\n"
      "global\n"
      "    maxconn 100000\n"
      "    stats socket {} mode 600 level admin\n"
      "    stats timeout 30s\n"
      "\n",
      DescribeRule(rule), settings.stats_socket);
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
      "    maxconn 50000\n"
      "    timeout connect 5s\n"
      "    timeout client 60s\n"
      "    timeout server 60s\n"
      "    timeout queue 60s\n"
      "    timeout http-keep-alive 60s\n"
      "    timeout check 2s\n"
      "    default-server inter 2s fall 2 rise 1 init-addr last,libc,none{}\n"
      "\n"
      "frontend metrics\n"
      "    bind {}\n"
      "    http-request use-service prometheus-exporter if {{ path /metrics }}\n"
      "    stats enable\n"
      "    stats uri /stats\n"
      "    stats refresh 10s\n",
      settings.dns_resolvers ? " resolvers cluster" : "", Bind(settings, settings.metrics_port));
  for (const RouterBackend& b : backends) {
    out += fmt::format(
        "\n"
        "# service {}\n"
        "frontend {}\n"
        "    bind {}\n"
        "    default_backend {}\n"
        "\n"
        "backend {}\n"
        "    {}\n"
        "    option httpchk GET /v2/health/ready\n"
        "    http-check expect status 200\n",
        b.service, b.name, Bind(settings, b.port), b.name, b.name, balance.line);
    for (const RouterServer& s : b.servers) {
      out += fmt::format("    server {} {}:{} check", s.name, s.address, s.port);
      if (balance.slots) out += fmt::format(" maxconn {}", s.batch);
      if (balance.weights) out += fmt::format(" weight {}", s.weight);
      out += "\n";
    }
  }
  return out;
}

}  // namespace tessera
