// ControlPlane: the logic of `tessera serve` (docs/control-plane.md), free of
// any HTTP library: it answers one ApiRequest with one ApiResponse, keeps
// the desired state in a ControlStore, plans through Plan() (plan_request.h),
// moves the cluster with PlanTransition (checked by CheckTransition before
// it is stored) and rolls transitions out phase by phase through the node
// agents, which long-poll their NodePlan and post their results.
//
// The API (JSON, under /v1; docs/openapi.json is its OpenAPI 3 document,
// served at /v1/openapi.json): scenario, services, plans, deployment,
// transitions, nodes; /healthz, /readyz and /metrics (Prometheus text).
// GET /v1/deployment is served from a body cached per change, with a strong
// ETag (304 Not Modified to a matching If-None-Match) and a gzip copy made
// once per change for clients that accept gzip.
// Every request body is parsed strictly (unknown fields, wrong types, values
// outside input_limits.h are 400 with {"error": {"code", "message",
// "field"}}); a 2xx mutation is committed to the store before the reply.
//
// Rollout: at most one transition runs at a time. Starting one dispatches
// its phase 1 to the nodes holding its steps; when every step of a phase is
// done the next phase is dispatched; after the last, the deployment pointer
// moves to the target plan in the same store transaction. A failed step
// pauses the transition (state "paused", its error in the API); resume
// retries the failed steps, abort gives it up. A transition running when the
// daemon stopped resumes where the store says it was: its steps in
// "running" are dispatched again (the agent's steps are idempotent).
//
// Routers: a router named in ControlOptions::routers long-polls
// GET /v1/routers/{name}/work?since=V&wait=S for every server it should
// hold (by backend: name, node, port, weight, state ready|drain|maint; the
// deployment's, or through a transition every server of its lives at the
// phase's stage) and its running step, and posts POST
// /v1/routers/{name}/status: its step done ({"transition": {"id", "phase",
// "step": "drain"|"ready", "ok"}}) and what it measured ({"observed":
// {service: {"rate_rps", "slo_compliance", "p99_ms"}}}). GET /v1/routers
// lists them.
//
// Auto mode: when a service's declared rate (PATCH) or observed rate (the
// sum of the nodes' and routers' reports, having stayed beyond the
// threshold for `replan_hold_s`) moves more than `replan_threshold`
// (relative) from the rate the deployment was planned for, and no
// transition is running or paused, the control plane re-plans
// incrementally from the deployment (incremental_plan.h), plans and checks
// the transition and starts it. With `autoscale` set, observed rates go
// to the autoscaling policy (autoscaler.h) instead of the threshold: every
// `autoscale_minute_s` of the clock the mean of the minute's summed
// observed rates is one minute of the policy, which forecasts, decides and,
// when it moves, the plan it chose is stored and its transition started
// (the policy's spare GPUs are `spare_gpus`). GET /v1/observed says what it
// last decided.
//
// Replicas: with a store several replicas share (EtcdStore), every request
// but /healthz first asks the store who leads (ControlStore::Observe), and
// a replica reloads what it caches from the store when the store changed
// under it or it gained or lost the leadership. A follower answers reads
// from the store; a mutation, or a node agent's or router's long-poll, it
// answers 307 with Location at the leader's advertised URL (503
// "no_leader" while none leads). /readyz says which role it has and who
// leads; /metrics has tessera_leader and tessera_leader_info. A transition
// running when the leader died resumes on the next leader as on a restart
// (above).
//
// Thread-safety: Handle and WaitForVersion may be called from many threads
// at once; state changes (planning included) are serialised on an internal
// mutex. A long-poll (GET /v1/nodes/{node}/plan?since=V&wait=S) waits inside
// Handle, outside that mutex.
#ifndef TESSERA_CONTROL_PLANE_H_
#define TESSERA_CONTROL_PLANE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/autoscaler.h"
#include "tessera/control/control_store.h"
#include "tessera/durations.h"
#include "tessera/emit/node_plan.h"
#include "tessera/problem_inputs.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera {

struct ApiRequest {
  std::string method;  // "GET", "PUT", ...
  std::string path;    // "/v1/plans/3", no query
  std::map<std::string, std::string> query;
  std::string body;
  std::string content_type;   // the request's Content-Type, "" when absent
  std::string if_none_match;  // the request's If-None-Match, "" when absent
  bool accepts_gzip = false;  // Accept-Encoding accepts gzip
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Headers of the reply besides Content-Type ("ETag", "Vary",
  // "Content-Encoding": a body the plane encoded itself). A content type
  // other than exactly "application/json" keeps the HTTP layer from
  // compressing the body again.
  std::vector<std::pair<std::string, std::string>> headers;
  // The route template that answered ("/v1/plans/{id}"), for metrics;
  // "unmatched" when none did.
  std::string route = "unmatched";
};

// The length of the autoscaling policy's minute under serve.
inline constexpr DurationRange kAutoscaleMinute{0.1, kHour};

struct ControlOptions {
  bool auto_mode = true;
  double replan_threshold = 0.10;  // relative rate change that triggers a re-plan
  int spare_gpus = 1;              // the transitions' spare GPU budget
  DeployOptions deploy;            // nodes: GPUs per node, names, serving settings
  // The inputs of every plan (plan_request.h) besides the scenario: the GPU
  // model, the profiles, the latency rule. MIG planners only.
  ProblemInputs inputs;
  // The planner of a plan request that names none; empty: the library's
  // default (PlannerFor), as `tessera plan` and the Python package use.
  std::string default_planner;
  // The routers (router_agent.h) in front of the serving processes, by
  // name: each takes part in every phase of a transition (rollout.h), and
  // its observed rates count as a node's do.
  std::vector<std::string> routers;
  // Auto mode on observed rates: how long they must stay beyond the
  // threshold before a re-plan (a declared rate re-plans at once).
  double replan_hold_s = 0;
  // Auto mode on observed rates by the autoscaling policy, one of its
  // minutes every autoscale_minute_s of the clock (shorter for a compressed
  // day: the policy's durations are then in its minutes).
  std::optional<AutoscalePolicyOptions> autoscale;
  double autoscale_minute_s = 60;
  double plan_time_limit_s = 0;  // 0: each planner's default
  // This replica's name, for /metrics' tessera_leader_info when it leads.
  std::string replica_name;
  // Wall-clock time for created_at / updated_at (RFC 3339 UTC); injected so
  // tests control it.
  std::function<std::string()> wall_time;
  const Clock* clock = &SystemClock();  // long-poll deadlines, API latencies
};

// Prometheus' text exposition of the API's request latencies, kept by the
// HTTP layer and appended to /metrics.
using ExtraMetrics = std::function<std::string()>;

class ControlPlane {
 public:
  // Opens the state in `store` (resuming a running transition) and checks
  // that options.inputs can plan the stored scenario.
  static Result<std::unique_ptr<ControlPlane>> Open(std::unique_ptr<ControlStore> store,
                                                    ControlOptions options);
  ~ControlPlane();

  // Answers one request (every route of the API, /healthz, /readyz and
  // /metrics; not the dashboard's static files). Never throws; a request
  // that should not happen is a 4xx, a store failure a 503, a bug a 500.
  ApiResponse Handle(const ApiRequest& request);

  // Every route Handle answers, as (method, path pattern with "{x}" for a
  // segment), in the order they are matched: docs/openapi.json's paths but
  // /v1/openapi.json, which the HTTP layer serves (a test holds them equal).
  static std::vector<std::pair<std::string, std::string>> RouteTable();

  // The store's version now.
  int64_t Version() const;
  // Blocks until the version differs from `seen` or `timeout` passes (or
  // Shutdown is called); returns the version then. For long-polls.
  int64_t WaitForVersion(int64_t seen, std::chrono::milliseconds timeout);
  // Wakes every waiter and makes later waits return at once.
  void Shutdown();

  void SetExtraMetrics(ExtraMetrics extra);

  class Impl;

 private:
  explicit ControlPlane(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_PLANE_H_
