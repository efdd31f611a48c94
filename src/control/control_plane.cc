// ControlPlane: the routes (a declarative table matched in order), the
// state cached from the store, readiness and metrics (control_plane.h); the
// handlers of each resource are in control_*.cc (control_plane_impl.h).
#include "control/control_plane_impl.h"
#include "util/http_endpoint.h"

namespace tessera {

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
  // A reload (the store changed under this replica: its own writes too)
  // keeps the policy and what it has seen unless the scenario changed.
  if (!scenario_ || Dump(ScenarioToJson(*scenario_)) != Dump(ScenarioToJson(scenario))) {
    autoscaler_.reset();  // the policy plans for the scenario's services
  }
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

void ControlPlane::Impl::ClearCache() {
  scenario_.reset();
  deployment_id_.reset();
  deployment_.reset();
  deployment_metrics_.clear();
  deployment_reply_ = {};
  active_.reset();
  node_work_.clear();
  node_plans_.reset();
  node_work_version_ = -1;
  router_work_.clear();
  router_backends_.reset();
  router_work_version_ = -1;
}

Status ControlPlane::Impl::Load() {
  ClearCache();
  // One moment's state: another replica's write cannot tear it.
  TESSERA_RETURN_IF_ERROR(store_->PinReads());
  struct Unpin {
    ControlStore& store;
    ~Unpin() { store.UnpinReads(); }
  } unpin{*store_};
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

namespace {

// The arguments of `path` when it matches `pattern` ("{x}" matches one
// non-empty segment); nullopt when it does not.
std::optional<std::vector<std::string>> MatchPattern(std::string_view pattern,
                                                     const std::vector<std::string>& path) {
  const std::vector<std::string> want = SplitPath(std::string(pattern));
  if (want.size() != path.size()) return std::nullopt;
  std::vector<std::string> args;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].starts_with('{')) {
      args.push_back(path[i]);
    } else if (want[i] != path[i]) {
      return std::nullopt;
    }
  }
  return args;
}

// Routes only the leader serves: every mutation, and the long-polls of the
// node agents and routers, whose work the leader hands out.
bool LeaderOnly(std::string_view method, std::string_view pattern) {
  return method != "GET" || pattern == "/v1/nodes/{node}/plan" ||
         pattern == "/v1/routers/{name}/work";
}

}  // namespace

const std::vector<ControlPlane::Impl::RouteSpec>& ControlPlane::Impl::Routes() {
  using Args = std::vector<std::string>;
  static const std::vector<RouteSpec> routes = {
      {"GET", "/healthz",
       [](Impl&, const ApiRequest&, const Args&) {
         return JsonResponse(200, OJson{{"status", "ok"}});
       }},
      {"GET", "/readyz", [](Impl& p, const ApiRequest&, const Args&) { return p.Ready(); }},
      {"GET", "/metrics", [](Impl& p, const ApiRequest&, const Args&) { return p.Metrics(); }},
      {"GET", "/v1/scenario",
       [](Impl& p, const ApiRequest&, const Args&) { return p.GetScenario(); }},
      {"PUT", "/v1/scenario",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.PutScenario(r); }},
      {"PATCH", "/v1/services/{name}",
       [](Impl& p, const ApiRequest& r, const Args& a) { return p.PatchService(r, a[0]); }},
      {"GET", "/v1/plans",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.ListPlans(r); }},
      {"POST", "/v1/plans",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.PostPlan(r); }},
      {"GET", "/v1/plans/{id}",
       [](Impl& p, const ApiRequest&, const Args& a) { return p.GetPlanAt(a[0], false); }},
      {"GET", "/v1/plans/{id}/svg",
       [](Impl& p, const ApiRequest&, const Args& a) { return p.GetPlanAt(a[0], true); }},
      {"GET", "/v1/deployment",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.GetDeployment(r); }},
      {"GET", "/v1/deployment/svg",
       [](Impl& p, const ApiRequest&, const Args&) { return p.GetDeploymentSvg(); }},
      {"GET", "/v1/transitions",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.ListTransitions(r); }},
      {"POST", "/v1/transitions",
       [](Impl& p, const ApiRequest& r, const Args&) { return p.PostTransition(r); }},
      {"GET", "/v1/transitions/{id}",
       [](Impl& p, const ApiRequest&, const Args& a) { return p.GetTransitionAt(a[0]); }},
      {"POST", "/v1/transitions/{id}/start",
       [](Impl& p, const ApiRequest& r, const Args& a) {
         return p.ActOnTransition(r, a[0], "start");
       }},
      {"POST", "/v1/transitions/{id}/resume",
       [](Impl& p, const ApiRequest& r, const Args& a) {
         return p.ActOnTransition(r, a[0], "resume");
       }},
      {"POST", "/v1/transitions/{id}/abort",
       [](Impl& p, const ApiRequest& r, const Args& a) {
         return p.ActOnTransition(r, a[0], "abort");
       }},
      {"GET", "/v1/nodes", [](Impl& p, const ApiRequest&, const Args&) { return p.ListNodes(); }},
      {"GET", "/v1/nodes/{node}/plan",
       [](Impl& p, const ApiRequest& r, const Args& a) { return p.GetNodeWork(r, a[0]); }},
      {"POST", "/v1/nodes/{node}/status",
       [](Impl& p, const ApiRequest& r, const Args& a) { return p.PostNodeStatus(r, a[0]); }},
      {"GET", "/v1/observed",
       [](Impl& p, const ApiRequest&, const Args&) { return p.GetObserved(); }},
      {"GET", "/v1/routers",
       [](Impl& p, const ApiRequest&, const Args&) { return p.ListRouters(); }},
      {"GET", "/v1/routers/{name}/work",
       [](Impl& p, const ApiRequest& r, const Args& a) { return p.GetRouterWork(r, a[0]); }},
      {"POST", "/v1/routers/{name}/status",
       [](Impl& p, const ApiRequest& r, const Args& a) { return p.PostRouterStatus(r, a[0]); }},
  };
  return routes;
}

ApiResponse ControlPlane::Impl::Route(const ApiRequest& request) {
  const std::vector<std::string> path = SplitPath(request.path);
  std::string_view route;
  std::string allowed;
  const RouteSpec* match = nullptr;
  std::vector<std::string> args;
  for (const RouteSpec& spec : Routes()) {
    std::optional<std::vector<std::string>> found = MatchPattern(spec.pattern, path);
    if (!found || (!route.empty() && spec.pattern != route)) continue;
    route = spec.pattern;
    allowed += allowed.empty() ? std::string(spec.method) : ", " + std::string(spec.method);
    if (request.method == spec.method) {
      match = &spec;
      args = std::move(*found);
    }
  }
  ApiResponse response;
  if (route.empty()) {
    response = ErrorResponse(NotFoundError("no route " + request.path));
  } else if (match == nullptr) {
    response = ErrorResponse(ApiError{405, "method_not_allowed",
                                      fmt::format("{} allows {}", route, allowed), std::nullopt});
  } else if (std::optional<ApiError> media =
                 request.method != "GET" ? CheckMediaType(request.body, request.content_type)
                                         : std::nullopt;
             media) {
    response = ErrorResponse(*media);
  } else if (std::optional<ApiResponse> sync =
                 match->pattern == "/healthz"
                     ? std::nullopt
                     : SyncWithStore(request, LeaderOnly(match->method, match->pattern));
             sync) {
    response = std::move(*sync);
  } else {
    response = match->handler(*this, request, args);
  }
  response.route = route.empty() ? "unmatched" : std::string(route);
  return response;
}

std::optional<ApiResponse> ControlPlane::Impl::SyncWithStore(const ApiRequest& request,
                                                             bool leader_only) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<StoreView> view = store_->Observe();
  if (!view.ok()) {
    return ErrorResponse(
        ApiError{503, "unavailable", "store: " + view.status().message(), std::nullopt});
  }
  const bool was_leader = view_.leader;
  view_ = std::move(*view);
  if (viewed_ && view_.leader != was_leader) ++leadership_changes_;
  viewed_ = true;
  // A reload that failed half-way left the cache partly filled: the next
  // request reloads whatever the store says.
  if (view_.changed || view_.leader != was_leader || !loaded_) {
    loaded_ = false;
    if (Status s = Load(); !s.ok()) {
      return ErrorResponse(
          ApiError{503, "unavailable", "store: reloading: " + s.message(), std::nullopt});
    }
    loaded_ = true;
  }
  if (!leader_only || view_.leader) return std::nullopt;
  if (view_.leader_url.empty()) {
    return ErrorResponse(ApiError{
        503, "no_leader",
        "no replica leads (" + view_.no_leader_reason + "): mutations wait for an election; retry",
        std::nullopt});
  }
  std::string location = view_.leader_url + request.path;
  char sep = '?';
  for (const auto& [key, value] : request.query) {
    location += sep + EncodeQueryValue(key) + "=" + EncodeQueryValue(value);
    sep = '&';
  }
  ApiResponse r =
      ErrorResponse(ApiError{307, "not_leader",
                             fmt::format("this replica follows; {} leads at {}: send it there",
                                         view_.leader_name, view_.leader_url),
                             std::nullopt});
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

ApiResponse ControlPlane::Impl::Ready() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<int64_t> version = store_->Version();
  if (!version.ok()) {
    return ErrorResponse(
        ApiError{503, "unavailable", "store: " + version.status().message(), std::nullopt});
  }
  if (!view_.leader && view_.leader_url.empty()) {
    return ErrorResponse(
        ApiError{503, "no_leader", "no replica leads: " + view_.no_leader_reason, std::nullopt});
  }
  OJson body{{"status", "ready"},
             {"store", store_->Describe()},
             {"role", view_.leader ? "leader" : "follower"}};
  if (!view_.leader) body["leader"] = OJson{{"name", view_.leader_name}, {"url", view_.leader_url}};
  return JsonResponse(200, body);
}

ApiResponse ControlPlane::Impl::Metrics() {
  std::lock_guard<std::mutex> lock(mu_);
  ControlGauges g;
  g.store_version = version_;
  g.leader = view_.leader;
  g.leader_name = view_.leader ? options_.replica_name : view_.leader_name;
  g.leadership_changes = leadership_changes_;
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

std::vector<std::pair<std::string, std::string>> ControlPlane::RouteTable() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Impl::RouteSpec& spec : Impl::Routes()) out.emplace_back(spec.method, spec.pattern);
  return out;
}
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
  if (options.autoscale) {
    TESSERA_RETURN_IF_ERROR(CheckAutoscalePolicy(*options.autoscale));
    TESSERA_RETURN_IF_ERROR(
        CheckDuration("--autoscale-minute", options.autoscale_minute_s, kAutoscaleMinute).status());
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
