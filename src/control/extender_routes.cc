// The scheduler extender's HTTP-free routes (extender_routes.h).
#include "control/extender_routes.h"

#include <utility>

#include "control/api_json.h"
#include "tessera/emit/node_plan.h"
#include "tessera/gpu_catalog.h"
#include "tessera/util/input_limits.h"

namespace tessera {
namespace {

ApiResponse Reply(int status, std::string body, std::string_view route) {
  ApiResponse response;
  response.status = status;
  response.body = std::move(body);
  response.route = std::string(route);
  return response;
}

ApiResponse ErrorReply(const ApiError& error, std::string_view route) {
  return Reply(error.status, FormatApiError(error), route);
}

}  // namespace

Result<std::string> NodePlanOfPods(const SchedulerExtender& extender, const std::string& node) {
  const std::optional<SchedulerExtender::NodeSlices> slices = extender.NodeState(node);
  if (!slices) {
    return Status::NotFound("node " + node + " is not a GPU node of the extender's (label " +
                            std::string(kGpusLabel) + ")");
  }
  NodePlan plan;
  plan.node = node;
  plan.gpus_per_node = slices->node.gpus;
  plan.gpu = extender.gpu().name;
  for (const PodPlacement& pod : slices->pods) {  // by GPU, then start
    Instance instance;
    instance.profile = pod.profile;
    instance.start = pod.start;
    instance.service = pod.name;
    instance.model = instance.service;
    // What the pod serves is its own: the format's least throughput and
    // latency stand for "unknown" (the agent runs no server with --no-serving).
    instance.throughput_rps = limits::kThroughputRps.min;
    instance.latency_ms = limits::kLatencyMs.min;
    TESSERA_ASSIGN_OR_RETURN(NodeInstance built,
                             BuildNodeInstance(plan.serving, extender.gpu(), pod.gpu, instance));
    if (plan.gpus.empty() || plan.gpus.back().index != pod.gpu) {
      plan.gpus.push_back({pod.gpu, pod.gpu, {}});
    }
    plan.gpus.back().instances.push_back(std::move(built));
  }
  return FormatNodePlanJson(plan);
}

bool IsSchedulerRoute(std::string_view route) {
  return route == "/scheduler/filter" || route == "/scheduler/prioritize" ||
         route == "/scheduler/bind" || route == "/scheduler/state" ||
         route == "/scheduler/nodes/{node}/plan";
}

ApiResponse HandleSchedulerRoute(SchedulerExtender* extender, std::string_view route,
                                 const ApiRequest& request) {
  const bool state = route == "/scheduler/state" || route == "/scheduler/nodes/{node}/plan";
  if (request.method != (state ? "GET" : "POST")) {
    return ErrorReply({405, "method_not_allowed",
                       request.method + " is not allowed on " + std::string(route), std::nullopt},
                      route);
  }
  if (extender == nullptr) {
    return ErrorReply(NotFoundError("the scheduler extender is off: start tessera serve with "
                                    "--kubeconfig (docs/kubernetes.md)"),
                      route);
  }
  if (route == "/scheduler/state") return Reply(200, extender->StateJson().dump(), route);
  if (state) {
    constexpr std::string_view kPrefix = "/scheduler/nodes/";
    const std::string node =
        request.path.substr(kPrefix.size(), request.path.size() - kPrefix.size() - 5);
    Result<std::string> plan = NodePlanOfPods(*extender, node);
    if (!plan.ok()) return ErrorReply(ErrorFromStatus(plan.status()), route);
    return Reply(200, std::move(*plan), route);
  }
  Result<std::string> answer = route == "/scheduler/filter" ? extender->Filter(request.body)
                               : route == "/scheduler/prioritize"
                                   ? extender->Prioritize(request.body)
                                   : extender->Bind(request.body);
  if (!answer.ok()) return ErrorReply(BadRequest(answer.status().message()), route);
  return Reply(200, std::move(*answer), route);
}

std::string SchedulerMetrics(const SchedulerExtender* extender) {
  if (extender == nullptr) return "";
  const ExtenderCounters c = extender->counters();
  std::string text =
      "# HELP tessera_extender_requests_total Scheduler extender calls by verb.\n"
      "# TYPE tessera_extender_requests_total counter\n";
  text += "tessera_extender_requests_total{verb=\"filter\"} " + std::to_string(c.filters) + "\n";
  text += "tessera_extender_requests_total{verb=\"prioritize\"} " + std::to_string(c.prioritizes) +
          "\n";
  text += "tessera_extender_requests_total{verb=\"bind\"} " + std::to_string(c.binds) + "\n";
  const std::pair<const char*, long long> counters[] = {
      {"bind_failures", c.bind_failures},
      {"declined", c.declined},
      {"reservations_expired", c.reservations_expired},
      {"adopted", c.adopted},
      {"adopt_conflicts", c.adopt_conflicts}};
  for (const auto& [name, value] : counters) {
    const std::string metric = std::string("tessera_extender_") + name + "_total";
    text += "# TYPE " + metric + " counter\n" + metric + " " + std::to_string(value) + "\n";
  }
  text += "# TYPE tessera_extender_synced gauge\ntessera_extender_synced " +
          std::string(extender->synced() ? "1" : "0") + "\n";
  return text;
}

}  // namespace tessera
