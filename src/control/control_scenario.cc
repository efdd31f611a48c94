// The control plane's scenario: GET/PUT /v1/scenario, PATCH /v1/services/{name},
// the observed rates (GET /v1/observed) and the re-plans they trigger.
#include "control/control_plane_impl.h"
#include "tessera/workload/day_rates.h"

namespace tessera {

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
  autoscaler_.reset();  // the policy plans for the scenario's services
  return JsonResponse(200, OJson{{"scenario", j}});
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
  OJson out{{"services", std::move(services)}};
  if (options_.autoscale) {
    out["autoscale"] =
        OJson{{"minutes", autoscaler_ ? autoscaler_->minutes_seen() : 0},
              {"minute_s", options_.autoscale_minute_s},
              {"note", autoscale_note_},
              {"declined", autoscaler_ ? OJson(autoscaler_->declined()) : OJson::object()}};
  }
  return JsonResponse(200, out);
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
  if (options_.autoscale) {
    Autoscale();
    return;
  }
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

void ControlPlane::Impl::Autoscale() {
  const double now = options_.clock->NowMs();
  const std::map<std::string, ObservedSum> sums = SummedObserved();
  std::vector<double> rates;
  for (const Service& s : scenario_->services) {
    const auto it = sums.find(s.name);
    rates.push_back(it == sums.end() ? 0 : it->second.rate_rps);
  }
  if (!autoscaler_) {
    // The policy's minutes start with the first traffic seen: a cluster
    // that has served nothing yet (being deployed) has nothing to forecast.
    if (std::all_of(rates.begin(), rates.end(), [](double r) { return r <= 0; })) return;
    AutoscalePolicyOptions policy = *options_.autoscale;
    policy.spare_gpus = options_.spare_gpus;
    Result<std::unique_ptr<Autoscaler>> made = Autoscaler::Create(
        {*scenario_, options_.inputs, options_.default_planner, "observed rates"}, policy);
    if (!made.ok()) {
      autoscale_note_ = made.status().message();
      return;
    }
    autoscaler_ = std::move(*made);
    autoscaled_plan_.reset();
    minute_began_ms_ = now;
    minute_sums_.assign(rates.size(), 0);
    minute_reports_ = 0;
  }
  // A report tells of the time before it: it counts in the minute under
  // way, and when that minute is over, the mean of its reports is what the
  // policy sees (later minutes without a report: the rates now). After a
  // long silence the minutes start again from now.
  for (size_t k = 0; k < rates.size(); ++k) minute_sums_[k] += rates[k];
  ++minute_reports_;
  const double minute_ms = options_.autoscale_minute_s * 1000;
  bool ended = false;
  if (now - *minute_began_ms_ >= 60 * minute_ms) minute_began_ms_ = now - minute_ms;
  while (now - *minute_began_ms_ >= minute_ms) {
    std::vector<double> mean = rates;
    for (size_t k = 0; k < mean.size() && minute_reports_ > 0; ++k) {
      mean[k] = minute_sums_[k] / minute_reports_;
    }
    autoscaler_->Observe(mean);
    *minute_began_ms_ += minute_ms;
    minute_sums_.assign(rates.size(), 0);
    minute_reports_ = 0;
    ended = true;
  }
  if (ended) AutoscaleMove();
}

void ControlPlane::Impl::AutoscaleMove() {
  const int minute = autoscaler_->minutes_seen();
  if (!deployment_ || !deployment_id_) {
    autoscale_note_ = fmt::format("minute {}: no deployment to move", minute);
    return;
  }
  if (active_) return;  // the policy weighs a move once the transition is done
  if (autoscaled_plan_ != deployment_id_) {
    // The deployment changed under the policy (deployed, its own move done
    // and placed on the cluster's GPUs, a declared rate, an operator's
    // transition): it runs what the cluster runs.
    std::map<std::string, double> planned;
    for (const ServiceOutcome& s : deployment_->services) planned[s.name] = s.rate_rps;
    std::vector<double> rates;
    for (const Service& s : scenario_->services) rates.push_back(planned[s.name]);
    autoscaler_->Rebase(*deployment_, std::move(rates));
    autoscaled_plan_ = deployment_id_;
  }
  Result<std::optional<AutoscaleDecision>> decided = autoscaler_->Decide();
  if (!decided.ok()) {
    autoscale_note_ = fmt::format("minute {}: {}", minute, decided.status().message());
    return;
  }
  if (!*decided) return;
  AutoscaleDecision& decision = **decided;
  if (decision.move.steps == 0) {  // the running plan serves the need as it is
    autoscaler_->Adopt(decision, 0);
    return;
  }
  ApiResult<StoredPlan> plan =
      StorePlan(WithRates(*scenario_, decision.rates), decision.to, nullptr);
  ApiResult<StoredTransition> t = plan.ok() ? MakeTransition(plan->id, options_.spare_gpus)
                                            : ApiResult<StoredTransition>(plan.error());
  if (t.ok()) t = Start(std::move(*t));
  if (!t.ok()) {
    autoscale_note_ = fmt::format("minute {}: the move to {} GPUs did not start: {}", minute,
                                  decision.move.to_gpus, t.error().message);
    return;
  }
  // The policy runs from the plan it chose; once the transition is done it
  // is rebased on the deployment as the cluster places it (below).
  autoscaler_->Adopt(decision, MoveMinutes(decision.move));
  autoscale_note_ = fmt::format(
      "minute {}: moving {} from {} to {} GPUs (plan {}, transition {}: {} phase(s), {} step(s), "
      "{:.0f} s estimated){}",
      minute, decision.move.up ? "up" : "down", decision.move.from_gpus, decision.move.to_gpus,
      plan->id, t->id, decision.move.phases, decision.move.steps, decision.move.seconds,
      decision.move.late ? ", late" : "");
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
  autoscaler_.reset();  // the policy plans with the scenario's SLOs
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

}  // namespace tessera
