// ControlPlane::Impl (tessera/control/control_plane.h): the class and the
// helpers its files share. control_plane.cc holds the routes (a declarative
// table matched in order, which a test holds equal to docs/openapi.json),
// the state loaded from the store, readiness and metrics; one file per
// resource holds its handlers: control_scenario.cc (the scenario, services'
// rates, observed rates and re-planning), control_plans.cc (plans and the
// deployment), control_transitions.cc (transitions and their rollout) and
// control_agents.cc (node agents' and routers' work and status).
#ifndef TESSERA_CONTROL_CONTROL_PLANE_IMPL_H_
#define TESSERA_CONTROL_CONTROL_PLANE_IMPL_H_

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include "control/api_json.h"
#include "control/gzip.h"
#include "control/metrics_text.h"
#include "control/rollout.h"
#include "emit/router_config.h"
#include "tessera/control/control_plane.h"
#include "tessera/deployment_format.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/plan_request.h"
#include "tessera/simulate/transition_simulation.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_check.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/input_limits.h"
#include "tessera/validator.h"
#include "transition/incremental_plan.h"
#include "util/json_numbers.h"

namespace tessera {
namespace control_internal {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

constexpr int kDefaultListLimit = 50;
constexpr InputRange kListLimit{1, 1000, false, true};
constexpr InputRange kWaitS{0, 60};
// Transitions counted for /metrics: every one the store holds.
constexpr int kAllTransitions = INT_MAX;

inline std::string Dump(const OJson& j) {
  return j.dump(-1, ' ', false, OJson::error_handler_t::replace);
}

inline ApiResponse JsonResponse(int status, const OJson& body) {
  ApiResponse r;
  r.status = status;
  r.body = Dump(body);
  return r;
}

inline ApiError NoRouter(const std::string& router) {
  return NotFoundError("no router '" + router +
                       "' (tessera serve --router-agent names the routers)");
}

inline ApiResponse ErrorResponse(const ApiError& error) {
  ApiResponse r;
  r.status = error.status;
  r.body = FormatApiError(error);
  return r;
}

inline std::string SystemWallTime() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const size_t j = path.find('/', i);
    parts.push_back(path.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j;
  }
  return parts;
}

// A positive id in a path ("/v1/plans/3"), or nullopt.
inline std::optional<int64_t> ParseId(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1) return std::nullopt;
  return v;
}

// A query parameter as a number in `range`: 400 with the parameter as field.
inline ApiResult<double> QueryNumber(const ApiRequest& request, const std::string& key,
                                     const InputRange& range, double fallback) {
  auto it = request.query.find(key);
  if (it == request.query.end()) return fallback;
  ApiError error{400, "invalid_argument", "", key};
  const std::string& text = it->second;
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !range.Contains(v)) {
    error.message = fmt::format("{}: {}", key, OutOfRange(range, "'" + text + "'"));
    return error;
  }
  return v;
}

// Replaces each updated service of the stored scenario `j` (the store's
// contract: the last PutScenario with every PutService since applied).
inline Status ApplyServiceUpdates(const std::vector<StoredService>& updates, Json& j) {
  if (updates.empty()) return Status::Ok();
  if (!j.is_object() || !j.contains("services") || !j["services"].is_array()) {
    return Status::InvalidArgument("stored scenario: no services array");
  }
  std::map<std::string, Json*> by_name;
  for (Json& s : j["services"]) {
    if (s.is_object() && s.contains("name") && s["name"].is_string()) {
      by_name[s["name"].get<std::string>()] = &s;
    }
  }
  for (const StoredService& update : updates) {
    auto it = by_name.find(update.name);
    Json service = Json::parse(update.service_json, nullptr, false);
    if (it == by_name.end() || service.is_discarded()) {
      return Status::InvalidArgument("stored update of service '" + update.name +
                                     "': no such service or invalid JSON");
    }
    *it->second = std::move(service);
  }
  return Status::Ok();
}

// If-None-Match (RFC 9110 13.1.2): "*" or a list of entity tags, compared
// weakly (a W/ prefix is ignored).
inline bool IfNoneMatchHits(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view tag = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

inline Deployment EmptyDeploymentLike(const Deployment& to) {
  Deployment empty;
  empty.gpu = to.gpu;
  empty.planner = to.planner;
  empty.sharing = to.sharing;
  empty.rule = to.rule;
  empty.rule_recorded = to.rule_recorded;
  return empty;
}

inline OJson PlanSummaryJson(const StoredPlan& plan) {
  OJson j;
  j["id"] = plan.id;
  j["planner"] = plan.planner;
  j["created_at"] = plan.created_at;
  // The stored metrics hold the summary's "incremental" beside the metrics.
  OJson stored = OJson::parse(plan.metrics_json, nullptr, false);
  if (stored.is_discarded() || !stored.is_object()) stored = OJson::object();
  j["incremental"] = stored.contains("incremental") ? stored["incremental"] : OJson(nullptr);
  stored.erase("incremental");
  j["metrics"] = std::move(stored);
  return j;
}

// The id of a plan or transition in a path, or a 404 naming `what`.
inline ApiResult<int64_t> PathId(const std::string& text, const std::string& what) {
  const std::optional<int64_t> id = ParseId(text);
  if (!id) return NotFoundError("no " + what + " '" + text + "'");
  return *id;
}

}  // namespace control_internal
using namespace control_internal;  // NOLINT: the control plane's own helpers, in its own files

class ControlPlane::Impl {
 public:
  Impl(std::unique_ptr<ControlStore> store, ControlOptions options)
      : store_(std::move(store)), options_(std::move(options)) {
    if (!options_.wall_time) options_.wall_time = SystemWallTime;
    if (options_.clock == nullptr) options_.clock = &SystemClock();
  }

  Status Load();
  ApiResponse Handle(const ApiRequest& request);

  // One route of the API (docs/openapi.json): its method and path pattern,
  // in which each "{x}" is one path segment, handed to the handler in order.
  struct RouteSpec {
    std::string_view method;
    std::string_view pattern;
    ApiResponse (*handler)(Impl& plane, const ApiRequest& request,
                           const std::vector<std::string>& args);
  };
  // Every route, in the order they are matched.
  static const std::vector<RouteSpec>& Routes();

  int64_t Version() const {
    std::lock_guard<std::mutex> lock(mu_);
    return version_;
  }

  int64_t WaitForVersion(int64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return shutdown_ || version_ != seen; });
    return version_;
  }

  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
  }

  void SetExtraMetrics(ExtraMetrics extra) {
    std::lock_guard<std::mutex> lock(mu_);
    extra_ = std::move(extra);
  }

 private:
  // The transition in flight (running or paused) with its target.
  struct Active {
    StoredTransition stored;
    Deployment target;
    std::map<int, int> gpu_map;
  };

  ApiResponse Route(const ApiRequest& request);
  // Reads who leads (ControlStore::Observe) and reloads the state cached
  // from the store when it changed under this replica or the leadership
  // did. nullopt when `request` may go on; else its answer: 503 when the
  // store cannot be reached, and for a route only the leader serves
  // (`leader_only`), 307 to the leader or 503 when none leads.
  std::optional<ApiResponse> SyncWithStore(const ApiRequest& request, bool leader_only);
  // Forgets the state cached from the store (Load fills it again).
  void ClearCache();
  ApiResponse Metrics();
  ApiResponse Ready();
  ApiResponse GetScenario();
  ApiResponse PutScenario(const ApiRequest& request);
  ApiResponse PatchService(const ApiRequest& request, const std::string& name);
  ApiResponse PostPlan(const ApiRequest& request);
  ApiResponse ListPlans(const ApiRequest& request);
  ApiResponse GetPlan(int64_t id, bool svg);
  ApiResponse GetDeployment(const ApiRequest& request);
  ApiResponse GetDeploymentSvg();
  ApiResponse PostTransition(const ApiRequest& request);
  ApiResponse ListTransitions(const ApiRequest& request);
  ApiResponse GetTransition(int64_t id);
  ApiResponse ChangeTransition(int64_t id, const std::string& action);
  // The routes' forms of the above, with the id as the path has it (a 404
  // when it is not one).
  ApiResponse GetPlanAt(const std::string& id, bool svg);
  ApiResponse GetTransitionAt(const std::string& id);
  // POST /v1/transitions/{id}/<action>, with an empty body or {}.
  ApiResponse ActOnTransition(const ApiRequest& request, const std::string& id,
                              const std::string& action);
  ApiResponse ListNodes();
  ApiResponse GetNodeWork(const ApiRequest& request, const std::string& node);
  ApiResponse PostNodeStatus(const ApiRequest& request, const std::string& node);
  ApiResponse ListRouters();
  ApiResponse GetRouterWork(const ApiRequest& request, const std::string& router);
  // A long-poll (?since=V&wait=S): waits, outside mu_, until the version
  // differs from `since` or `wait` seconds pass, then answers `body()`,
  // called under mu_.
  ApiResponse LongPoll(const ApiRequest& request,
                       const std::function<ApiResult<std::string>()>& body);
  bool IsRouter(const std::string& name) const {
    return std::find(options_.routers.begin(), options_.routers.end(), name) !=
           options_.routers.end();
  }
  ApiResponse PostRouterStatus(const ApiRequest& request, const std::string& router);

  // Callers hold mu_.
  Status RefreshVersion();
  Status SetScenario(const Scenario& scenario);
  void SetDeploymentCache(int64_t id, Deployment deployment);
  // `target` (t's target plan) as the cluster holds it once `t` is done:
  // PlacedOnCluster with t's gpu_map.
  Result<Deployment> Placed(const StoredTransition& t, const Deployment& target);
  ApiResult<Deployment> LoadPlanDeployment(int64_t id);
  // Plans `scenario` (from scratch or from the deployment), validates and
  // stores the plan; returns its summary.
  ApiResult<StoredPlan> PlanScenario(const Scenario& scenario, const PlanBody& body);
  // Stores `d`, planned for `scenario` (its GPUs on this plane's nodes).
  ApiResult<StoredPlan> StorePlan(const Scenario& scenario, Deployment d, OJson increment);
  // The MIG problem of `scenario` under options_.inputs.
  Result<Problem> ProblemOf(const Scenario& scenario) const {
    return LoadProblem(options_.inputs, scenario, /*mps=*/false, nullptr, {});
  }
  // Plans, checks and stores a transition to plan `to`.
  ApiResult<StoredTransition> MakeTransition(int64_t to, int spare_gpus);
  ApiResult<StoredTransition> Start(StoredTransition transition);
  // Writes `transition` (moving the deployment when it is done) and updates
  // the caches.
  Status Commit(StoredTransition transition);
  ApiResult<OJson> TransitionJson(const StoredTransition& transition, bool full);
  // Re-plans and starts a transition when `rates` move beyond the threshold
  // from the deployment's planned rates; the note says what happened.
  std::optional<OJson> MaybeReplan(const std::map<std::string, double>& rates, std::string& note);
  ApiResult<int> NodeIndex(const std::string& node) const;
  ApiResult<std::string> NodeWorkBody(const std::string& node, int index);
  ApiResult<std::string> RouterWorkBody(const std::string& router);
  // The router's servers now: the deployment's, or through the transition
  // in flight every server of its lives.
  ApiResult<std::vector<RouterBackend>> RouterBackendsNow();
  // The largest relative move of `rates` from the deployment's planned
  // rates, and the service that moved it.
  std::pair<double, std::string> WorstChange(const std::map<std::string, double>& rates) const;
  // The observed rates of the services that moved: summed over the
  // reporters, beyond the threshold from the deployment's planned rate, and
  // (where the reporters counted their requests) more than 3 standard
  // deviations of a Poisson count away from it: noise moves nothing. A
  // counted rate is raised by 3 standard deviations of its count: the
  // highest rate the measurement does not rule out is what is planned for.
  std::map<std::string, double> MovedRates() const;
  // Every service's observed traffic over the reporters: rates summed,
  // compliance weighted by rate, the highest p99.
  struct ObservedSum {
    double rate_rps = 0;
    std::optional<double> compliance, p99_ms;
    int reporters = 0;
    double requests = 0;  // the counts the rates come from
    bool counted = true;  // every reporter gave its count
  };
  std::map<std::string, ObservedSum> SummedObserved() const;
  ApiResponse GetObserved();
  // Auto mode on the observed rates: a re-plan once they have stayed beyond
  // the threshold for replan_hold_s.
  void OnObserved();
  // Auto mode by the autoscaling policy: the minute's observed rates fed
  // once it ends, and a move started when the policy decides one.
  void Autoscale();
  void AutoscaleMove();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<ControlStore> store_;
  ControlOptions options_;
  ExtraMetrics extra_;
  bool shutdown_ = false;

  int64_t version_ = 0;
  std::optional<Scenario> scenario_;
  std::optional<int64_t> deployment_id_;
  std::optional<Deployment> deployment_;
  std::string deployment_metrics_;  // the deployment's metrics object (JSON text)
  std::optional<Active> active_;
  // GET /v1/deployment's reply, built once per change ("" when stale): the
  // body, its strong ETag, and the gzip copy (made on the first request
  // accepting gzip).
  struct DeploymentReply {
    std::string body;
    std::string etag;
    std::string gzip;
  };
  DeploymentReply deployment_reply_;
  std::map<std::string, std::string> node_work_;  // by node, for node_work_version_
  // Every node's plan at node_work_version_, built once for all nodes.
  std::optional<std::map<std::string, NodePlan>> node_plans_;
  int64_t node_work_version_ = -1;
  // By reporter: a node's name, or RouterStepNode of a router's.
  std::map<std::string, std::map<std::string, ObservedRate>> observed_;
  std::map<std::string, std::string> router_seen_;  // router -> its last report's time
  std::map<std::string, std::string> router_work_;  // by router, for router_work_version_
  std::optional<std::vector<RouterBackend>> router_backends_;  // at router_work_version_
  int64_t router_work_version_ = -1;
  std::optional<double> beyond_since_ms_;  // observed rates beyond the threshold since
  // The autoscaling policy (options_.autoscale), made with the scenario.
  std::unique_ptr<Autoscaler> autoscaler_;
  std::optional<int64_t> autoscaled_plan_;  // the plan the policy knows as running
  std::optional<double> minute_began_ms_;   // the policy's minute under way
  std::vector<double> minute_sums_;         // its summed observed rates, per report
  int minute_reports_ = 0;
  std::string autoscale_note_;  // what the policy last did
  StoreView view_;              // the store's last answer to Observe
  bool viewed_ = false;         // view_ holds an answer
  bool loaded_ = true;          // the cache holds the store's state (Open loaded it)
  int64_t leadership_changes_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_CONTROL_CONTROL_PLANE_IMPL_H_
