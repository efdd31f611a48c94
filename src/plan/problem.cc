#include "tessera/problem.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/scenario.h"

namespace tessera {
namespace {

std::string KnownModels(const ProfileTable& profiles, const GpuModel& gpu) {
  std::string names;
  for (const std::string& model : profiles.Models()) {
    if (!profiles.HasModel(model, gpu.name)) continue;
    if (!names.empty()) names += ", ";
    names += model;
  }
  return names.empty() ? "none" : names;
}

}  // namespace

Status LatencyRule::Validate() const {
  if (!(factor > 0 && factor <= 1)) {
    return Status::InvalidArgument("latency factor must be in (0, 1], got " +
                                   std::to_string(factor));
  }
  if (!(headroom_quantile > 0 && headroom_quantile < 1)) {
    return Status::InvalidArgument("headroom quantile must be in (0, 1), got " +
                                   std::to_string(headroom_quantile));
  }
  if (!(burst_on_share > 0 && burst_on_share <= 1)) {
    return Status::InvalidArgument("burst on-share must be in (0, 1], got " +
                                   std::to_string(burst_on_share));
  }
  if (max_procs < 0) {
    return Status::InvalidArgument("max procs must be >= 0 (0 = no limit), got " +
                                   std::to_string(max_procs));
  }
  return Status::Ok();
}

double LatencyRule::BudgetMs(double slo_ms) const {
  return factor * (truncate_slo ? std::trunc(slo_ms) : slo_ms);
}

bool LatencyRule::Allows(double latency_ms, int procs, double slo_ms) const {
  if (max_procs > 0 && procs > max_procs) return false;
  return latency_ms < BudgetMs(slo_ms);
}

LatencyRule ParvaArtifactRule() {
  LatencyRule rule;
  rule.factor = 0.45;
  rule.truncate_slo = true;
  rule.max_procs = 5;
  rule.queueing_headroom = false;
  return rule;
}

double LatencyRule::UsableShare(int batch, double latency_ms, double slo_ms) const {
  if (!queueing_headroom) return 1;
  const double b = std::max(1, batch);
  const double slack_ms = slo_ms - latency_ms * (2 * b - 1) / b;
  if (slack_ms <= 0) return 0;
  const double x = std::log(1 / (1 - headroom_quantile)) * (latency_ms / b) / slack_ms;
  return burst_on_share * x / std::expm1(x);
}

Result<Problem> Problem::Build(const Scenario& scenario, const GpuModel& gpu,
                               const ProfileTable& profiles, const LatencyRule& rule) {
  return BuildPool(scenario, {GpuOffer{&gpu, 0, 0}}, profiles, rule);
}

Result<Problem> Problem::BuildPool(const Scenario& scenario, std::vector<GpuOffer> pool,
                                   const ProfileTable& profiles, const LatencyRule& rule) {
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  TESSERA_RETURN_IF_ERROR(rule.Validate());
  if (pool.empty() || std::any_of(pool.begin(), pool.end(), [](const GpuOffer& offer) {
        return offer.gpu == nullptr || offer.price_per_hour < 0 || offer.max_count < 0;
      })) {
    return Status::InvalidArgument("a pool needs GPU models with prices >= 0 and caps >= 0");
  }
  Problem problem;
  problem.gpu_ = pool.front().gpu;
  problem.pool_ = std::move(pool);
  problem.scenario_ = scenario;
  problem.rule_ = rule;
  problem.services_.reserve(scenario.services.size());
  for (const Service& service : scenario.services) {
    ServiceSpec spec;
    spec.service = service;
    for (size_t m = 0; m < problem.pool_.size(); ++m) {
      TESSERA_RETURN_IF_ERROR(problem.AddTriplets(static_cast<int>(m), profiles, spec, scenario));
    }
    problem.services_.push_back(std::move(spec));
  }
  return problem;
}

Status Problem::AddTriplets(int pool, const ProfileTable& profiles, ServiceSpec& spec,
                            const Scenario& scenario) const {
  const GpuModel& gpu = *pool_[pool].gpu;
  const Service& service = spec.service;
  std::vector<const ProfileEntry*> entries = profiles.EntriesFor(service.model, gpu.name);
  if (entries.empty()) {
    return Status::NotFound(ServiceLocation(scenario, service.line) +
                            ": field 'model': no profiles for model '" + service.model + "' on " +
                            gpu.name + " (profiled models: " + KnownModels(profiles, gpu) + ")");
  }
  for (const ProfileEntry* e : entries) {
    const int profile = gpu.ProfileIndex(e->key.profile);
    if (profile < 0) {
      return Status::InvalidArgument("profile entry for " + e->key.model + " names '" +
                                     e->key.profile + "', which " + gpu.name + " does not have");
    }
    const double share = rule_.UsableShare(e->key.batch, e->latency_ms, service.slo_ms);
    const Triplet t{profile,
                    e->key.batch,
                    e->key.procs,
                    e->throughput_rps,
                    e->latency_ms,
                    pool,
                    e->throughput_rps * share};
    if (rule_.max_procs > 0 && t.procs > rule_.max_procs) continue;
    if (!spec.fastest || t.latency_ms < spec.fastest->latency_ms) spec.fastest = t;
    // A segment that counts for nothing under the rule cannot serve.
    if (rule_.Allows(t.latency_ms, t.procs, service.slo_ms) && t.capacity_rps > 0) {
      spec.feasible.push_back(t);
    }
  }
  return Status::Ok();
}

bool Problem::priced() const {
  return std::any_of(pool_.begin(), pool_.end(),
                     [](const GpuOffer& offer) { return offer.price_per_hour > 0; });
}

bool CoversRate(double capacity_rps, double rate_rps) {
  return capacity_rps >= rate_rps * (1 - kCapacityTolerance);
}

}  // namespace tessera
