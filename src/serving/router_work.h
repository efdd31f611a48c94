// RouterWork: what GET /v1/routers/{name}/work answers (control_plane.h),
// read strictly by the router agent (router_agent.h): every field checked,
// an unknown one refused, each error naming its field.
//
// Thread-safety: values and a pure function.
#ifndef TESSERA_SERVING_ROUTER_WORK_H_
#define TESSERA_SERVING_ROUTER_WORK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emit/router_config.h"
#include "tessera/latency_rule.h"
#include "tessera/status.h"

namespace tessera::serving {

// One server as the work lists it.
struct WorkServer {
  RouterServer server;  // name, node, port (the plan's), batch, weight
  RouterServerState state = RouterServerState::kReady;
};

struct WorkBackend {
  std::string service, name;
  std::optional<double> slo_ms;
  std::vector<WorkServer> servers;
};

// What GET /v1/routers/{name}/work answers.
struct RouterWork {
  int64_t version = 0;
  std::optional<Router> rule;
  int base_port = 0;
  std::vector<WorkBackend> backends;
  struct Step {
    int64_t id = 0;
    int phase = 0;
    std::string step;  // "drain", "ready"; "" while the nodes run the phase
  };
  std::optional<Step> transition;
};

// The work in `body` (from `source`, for messages) for router `router`;
// InvalidArgument naming the field for anything else: a work for another
// router, a rule no deployment ships, a server name that is not a DNS-1123
// label, numbers outside their ranges.
Result<RouterWork> ParseRouterWork(const std::string& body, const std::string& source,
                                   const std::string& router);

}  // namespace tessera::serving

#endif  // TESSERA_SERVING_ROUTER_WORK_H_
