// ControlPlane: routing, the state cached from the store, planning,
// transitions and the node agents' work (control_plane.h).
#include "tessera/control/control_plane.h"

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
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

constexpr int kDefaultListLimit = 50;
constexpr InputRange kListLimit{1, 1000, false, true};
constexpr InputRange kWaitS{0, 60};
// Transitions counted for /metrics: every one the store holds.
constexpr int kAllTransitions = INT_MAX;

std::string Dump(const OJson& j) { return j.dump(-1, ' ', false, OJson::error_handler_t::replace); }

ApiResponse JsonResponse(int status, const OJson& body) {
  ApiResponse r;
  r.status = status;
  r.body = Dump(body);
  return r;
}

ApiError NoRouter(const std::string& router) {
  return NotFoundError("no router '" + router +
                       "' (tessera serve --router-agent names the routers)");
}

ApiResponse ErrorResponse(const ApiError& error) {
  ApiResponse r;
  r.status = error.status;
  r.body = FormatApiError(error);
  return r;
}

std::string SystemWallTime() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<std::string> SplitPath(const std::string& path) {
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
std::optional<int64_t> ParseId(const std::string& text) {
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
ApiResult<double> QueryNumber(const ApiRequest& request, const std::string& key,
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
Status ApplyServiceUpdates(const std::vector<StoredService>& updates, Json& j) {
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
bool IfNoneMatchHits(std::string_view header, std::string_view etag) {
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

Deployment EmptyDeploymentLike(const Deployment& to) {
  Deployment empty;
  empty.gpu = to.gpu;
  empty.planner = to.planner;
  empty.sharing = to.sharing;
  empty.rule = to.rule;
  empty.rule_recorded = to.rule_recorded;
  return empty;
}

OJson PlanSummaryJson(const StoredPlan& plan) {
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

}  // namespace

class ControlPlane::Impl {
 public:
  Impl(std::unique_ptr<ControlStore> store, ControlOptions options)
      : store_(std::move(store)), options_(std::move(options)) {
    if (!options_.wall_time) options_.wall_time = SystemWallTime;
    if (options_.clock == nullptr) options_.clock = &SystemClock();
  }

  Status Load();
  ApiResponse Handle(const ApiRequest& request);

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
};

Status ControlPlane::Impl::RefreshVersion() {
  TESSERA_ASSIGN_OR_RETURN(const int64_t version, store_->Version());
  if (version != version_) {
    version_ = version;
    cv_.notify_all();
  }
  return Status::Ok();
}

Status ControlPlane::Impl::SetScenario(const Scenario& scenario) {
  TESSERA_RETURN_IF_ERROR(ProblemOf(scenario).status());
  scenario_ = scenario;
  return Status::Ok();
}

void ControlPlane::Impl::SetDeploymentCache(int64_t id, Deployment deployment) {
  deployment_id_ = id;
  deployment_metrics_ = Dump(MetricsJson(deployment));
  deployment_ = std::move(deployment);
  deployment_reply_ = {};
}

ApiResult<Deployment> ControlPlane::Impl::LoadPlanDeployment(int64_t id) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<StoredPlan> plan, store_->Plan(id));
  if (!plan) return NotFoundError(fmt::format("no plan {}", id));
  Result<Deployment> d = ParseDeploymentJson(plan->deployment_json, fmt::format("plan {}", id));
  if (!d.ok()) return InternalError(d.status().message());
  return std::move(d).value();
}

Status ControlPlane::Impl::Load() {
  TESSERA_RETURN_IF_ERROR(RefreshVersion());
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> scenario_text, store_->Scenario());
  if (scenario_text) {
    Json j = Json::parse(*scenario_text, nullptr, false);
    if (j.is_discarded()) return Status::InvalidArgument("stored scenario: invalid JSON");
    TESSERA_ASSIGN_OR_RETURN(std::vector<StoredService> updates, store_->ServiceUpdates());
    TESSERA_RETURN_IF_ERROR(ApplyServiceUpdates(updates, j));
    TESSERA_ASSIGN_OR_RETURN(Scenario scenario, ScenarioFromJson(j, "stored scenario"));
    TESSERA_RETURN_IF_ERROR(SetScenario(scenario));
  }
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> deployed, store_->DeploymentPlan());
  if (deployed) {
    ApiResult<Deployment> d = LoadPlanDeployment(*deployed);
    if (!d.ok()) return Status::Internal("stored deployment: " + d.error().message);
    // The deployment is the target of the last transition done into it, as
    // that transition placed it on the cluster's GPUs.
    TESSERA_ASSIGN_OR_RETURN(std::vector<StoredTransition> done, store_->TransitionsIn("done"));
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      if (it->to_plan != *deployed) continue;
      TESSERA_ASSIGN_OR_RETURN(*d, Placed(*it, *d));
      break;
    }
    SetDeploymentCache(*deployed, std::move(*d));
  }
  for (const char* state : {"running", "paused"}) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<StoredTransition> found, store_->TransitionsIn(state));
    for (StoredTransition& t : found) {
      ApiResult<Deployment> target = LoadPlanDeployment(t.to_plan);
      if (!target.ok()) return Status::Internal("stored transition: " + target.error().message);
      Result<Transition> parsed = ParseTransitionJson(t.transition_json, "stored transition");
      if (!parsed.ok()) return parsed.status();
      active_ = Active{std::move(t), std::move(*target), parsed->gpu_map};
    }
  }
  return Status::Ok();
}

ApiResponse ControlPlane::Impl::Handle(const ApiRequest& request) {
  try {
    return Route(request);
  } catch (const std::exception& e) {
    return ErrorResponse(InternalError(std::string("internal error: ") + e.what()));
  } catch (...) {
    return ErrorResponse(InternalError("internal error"));
  }
}

ApiResponse ControlPlane::Impl::Route(const ApiRequest& request) {
  const std::vector<std::string> p = SplitPath(request.path);
  const std::string& m = request.method;
  std::string route;
  std::function<ApiResponse()> run;
  // Mutations carry JSON.
  auto body_ok = [&]() -> std::optional<ApiError> {
    if (request.body.empty()) return std::nullopt;
    std::string type = request.content_type.substr(0, request.content_type.find(';'));
    while (!type.empty() && type.back() == ' ') type.pop_back();
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type == "application/json") return std::nullopt;
    return ApiError{
        415, "unsupported_media_type",
        "the body's Content-Type must be application/json, got '" + request.content_type + "'",
        std::nullopt};
  };
  std::string allowed;
  auto on = [&](const std::string& method, std::function<ApiResponse()> f) {
    allowed += allowed.empty() ? method : ", " + method;
    if (m == method) run = std::move(f);
  };
  if (p.size() == 1 && p[0] == "healthz") {
    route = "/healthz";
    on("GET", [] { return JsonResponse(200, OJson{{"status", "ok"}}); });
  } else if (p.size() == 1 && p[0] == "readyz") {
    route = "/readyz";
    on("GET", [&] { return Ready(); });
  } else if (p.size() == 1 && p[0] == "metrics") {
    route = "/metrics";
    on("GET", [&] { return Metrics(); });
  } else if (p.size() >= 2 && p[0] == "v1") {
    const std::string& what = p[1];
    if (what == "scenario" && p.size() == 2) {
      route = "/v1/scenario";
      on("GET", [&] { return GetScenario(); });
      on("PUT", [&] { return PutScenario(request); });
    } else if (what == "services" && p.size() == 3) {
      route = "/v1/services/{name}";
      on("PATCH", [&] { return PatchService(request, p[2]); });
    } else if (what == "plans" && p.size() == 2) {
      route = "/v1/plans";
      on("GET", [&] { return ListPlans(request); });
      on("POST", [&] { return PostPlan(request); });
    } else if (what == "plans" && (p.size() == 3 || (p.size() == 4 && p[3] == "svg"))) {
      route = p.size() == 3 ? "/v1/plans/{id}" : "/v1/plans/{id}/svg";
      on("GET", [&] {
        const std::optional<int64_t> id = ParseId(p[2]);
        if (!id) return ErrorResponse(NotFoundError("no plan '" + p[2] + "'"));
        return GetPlan(*id, p.size() == 4);
      });
    } else if (what == "deployment" && p.size() == 2) {
      route = "/v1/deployment";
      on("GET", [&] { return GetDeployment(request); });
    } else if (what == "deployment" && p.size() == 3 && p[2] == "svg") {
      route = "/v1/deployment/svg";
      on("GET", [&] { return GetDeploymentSvg(); });
    } else if (what == "transitions" && p.size() == 2) {
      route = "/v1/transitions";
      on("GET", [&] { return ListTransitions(request); });
      on("POST", [&] { return PostTransition(request); });
    } else if (what == "transitions" && p.size() == 3) {
      route = "/v1/transitions/{id}";
      on("GET", [&] {
        const std::optional<int64_t> id = ParseId(p[2]);
        if (!id) return ErrorResponse(NotFoundError("no transition '" + p[2] + "'"));
        return GetTransition(*id);
      });
    } else if (what == "transitions" && p.size() == 4 &&
               (p[3] == "start" || p[3] == "resume" || p[3] == "abort")) {
      route = "/v1/transitions/{id}/" + p[3];
      on("POST", [&] {
        const std::optional<int64_t> id = ParseId(p[2]);
        if (!id) return ErrorResponse(NotFoundError("no transition '" + p[2] + "'"));
        if (!request.body.empty()) {
          ApiResult<Json> body = ParseJsonBody(request.body);
          if (!body.ok()) return ErrorResponse(body.error());
          if (!body->is_object() || !body->empty()) {
            return ErrorResponse(ApiError{
                400, "invalid_argument", "(root): expected {}, got " + body->dump(), std::nullopt});
          }
        }
        return ChangeTransition(*id, p[3]);
      });
    } else if (what == "nodes" && p.size() == 2) {
      route = "/v1/nodes";
      on("GET", [&] { return ListNodes(); });
    } else if (what == "nodes" && p.size() == 4 && p[3] == "plan") {
      route = "/v1/nodes/{node}/plan";
      on("GET", [&] { return GetNodeWork(request, p[2]); });
    } else if (what == "nodes" && p.size() == 4 && p[3] == "status") {
      route = "/v1/nodes/{node}/status";
      on("POST", [&] { return PostNodeStatus(request, p[2]); });
    } else if (what == "observed" && p.size() == 2) {
      route = "/v1/observed";
      on("GET", [&] { return GetObserved(); });
    } else if (what == "routers" && p.size() == 2) {
      route = "/v1/routers";
      on("GET", [&] { return ListRouters(); });
    } else if (what == "routers" && p.size() == 4 && p[3] == "work") {
      route = "/v1/routers/{name}/work";
      on("GET", [&] { return GetRouterWork(request, p[2]); });
    } else if (what == "routers" && p.size() == 4 && p[3] == "status") {
      route = "/v1/routers/{name}/status";
      on("POST", [&] { return PostRouterStatus(request, p[2]); });
    }
  }
  ApiResponse response;
  if (route.empty()) {
    response = ErrorResponse(NotFoundError("no route " + request.path));
  } else if (!run) {
    response = ErrorResponse(ApiError{405, "method_not_allowed",
                                      fmt::format("{} allows {}", route, allowed), std::nullopt});
  } else if (std::optional<ApiError> media = m != "GET" ? body_ok() : std::nullopt; media) {
    response = ErrorResponse(*media);
  } else {
    response = run();
  }
  response.route = route.empty() ? "unmatched" : route;
  return response;
}

ApiResponse ControlPlane::Impl::Ready() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<int64_t> version = store_->Version();
  if (!version.ok()) {
    return ErrorResponse(
        ApiError{503, "unavailable", "store: " + version.status().message(), std::nullopt});
  }
  return JsonResponse(200, OJson{{"status", "ready"}});
}

ApiResponse ControlPlane::Impl::GetScenario() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!scenario_) return ErrorResponse(NotFoundError("no scenario yet: PUT /v1/scenario"));
  return JsonResponse(200, ScenarioToJson(*scenario_));
}

ApiResponse ControlPlane::Impl::PutScenario(const ApiRequest& request) {
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<Scenario> scenario = ScenarioFromJson(*body, kBodySource);
  if (!scenario.ok()) return ErrorResponse(ErrorFromStatus(scenario.status()));
  // A scenario the planning inputs cannot plan (a model without profiles,
  // an unknown GPU: NotFound to the builder) is an invalid body here.
  Result<Problem> problem = ProblemOf(*scenario);
  if (!problem.ok()) {
    ApiError error = ErrorFromStatus(problem.status());
    if (error.status != 400 && error.status != 404) return ErrorResponse(error);
    return ErrorResponse(
        ApiError{400, "invalid_argument", problem.status().message(), std::nullopt});
  }
  const OJson j = ScenarioToJson(*scenario);
  std::lock_guard<std::mutex> lock(mu_);
  if (Status s = store_->PutScenario(Dump(j)); !s.ok()) return ErrorResponse(ErrorFromStatus(s));
  scenario_ = std::move(scenario).value();
  return JsonResponse(200, OJson{{"scenario", j}});
}

ApiResult<StoredPlan> ControlPlane::Impl::PlanScenario(const Scenario& scenario,
                                                       const PlanBody& body) {
  const bool incremental = body.incremental.value_or(deployment_.has_value());
  if (incremental && !deployment_) {
    return ConflictError("no deployment to plan incrementally from: plan with incremental false");
  }
  PlanRequest request;
  request.inputs = options_.inputs;
  request.scenario = scenario;
  request.planner = body.planner.value_or(options_.default_planner);
  request.search.time_limit_s = body.time_limit_s.value_or(options_.plan_time_limit_s);
  if (incremental) {
    request.current = *deployment_;
    request.max_extra_gpus = body.max_extra_gpus;
  }
  // The planner's name is the request's; every other input is the daemon's,
  // so any other error is a conflict with the state, not a bad request.
  if (Status known = BuiltinPlanners().Check(PlannerFor(request)); !known.ok()) {
    return ApiError{400, "invalid_argument", "planner: " + known.message(), std::string("planner")};
  }
  Result<PlanRun> run = Plan(request);
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kInternal) return InternalError(run.status().message());
    return ConflictError(run.status().message());
  }
  // The plan's GPUs on the nodes this plane deploys to (its JSON and SVG
  // name them), not the planner's default of eight GPUs a node.
  for (GpuAssignment& g : run->deployment.gpus) g.node = g.index / options_.deploy.gpus_per_node;
  const Deployment& d = run->deployment;
  OJson increment = nullptr;
  if (run->increment) {
    increment = OJson{{"kept", run->increment->kept},
                      {"moved", run->increment->moved},
                      {"added", run->increment->added},
                      {"removed", run->increment->removed}};
  }
  if (run->outcome == PlanOutcome::kInfeasible) {
    std::string why;
    for (const ServiceOutcome& s : d.services) {
      if (s.status == ServiceStatus::kInfeasible) why += fmt::format("; {}: {}", s.name, s.reason);
    }
    return ConflictError("no plan serves the scenario" + why);
  }
  OJson metrics = MetricsJson(d);
  metrics["incremental"] = increment;
  StoredPlan plan;
  plan.created_at = options_.wall_time();
  plan.planner = d.planner;
  plan.scenario_json = Dump(ScenarioToJson(scenario));
  plan.deployment_json = FormatDeploymentJson(d);
  plan.metrics_json = Dump(metrics);
  TESSERA_ASSIGN_OR_RETURN(plan.id, store_->AddPlan(plan));
  return plan;
}

ApiResponse ControlPlane::Impl::PostPlan(const ApiRequest& request) {
  ApiResult<Json> body = ParseJsonBody(request.body.empty() ? "{}" : request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<PlanBody> plan_request = PlanBodyFromJson(*body);
  if (!plan_request.ok()) return ErrorResponse(ErrorFromStatus(plan_request.status()));
  std::lock_guard<std::mutex> lock(mu_);
  if (!scenario_) return ErrorResponse(ConflictError("no scenario yet: PUT /v1/scenario"));
  Scenario scenario = *scenario_;
  for (const auto& [name, rate] : plan_request->rates) {
    auto it = std::find_if(scenario.services.begin(), scenario.services.end(),
                           [&](const Service& s) { return s.name == name; });
    if (it == scenario.services.end()) {
      return ErrorResponse(ApiError{400, "invalid_argument",
                                    "rates." + name + ": no such service in the scenario",
                                    "rates." + name});
    }
    it->rate_rps = rate;
  }
  ApiResult<StoredPlan> plan = PlanScenario(scenario, *plan_request);
  if (!plan.ok()) return ErrorResponse(plan.error());
  return JsonResponse(201, PlanSummaryJson(*plan));
}

ApiResponse ControlPlane::Impl::ListPlans(const ApiRequest& request) {
  ApiResult<double> limit = QueryNumber(request, "limit", kListLimit, kDefaultListLimit);
  if (!limit.ok()) return ErrorResponse(limit.error());
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::vector<StoredPlan>> plans = store_->Plans(static_cast<int>(*limit));
  if (!plans.ok()) return ErrorResponse(ErrorFromStatus(plans.status()));
  OJson list = OJson::array();
  for (const StoredPlan& plan : *plans) list.push_back(PlanSummaryJson(plan));
  return JsonResponse(200, OJson{{"plans", std::move(list)}});
}

ApiResponse ControlPlane::Impl::GetPlan(int64_t id, bool svg) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::optional<StoredPlan>> plan = store_->Plan(id);
  if (!plan.ok()) return ErrorResponse(ErrorFromStatus(plan.status()));
  if (!*plan) return ErrorResponse(NotFoundError(fmt::format("no plan {}", id)));
  const StoredPlan& stored = **plan;
  if (svg) {
    Result<Deployment> d = ParseDeploymentJson(stored.deployment_json, "plan");
    if (!d.ok()) return ErrorResponse(InternalError(d.status().message()));
    Result<const GpuModel*> gpu = FindGpu(d->gpu);
    if (!gpu.ok()) return ErrorResponse(InternalError(gpu.status().message()));
    ApiResponse r;
    r.content_type = "image/svg+xml";
    r.body = FormatDeploymentSvg(*d, **gpu);
    return r;
  }
  OJson j = PlanSummaryJson(stored);
  j["scenario"] = OJson::parse(stored.scenario_json, nullptr, false);
  j["deployment"] = OJson::parse(stored.deployment_json, nullptr, false);
  return JsonResponse(200, j);
}

ApiResponse ControlPlane::Impl::GetDeployment(const ApiRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  DeploymentReply& cached = deployment_reply_;
  if (cached.body.empty()) {
    const std::string transition =
        active_ ? std::to_string(active_->stored.id) : std::string("null");
    if (deployment_) {
      std::string deployment = FormatDeploymentJson(*deployment_);
      while (!deployment.empty() && deployment.back() == '\n') deployment.pop_back();
      cached.body =
          fmt::format(R"({{"plan": {}, "deployment": {}, "metrics": {}, "transition": {}}})",
                      *deployment_id_, deployment, deployment_metrics_, transition);
    } else {
      cached.body = fmt::format(
          R"({{"plan": null, "deployment": null, "metrics": null, "transition": {}}})", transition);
    }
    cached.etag = fmt::format("\"{:016x}\"", std::hash<std::string>{}(cached.body));
  }
  if (request.accepts_gzip && cached.gzip.empty()) {
    Result<std::string> gzip = GzipCompress(cached.body);
    if (!gzip.ok()) return ErrorResponse(InternalError(gzip.status().message()));
    cached.gzip = std::move(gzip).value();
  }
  // A strong ETag names one representation: the gzip copy has its own.
  const std::string etag = request.accepts_gzip
                               ? cached.etag.substr(0, cached.etag.size() - 1) + "-gzip\""
                               : cached.etag;
  ApiResponse r;
  // Not exactly "application/json": the HTTP layer compresses only that, and
  // this body is either sent as is or as the gzip copy made once above.
  r.content_type = "application/json; charset=utf-8";
  r.headers = {{"ETag", etag}, {"Vary", "Accept-Encoding"}};
  if (IfNoneMatchHits(request.if_none_match, etag)) {
    r.status = 304;
  } else if (request.accepts_gzip) {
    r.headers.emplace_back("Content-Encoding", "gzip");
    r.body = cached.gzip;
  } else {
    r.body = cached.body;
  }
  return r;
}

ApiResponse ControlPlane::Impl::GetDeploymentSvg() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!deployment_) return ErrorResponse(NotFoundError("no deployment yet"));
  Result<const GpuModel*> gpu = FindGpu(deployment_->gpu);
  if (!gpu.ok()) return ErrorResponse(InternalError(gpu.status().message()));
  ApiResponse r;
  r.content_type = "image/svg+xml";
  r.body = FormatDeploymentSvg(*deployment_, **gpu);
  return r;
}

ApiResult<OJson> ControlPlane::Impl::TransitionJson(const StoredTransition& t, bool full) {
  Result<OJson> j = TransitionView(t, full);
  if (!j.ok()) return InternalError(j.status().message());
  return std::move(j).value();
}

ApiResult<StoredTransition> ControlPlane::Impl::MakeTransition(int64_t to, int spare_gpus) {
  ApiResult<Deployment> target = LoadPlanDeployment(to);
  if (!target.ok()) {
    ApiError error = target.error();
    if (error.status == 404) error.field = "to";
    return error;
  }
  const Deployment from = deployment_ ? *deployment_ : EmptyDeploymentLike(*target);
  TransitionOptions topts;
  topts.spare_gpus = spare_gpus;
  Result<TransitionPlan> planned = PlanTransition(from, *target, topts);
  if (!planned.ok()) return ConflictError("no transition: " + planned.status().message());
  if (!planned->transition) {
    return ConflictError(
        fmt::format("no transition to plan {} within {} spare GPU(s): it needs {}; {}", to,
                    spare_gpus, planned->spare_gpus_needed, planned->reason));
  }
  const Transition& t = *planned->transition;
  const TransitionCheck check = CheckTransition(from, *target, t);
  if (!check.ok()) {
    return InternalError("the transition checker rejects the planned transition: " +
                         check.violations.front());
  }
  StoredTransition stored;
  stored.from_plan = deployment_id_;
  stored.to_plan = to;
  stored.transition_json = FormatTransitionJson(t);
  stored.check_json = FormatTransitionCheckJson(check);
  stored.created_at = options_.wall_time();
  stored.updated_at = stored.created_at;
  stored.steps = StoredStepsOf(t, options_.deploy, options_.routers);
  TESSERA_ASSIGN_OR_RETURN(stored.id, store_->AddTransition(stored));
  return stored;
}

Status ControlPlane::Impl::Commit(StoredTransition t) {
  const bool done = t.state == "done";
  const bool in_flight = t.state == "running" || t.state == "paused";
  std::optional<Deployment> target;
  if (done || in_flight) {
    if (active_ && active_->stored.id == t.id) {
      target = active_->target;
    } else {
      ApiResult<Deployment> d = LoadPlanDeployment(t.to_plan);
      if (!d.ok()) return Status::Internal(d.error().message);
      target = std::move(*d);
    }
  }
  // Done: the cluster holds the target placed on its GPUs (PlacedOnCluster).
  std::optional<int64_t> deployed;
  if (done) {
    TESSERA_ASSIGN_OR_RETURN(*target, Placed(t, *target));
    deployed = t.to_plan;
  }
  TESSERA_RETURN_IF_ERROR(store_->UpdateTransition(t, deployed));
  deployment_reply_ = {};
  if (done) {
    SetDeploymentCache(t.to_plan, std::move(*target));
    active_.reset();
  } else if (in_flight) {
    Result<Transition> parsed = ParseTransitionJson(t.transition_json, "transition");
    if (!parsed.ok()) return Status::Internal(parsed.status().message());
    active_ = Active{std::move(t), std::move(*target), parsed->gpu_map};
  } else if (active_ && active_->stored.id == t.id) {
    active_.reset();
  }
  return RefreshVersion();
}

Result<Deployment> ControlPlane::Impl::Placed(const StoredTransition& t, const Deployment& target) {
  Result<Transition> parsed = ParseTransitionJson(t.transition_json, "transition");
  if (!parsed.ok()) return Status::Internal(parsed.status().message());
  return PlacedOnCluster(target, *parsed);
}

ApiResult<StoredTransition> ControlPlane::Impl::Start(StoredTransition t) {
  if (active_ && active_->stored.id != t.id) {
    return ConflictError(fmt::format("transition {} is {}: one runs at a time", active_->stored.id,
                                     active_->stored.state));
  }
  if (t.from_plan != deployment_id_) {
    return ConflictError(
        fmt::format("transition {} is stale: it starts from plan {}, the deployment is {}", t.id,
                    t.from_plan ? std::to_string(*t.from_plan) : "none",
                    deployment_id_ ? "plan " + std::to_string(*deployment_id_) : "none"));
  }
  if (Status s = StartRollout(t, options_.wall_time()); !s.ok()) return ConflictError(s.message());
  TESSERA_RETURN_IF_ERROR(Commit(t));
  return t;
}

ApiResponse ControlPlane::Impl::PostTransition(const ApiRequest& request) {
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<TransitionRequest> tr = TransitionRequestFromJson(*body);
  if (!tr.ok()) return ErrorResponse(ErrorFromStatus(tr.status()));
  std::lock_guard<std::mutex> lock(mu_);
  if (tr->start && active_) {
    return ErrorResponse(ConflictError(fmt::format("transition {} is {}: one runs at a time",
                                                   active_->stored.id, active_->stored.state)));
  }
  ApiResult<StoredTransition> t =
      MakeTransition(tr->to, tr->spare_gpus.value_or(options_.spare_gpus));
  if (!t.ok()) return ErrorResponse(t.error());
  if (tr->start) {
    t = Start(std::move(*t));
    if (!t.ok()) return ErrorResponse(t.error());
  }
  ApiResult<OJson> j = TransitionJson(*t, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(201, *j);
}

ApiResponse ControlPlane::Impl::ListTransitions(const ApiRequest& request) {
  ApiResult<double> limit = QueryNumber(request, "limit", kListLimit, kDefaultListLimit);
  if (!limit.ok()) return ErrorResponse(limit.error());
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::vector<StoredTransition>> list = store_->Transitions(static_cast<int>(*limit));
  if (!list.ok()) return ErrorResponse(ErrorFromStatus(list.status()));
  OJson out = OJson::array();
  for (const StoredTransition& t : *list) {
    ApiResult<OJson> j = TransitionJson(t, false);
    if (!j.ok()) return ErrorResponse(j.error());
    out.push_back(std::move(*j));
  }
  return JsonResponse(200, OJson{{"transitions", std::move(out)}});
}

ApiResponse ControlPlane::Impl::GetTransition(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::optional<StoredTransition>> t = store_->Transition(id);
  if (!t.ok()) return ErrorResponse(ErrorFromStatus(t.status()));
  if (!*t) return ErrorResponse(NotFoundError(fmt::format("no transition {}", id)));
  ApiResult<OJson> j = TransitionJson(**t, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(200, *j);
}

ApiResponse ControlPlane::Impl::ChangeTransition(int64_t id, const std::string& action) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::optional<StoredTransition>> found = store_->Transition(id);
  if (!found.ok()) return ErrorResponse(ErrorFromStatus(found.status()));
  if (!*found) return ErrorResponse(NotFoundError(fmt::format("no transition {}", id)));
  StoredTransition t = std::move(**found);
  ApiResult<StoredTransition> changed = t;
  if (action == "start") {
    if (t.state != "proposed") {
      return ErrorResponse(
          ConflictError(fmt::format("transition {} is {}: cannot start", id, t.state)));
    }
    changed = Start(std::move(t));
  } else {
    const std::string now = options_.wall_time();
    Status s = action == "resume" ? ResumeRollout(t, now) : AbortRollout(t, now);
    if (!s.ok()) return ErrorResponse(ConflictError(s.message()));
    if (Status c = Commit(t); !c.ok()) return ErrorResponse(ErrorFromStatus(c));
    changed = t;
  }
  if (!changed.ok()) return ErrorResponse(changed.error());
  ApiResult<OJson> j = TransitionJson(*changed, true);
  if (!j.ok()) return ErrorResponse(j.error());
  return JsonResponse(200, *j);
}

std::pair<double, std::string> ControlPlane::Impl::WorstChange(
    const std::map<std::string, double>& rates) const {
  double worst = 0;
  std::string moved;
  if (!deployment_) return {worst, moved};
  for (const ServiceOutcome& s : deployment_->services) {
    auto it = rates.find(s.name);
    if (it == rates.end() || s.rate_rps <= 0) continue;
    const double change = std::abs(it->second - s.rate_rps) / s.rate_rps;
    if (change > worst) {
      worst = change;
      moved = s.name;
    }
  }
  return {worst, moved};
}

std::map<std::string, ControlPlane::Impl::ObservedSum> ControlPlane::Impl::SummedObserved() const {
  std::map<std::string, ObservedSum> out;
  std::map<std::string, double> weighted;  // rate x compliance
  for (const auto& [reporter, services] : observed_) {
    for (const auto& [name, rate] : services) {
      ObservedSum& sum = out[name];
      sum.rate_rps += rate.rate_rps;
      ++sum.reporters;
      if (rate.requests) {
        sum.requests += static_cast<double>(*rate.requests);
      } else {
        sum.counted = false;
      }
      if (rate.slo_compliance) {
        weighted[name] += rate.rate_rps * *rate.slo_compliance;
        sum.compliance = 0;
      }
      if (rate.p99_ms) sum.p99_ms = std::max(sum.p99_ms.value_or(0), *rate.p99_ms);
    }
  }
  for (auto& [name, sum] : out) {
    if (sum.compliance) sum.compliance = sum.rate_rps > 0 ? weighted[name] / sum.rate_rps : 1;
  }
  return out;
}

ApiResponse ControlPlane::Impl::GetObserved() {
  std::lock_guard<std::mutex> lock(mu_);
  OJson services = OJson::object();
  for (const auto& [name, sum] : SummedObserved()) {
    services[name] =
        OJson{{"rate_rps", sum.rate_rps},
              {"slo_compliance", sum.compliance ? OJson(*sum.compliance) : OJson(nullptr)},
              {"p99_ms", sum.p99_ms ? OJson(*sum.p99_ms) : OJson(nullptr)},
              {"reporters", sum.reporters}};
  }
  return JsonResponse(200, OJson{{"services", std::move(services)}});
}

std::map<std::string, double> ControlPlane::Impl::MovedRates() const {
  const std::map<std::string, ObservedSum> sums = SummedObserved();
  std::map<std::string, double> moved;
  if (!deployment_) return moved;
  for (const ServiceOutcome& s : deployment_->services) {
    const auto it = sums.find(s.name);
    if (it == sums.end() || !(it->second.rate_rps > 0) || s.rate_rps <= 0) continue;
    const ObservedSum& sum = it->second;
    if (std::abs(sum.rate_rps - s.rate_rps) / s.rate_rps <= options_.replan_threshold) continue;
    double plan_for = sum.rate_rps;
    if (sum.counted) {
      // The planned rate's count over the same time as the observed one.
      const double expected = s.rate_rps * sum.requests / sum.rate_rps;
      if (std::abs(sum.requests - expected) <= 3 * std::sqrt(std::max(expected, 1.0))) continue;
      // Plan for the highest rate the count does not rule out (3 standard
      // deviations up), not for the count's own noise.
      plan_for = sum.rate_rps * (1 + 3 / std::sqrt(std::max(sum.requests, 1.0)));
    }
    moved[s.name] = plan_for;
  }
  return moved;
}

void ControlPlane::Impl::OnObserved() {
  if (!options_.auto_mode || !scenario_) return;
  const std::map<std::string, double> rates = MovedRates();
  if (rates.empty() || active_) {
    beyond_since_ms_.reset();
    return;
  }
  const double now = options_.clock->NowMs();
  if (!beyond_since_ms_) beyond_since_ms_ = now;
  if (now - *beyond_since_ms_ < options_.replan_hold_s * 1000) return;
  beyond_since_ms_.reset();
  std::string note;
  MaybeReplan(rates, note);
}

std::optional<OJson> ControlPlane::Impl::MaybeReplan(const std::map<std::string, double>& rates,
                                                     std::string& note) {
  if (!deployment_) {
    note = "no deployment: nothing to re-plan";
    return std::nullopt;
  }
  if (active_) {
    note = fmt::format("transition {} is {}: no re-plan now", active_->stored.id,
                       active_->stored.state);
    return std::nullopt;
  }
  const auto [worst, moved] = WorstChange(rates);
  if (worst <= options_.replan_threshold) {
    note = fmt::format("rates within {:g}% of the deployment's: no re-plan",
                       options_.replan_threshold * 100);
    return std::nullopt;
  }
  Scenario scenario = *scenario_;
  for (Service& s : scenario.services) {
    auto it = rates.find(s.name);
    if (it != rates.end()) s.rate_rps = it->second;
  }
  PlanBody body;
  body.incremental = true;
  ApiResult<StoredPlan> plan = PlanScenario(scenario, body);
  if (!plan.ok()) {
    note = "re-plan failed: " + plan.error().message;
    return std::nullopt;
  }
  ApiResult<StoredTransition> t = MakeTransition(plan->id, options_.spare_gpus);
  if (t.ok()) t = Start(std::move(*t));
  if (!t.ok()) {
    note =
        fmt::format("re-planned (plan {}), no transition started: {}", plan->id, t.error().message);
    return OJson{{"plan", PlanSummaryJson(*plan)}, {"transition", nullptr}};
  }
  ApiResult<OJson> tj = TransitionJson(*t, true);
  if (!tj.ok()) {
    note = tj.error().message;
    return std::nullopt;
  }
  note =
      fmt::format("{} moved {:.1f}% (threshold {:g}%): re-planned (plan {}), transition {} {}",
                  moved, worst * 100, options_.replan_threshold * 100, plan->id, t->id, t->state);
  return OJson{{"plan", PlanSummaryJson(*plan)}, {"transition", std::move(*tj)}};
}

ApiResponse ControlPlane::Impl::PatchService(const ApiRequest& request, const std::string& name) {
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<ServicePatch> patch = ServicePatchFromJson(*body);
  if (!patch.ok()) return ErrorResponse(ErrorFromStatus(patch.status()));
  std::lock_guard<std::mutex> lock(mu_);
  if (!scenario_) return ErrorResponse(ConflictError("no scenario yet: PUT /v1/scenario"));
  auto it = std::find_if(scenario_->services.begin(), scenario_->services.end(),
                         [&](const Service& s) { return s.name == name; });
  if (it == scenario_->services.end()) {
    return ErrorResponse(NotFoundError("no service '" + name + "' in the scenario"));
  }
  Service service = *it;
  if (patch->rate_rps) service.rate_rps = *patch->rate_rps;
  if (patch->slo_ms) service.slo_ms = *patch->slo_ms;
  OJson out;
  out["service"] = ServiceToJson(service);
  // One row for the one service, not the whole scenario rewritten.
  if (Status s = store_->PutService({service.name, Dump(out["service"])}); !s.ok()) {
    return ErrorResponse(ErrorFromStatus(s));
  }
  *it = service;
  std::string note;
  std::optional<OJson> replan;
  if (patch->replan.value_or(options_.auto_mode)) {
    replan = MaybeReplan({{service.name, service.rate_rps}}, note);
  } else {
    note = patch->replan ? "replan false: no re-plan" : "auto mode off: no re-plan";
  }
  out["replan"] = replan ? *replan : OJson(nullptr);
  out["note"] = note;
  return JsonResponse(200, out);
}

ApiResponse ControlPlane::Impl::ListNodes() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::vector<StoredNode>> nodes = store_->Nodes();
  if (!nodes.ok()) return ErrorResponse(ErrorFromStatus(nodes.status()));
  OJson list = OJson::array();
  for (const StoredNode& n : *nodes) {
    OJson status = OJson::parse(n.status_json, nullptr, false);
    list.push_back(OJson{{"node", n.node},
                         {"updated_at", n.updated_at},
                         {"status", status.is_discarded() ? OJson(nullptr) : status}});
  }
  return JsonResponse(200, OJson{{"nodes", std::move(list)}});
}

ApiResult<int> ControlPlane::Impl::NodeIndex(const std::string& node) const {
  const std::vector<std::string>& names = options_.deploy.node_names;
  auto it = std::find(names.begin(), names.end(), node);
  if (it != names.end()) return static_cast<int>(it - names.begin());
  const std::string prefix = "node-";
  if (node.rfind(prefix, 0) == 0) {
    std::optional<int64_t> k = ParseId(node.substr(prefix.size()));
    if (node == "node-0") k = 0;
    if (k && limits::kNodeIndex.Contains(static_cast<double>(*k)) &&
        NodeName(options_.deploy, static_cast<int>(*k)) == node) {
      return static_cast<int>(*k);
    }
  }
  return NotFoundError("no node '" + node + "'");
}

ApiResult<std::string> ControlPlane::Impl::NodeWorkBody(const std::string& node, int index) {
  if (node_work_version_ != version_) {
    node_work_.clear();
    node_plans_.reset();
    node_work_version_ = version_;
  }
  if (auto it = node_work_.find(node); it != node_work_.end()) return it->second;
  const Deployment* d = active_ ? &active_->target : deployment_ ? &*deployment_ : nullptr;
  DeployOptions deploy = options_.deploy;
  if (active_) deploy.gpu_map = active_->gpu_map;
  NodePlan plan;
  plan.node = node;
  plan.node_index = index;
  plan.gpus_per_node = deploy.gpus_per_node;
  plan.serving = deploy.serving;
  plan.gpu = d                                       ? d->gpu
             : scenario_ && !scenario_->gpu.empty()  ? scenario_->gpu
             : scenario_ && !scenario_->pool.empty() ? scenario_->pool.front().gpu
                                                     : "a100-80gb";
  if (d && !node_plans_) {
    Result<std::vector<NodePlan>> plans = BuildNodePlans(*d, deploy);
    if (!plans.ok()) return InternalError("node plans: " + plans.status().message());
    node_plans_.emplace();
    for (NodePlan& p : *plans) (*node_plans_)[p.node] = std::move(p);
  }
  if (node_plans_) {
    if (auto it = node_plans_->find(node); it != node_plans_->end()) plan = it->second;
  }
  OJson j;
  j["version"] = version_;
  j["node"] = node;
  j["plan"] = OJson::parse(FormatNodePlanJson(plan));
  if (active_) {
    OJson t;
    t["id"] = active_->stored.id;
    t["phase"] = active_->stored.phase;
    t["state"] = active_->stored.state;
    t["transition"] = OJson::parse(active_->stored.transition_json, nullptr, false);
    t["steps"] = RunningStepsOf(active_->stored, node);
    j["transition"] = std::move(t);
  } else {
    j["transition"] = nullptr;
  }
  return node_work_[node] = Dump(j);
}

ApiResponse ControlPlane::Impl::GetNodeWork(const ApiRequest& request, const std::string& node) {
  ApiResult<int> index = NodeIndex(node);
  if (!index.ok()) return ErrorResponse(index.error());
  return LongPoll(request, [&] { return NodeWorkBody(node, *index); });
}

ApiResponse ControlPlane::Impl::LongPoll(const ApiRequest& request,
                                         const std::function<ApiResult<std::string>()>& body) {
  ApiResult<double> wait = QueryNumber(request, "wait", kWaitS, 0);
  if (!wait.ok()) return ErrorResponse(wait.error());
  ApiResult<double> since = QueryNumber(request, "since", InputRange{0, 9e15, false, true}, -1);
  if (!since.ok()) return ErrorResponse(since.error());
  if (*since >= 0 && *wait > 0) {
    WaitForVersion(static_cast<int64_t>(*since),
                   std::chrono::milliseconds(static_cast<int64_t>(*wait * 1000)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ApiResult<std::string> text = body();
  if (!text.ok()) return ErrorResponse(text.error());
  ApiResponse r;
  r.body = *text;
  return r;
}

ApiResponse ControlPlane::Impl::PostNodeStatus(const ApiRequest& request, const std::string& node) {
  ApiResult<int> index = NodeIndex(node);
  if (!index.ok()) return ErrorResponse(index.error());
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<NodeStatusReport> report = NodeStatusFromJson(*body, kBodySource);
  if (!report.ok()) return ErrorResponse(ErrorFromStatus(report.status()));
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<StoredTransition> changed;
  if (report->transition) {
    const PhaseResult& result = *report->transition;
    if (!active_ || active_->stored.id != result.id) {
      return ErrorResponse(ConflictError(fmt::format("transition {} is not running", result.id)));
    }
    StoredTransition t = active_->stored;
    Status s =
        ApplyPhaseResult(t, node, result.phase, result.ok, result.error, options_.wall_time());
    if (!s.ok()) return ErrorResponse(ConflictError(s.message()));
    changed = std::move(t);
  }
  StoredNode stored{node, body->dump(), options_.wall_time()};
  if (Status s = store_->PutNode(stored); !s.ok()) return ErrorResponse(ErrorFromStatus(s));
  if (changed) {
    if (Status s = Commit(std::move(*changed)); !s.ok()) return ErrorResponse(ErrorFromStatus(s));
  }
  if (!report->observed.empty()) {
    observed_[node] = report->observed;
    OnObserved();
  }
  return JsonResponse(200, OJson{{"version", version_}});
}

ApiResponse ControlPlane::Impl::ListRouters() {
  std::lock_guard<std::mutex> lock(mu_);
  OJson list = OJson::array();
  for (const std::string& name : options_.routers) {
    OJson r;
    r["router"] = name;
    const auto seen = router_seen_.find(name);
    r["updated_at"] = seen == router_seen_.end() ? OJson(nullptr) : OJson(seen->second);
    const std::string step = active_ ? RunningRouterStep(active_->stored, name) : "";
    r["step"] = step.empty() ? OJson(nullptr) : OJson(step);
    OJson observed = OJson::object();
    if (auto it = observed_.find(RouterStepNode(name)); it != observed_.end()) {
      for (const auto& [service, rate] : it->second) {
        OJson o{{"rate_rps", rate.rate_rps}};
        if (rate.slo_compliance) o["slo_compliance"] = *rate.slo_compliance;
        if (rate.p99_ms) o["p99_ms"] = *rate.p99_ms;
        observed[service] = std::move(o);
      }
    }
    r["observed"] = std::move(observed);
    list.push_back(std::move(r));
  }
  return JsonResponse(200, OJson{{"routers", std::move(list)}});
}

ApiResult<std::vector<RouterBackend>> ControlPlane::Impl::RouterBackendsNow() {
  if (!deployment_ && !active_) return std::vector<RouterBackend>{};
  // Backends are named by service and numbered by order; ports are the
  // router's own (1, 2, ...: not sent).
  constexpr int kFirstPort = 1;
  if (!active_) {
    Result<std::vector<NodePlan>> plans = BuildNodePlans(*deployment_, options_.deploy);
    if (!plans.ok()) return InternalError("node plans: " + plans.status().message());
    Result<std::vector<RouterBackend>> b =
        BuildRouterBackends(*deployment_, *plans, {}, kFirstPort);
    if (!b.ok()) return InternalError("router backends: " + b.status().message());
    return std::move(*b);
  }
  Result<Transition> t = ParseTransitionJson(active_->stored.transition_json, "transition");
  if (!t.ok()) return InternalError(t.status().message());
  if (!scenario_) return InternalError("a transition runs without a scenario");
  Result<Problem> problem = ProblemOf(*scenario_);
  if (!problem.ok()) return InternalError("scenario: " + problem.status().message());
  const Deployment from = deployment_ ? *deployment_ : EmptyDeploymentLike(active_->target);
  Result<TransitionLives> lives = BuildTransitionLives(from, *t, *problem, 1);
  if (!lives.ok()) return InternalError("transition lives: " + lives.status().message());
  // The services the transition starts serving are the target's.
  for (const ServiceOutcome& s : active_->target.services) {
    std::vector<ServiceOutcome>& known = lives->deployment.services;
    if (std::none_of(known.begin(), known.end(),
                     [&](const ServiceOutcome& k) { return k.name == s.name; })) {
      known.push_back(s);
    }
  }
  Result<std::vector<NodePlan>> plans = BuildNodePlans(lives->deployment, options_.deploy);
  if (!plans.ok()) return InternalError("node plans: " + plans.status().message());
  Result<std::vector<RouterBackend>> b =
      BuildTransitionRouterBackends(lives->deployment, lives->phases, *plans, {}, kFirstPort);
  if (!b.ok()) return InternalError("router backends: " + b.status().message());
  return std::move(*b);
}

ApiResult<std::string> ControlPlane::Impl::RouterWorkBody(const std::string& router) {
  if (router_work_version_ != version_) {
    router_work_.clear();
    router_backends_.reset();
    router_work_version_ = version_;
  }
  if (auto it = router_work_.find(router); it != router_work_.end()) return it->second;
  if (!router_backends_) {
    ApiResult<std::vector<RouterBackend>> b = RouterBackendsNow();
    if (!b.ok()) return b.error();
    router_backends_ = std::move(*b);
  }
  const std::string step = active_ ? RunningRouterStep(active_->stored, router) : "";
  const RouterStage stage = step == "drain"   ? RouterStage::kDrain
                            : step == "ready" ? RouterStage::kReady
                                              : RouterStage::kApply;
  const int phase = active_ ? active_->stored.phase : 0;
  const Deployment* d = deployment_ ? &*deployment_ : active_ ? &active_->target : nullptr;
  OJson j;
  j["version"] = version_;
  j["router"] = router;
  j["rule"] = d ? OJson(std::string(RouterName(d->rule.router))) : OJson(nullptr);
  j["base_port"] = options_.deploy.serving.base_port;
  OJson backends = OJson::array();
  for (const RouterBackend& b : *router_backends_) {
    OJson servers = OJson::array();
    for (const RouterServer& server : b.servers) {
      const auto [state, weight] = ServerStateAt(server, phase, stage);
      servers.push_back(OJson{{"name", server.name},
                              {"node", server.node},
                              {"port", server.port},
                              {"batch", server.batch},
                              {"weight", weight},
                              {"state", std::string(RouterServerStateName(state))}});
    }
    OJson slo = nullptr;
    if (scenario_) {
      for (const Service& s : scenario_->services) {
        if (s.name == b.service) slo = s.slo_ms;
      }
    }
    backends.push_back(OJson{{"service", b.service},
                             {"name", b.name},
                             {"slo_ms", std::move(slo)},
                             {"servers", std::move(servers)}});
  }
  j["backends"] = std::move(backends);
  if (active_) {
    j["transition"] = OJson{{"id", active_->stored.id},
                            {"phase", phase},
                            {"state", active_->stored.state},
                            {"step", step.empty() ? OJson(nullptr) : OJson(step)}};
  } else {
    j["transition"] = nullptr;
  }
  return router_work_[router] = Dump(j);
}

ApiResponse ControlPlane::Impl::GetRouterWork(const ApiRequest& request,
                                              const std::string& router) {
  if (!IsRouter(router)) return ErrorResponse(NoRouter(router));
  return LongPoll(request, [&] { return RouterWorkBody(router); });
}

ApiResponse ControlPlane::Impl::PostRouterStatus(const ApiRequest& request,
                                                 const std::string& router) {
  if (!IsRouter(router)) return ErrorResponse(NoRouter(router));
  ApiResult<Json> body = ParseJsonBody(request.body);
  if (!body.ok()) return ErrorResponse(body.error());
  Result<RouterStatusReport> report = RouterStatusFromJson(*body, kBodySource);
  if (!report.ok()) return ErrorResponse(ErrorFromStatus(report.status()));
  std::lock_guard<std::mutex> lock(mu_);
  if (report->transition) {
    const PhaseResult& result = *report->transition;
    if (!active_ || active_->stored.id != result.id) {
      return ErrorResponse(ConflictError(fmt::format("transition {} is not running", result.id)));
    }
    StoredTransition t = active_->stored;
    Status s = ApplyRouterResult(t, router, result.phase, result.step, result.ok, result.error,
                                 options_.wall_time());
    if (!s.ok()) return ErrorResponse(ConflictError(s.message()));
    if (Status c = Commit(std::move(t)); !c.ok()) return ErrorResponse(ErrorFromStatus(c));
  }
  router_seen_[router] = options_.wall_time();
  if (!report->observed.empty()) {
    observed_[RouterStepNode(router)] = report->observed;
    OnObserved();
  }
  return JsonResponse(200, OJson{{"version", version_}});
}

ApiResponse ControlPlane::Impl::Metrics() {
  std::lock_guard<std::mutex> lock(mu_);
  ControlGauges g;
  g.store_version = version_;
  std::map<std::string, double> capacity;
  if (deployment_) {
    capacity = ServiceCapacities(*deployment_);
    g.gpus_used = deployment_->metrics.gpus;
  }
  const std::map<std::string, ObservedSum> observed = SummedObserved();
  if (scenario_) {
    for (const Service& s : scenario_->services) {
      ServiceGauges sg;
      sg.name = s.name;
      sg.declared_rps = s.rate_rps;
      if (auto it = observed.find(s.name); it != observed.end()) {
        sg.observed_rps = it->second.rate_rps;
        sg.observed_compliance = it->second.compliance;
        sg.observed_p99_ms = it->second.p99_ms;
      }
      if (auto it = capacity.find(s.name); it != capacity.end()) sg.capacity_rps = it->second;
      g.services.push_back(std::move(sg));
    }
  }
  for (const char* state : {"proposed", "running", "paused", "done", "aborted"}) {
    g.transitions[state] = 0;
  }
  Result<std::vector<StoredTransition>> all = store_->Transitions(kAllTransitions);
  if (!all.ok()) return ErrorResponse(ErrorFromStatus(all.status()));
  for (const StoredTransition& t : *all) ++g.transitions[t.state];
  ApiResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = FormatMetricsText(g);
  if (extra_) r.body += extra_();
  return r;
}

ControlPlane::ControlPlane(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlPlane::~ControlPlane() = default;

Result<std::unique_ptr<ControlPlane>> ControlPlane::Open(std::unique_ptr<ControlStore> store,
                                                         ControlOptions options) {
  if (store == nullptr) return Status::InvalidArgument("ControlPlane::Open: no store");
  if (!options.default_planner.empty()) {
    TESSERA_RETURN_IF_ERROR(
        BuiltinPlanners().Check(options.default_planner).WithContext("default planner"));
  }
  TESSERA_RETURN_IF_ERROR(CheckInputsApply(options.inputs, /*mps=*/false, "the control plane"));
  if (!limits::kGpusPerNode.Contains(options.deploy.gpus_per_node)) {
    return Status::InvalidArgument("gpus per node: " +
                                   OutOfRange(limits::kGpusPerNode, options.deploy.gpus_per_node));
  }
  std::set<std::string> routers;
  for (const std::string& router : options.routers) {
    if (!IsDns1123Label(router) || !routers.insert(router).second) {
      return Status::InvalidArgument("router '" + router +
                                     "': a router name is a DNS-1123 label, each named once");
    }
  }
  if (!(options.replan_hold_s >= 0 && options.replan_hold_s <= 3600)) {
    return Status::InvalidArgument(
        fmt::format("re-plan hold: {:g} s is outside 0-3600", options.replan_hold_s));
  }
  if (!limits::kSpareGpus.Contains(options.spare_gpus)) {
    return Status::InvalidArgument("spare GPUs: " +
                                   OutOfRange(limits::kSpareGpus, options.spare_gpus));
  }
  auto impl = std::make_unique<Impl>(std::move(store), std::move(options));
  try {
    TESSERA_RETURN_IF_ERROR(impl->Load());
  } catch (const std::exception& e) {
    return Status::Internal(std::string("ControlPlane::Open: ") + e.what());
  }
  return std::unique_ptr<ControlPlane>(new ControlPlane(std::move(impl)));
}

ApiResponse ControlPlane::Handle(const ApiRequest& request) { return impl_->Handle(request); }
int64_t ControlPlane::Version() const { return impl_->Version(); }
int64_t ControlPlane::WaitForVersion(int64_t seen, std::chrono::milliseconds timeout) {
  return impl_->WaitForVersion(seen, timeout);
}
void ControlPlane::Shutdown() { impl_->Shutdown(); }
void ControlPlane::SetExtraMetrics(ExtraMetrics extra) { impl_->SetExtraMetrics(std::move(extra)); }

}  // namespace tessera
