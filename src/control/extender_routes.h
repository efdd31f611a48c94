// The scheduler extender's routes of `tessera serve` (docs/kubernetes.md):
// POST /scheduler/filter, /scheduler/prioritize, /scheduler/bind (the
// kube-scheduler extender protocol's JSON in and out), GET /scheduler/state
// and GET /scheduler/nodes/{node}/plan (the node's pods as a NodePlan for
// `tessera agent --no-serving`). Internal to the control floor;
// http_server.cc calls it.
#ifndef TESSERA_CONTROL_EXTENDER_ROUTES_H_
#define TESSERA_CONTROL_EXTENDER_ROUTES_H_

#include <string>
#include <string_view>

#include "tessera/control/control_plane.h"
#include "tessera/k8s/scheduler_extender.h"

namespace tessera {

// True for the routes above (a route template of http_server.cc).
bool IsSchedulerRoute(std::string_view route);

// Answers `request` on `route` with `extender`; 404 naming --kubeconfig when
// the extender is off (nullptr), 400 with the field for a malformed body,
// 405 for another method.
ApiResponse HandleSchedulerRoute(SchedulerExtender* extender, std::string_view route,
                                 const ApiRequest& request);

// The NodePlan (tessera-nodeplan JSON) of `node`'s pods: one MIG instance
// per pod at its GPU and start, its service and model the pod's name, one
// process (which `tessera agent --no-serving` does not start: the pod is the
// server), throughput and latency at the format's least ("unknown").
// NotFound when the node is not the extender's.
Result<std::string> NodePlanOfPods(const SchedulerExtender& extender, const std::string& node);

// The extender's counters in Prometheus text (tessera_extender_*); "" when
// the extender is off.
std::string SchedulerMetrics(const SchedulerExtender* extender);

}  // namespace tessera

#endif  // TESSERA_CONTROL_EXTENDER_ROUTES_H_
