// The control plane's agents: the node agents' work and status (/v1/nodes/...)
// and the routers' (/v1/routers/...), long-polled.
#include "control/control_plane_impl.h"

namespace tessera {

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

}  // namespace tessera
