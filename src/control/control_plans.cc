// The control plane's plans: planning a scenario (POST /v1/plans), listing and
// reading plans, and the deployment (GET /v1/deployment, its SVG).
#include "control/control_plane_impl.h"

namespace tessera {

ApiResponse ControlPlane::Impl::GetPlanAt(const std::string& id, bool svg) {
  ApiResult<int64_t> parsed = PathId(id, "plan");
  return parsed.ok() ? GetPlan(*parsed, svg) : ErrorResponse(parsed.error());
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
    request.repack_gpus = body.repack_gpus;
    request.consolidate = body.consolidate;
  } else if (body.repack_gpus > 0) {
    return ApiError{400, "invalid_argument",
                    "repack_gpus: repacks GPUs of an incremental plan; plan incrementally",
                    std::string("repack_gpus")};
  } else if (body.consolidate) {
    return ApiError{400, "invalid_argument",
                    "consolidate: replaces instances of an incremental plan; plan incrementally",
                    std::string("consolidate")};
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
  OJson increment = nullptr;
  if (run->increment) {
    increment = OJson{{"kept", run->increment->kept},
                      {"moved", run->increment->moved},
                      {"added", run->increment->added},
                      {"removed", run->increment->removed}};
  }
  if (run->outcome == PlanOutcome::kInfeasible) {
    std::string why;
    for (const ServiceOutcome& s : run->deployment.services) {
      if (s.status == ServiceStatus::kInfeasible) why += fmt::format("; {}: {}", s.name, s.reason);
    }
    return ConflictError("no plan serves the scenario" + why);
  }
  return StorePlan(scenario, std::move(run->deployment), std::move(increment));
}

ApiResult<StoredPlan> ControlPlane::Impl::StorePlan(const Scenario& scenario, Deployment d,
                                                    OJson increment) {
  // The plan's GPUs on the nodes this plane deploys to (its JSON and SVG
  // name them), not the planner's default of eight GPUs a node.
  for (GpuAssignment& g : d.gpus) g.node = g.index / options_.deploy.gpus_per_node;
  OJson metrics = MetricsJson(d);
  metrics["incremental"] = std::move(increment);
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

}  // namespace tessera
