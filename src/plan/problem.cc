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
  return rule;
}

Result<Problem> Problem::Build(const Scenario& scenario, const GpuModel& gpu,
                               const ProfileTable& profiles, const LatencyRule& rule) {
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  TESSERA_RETURN_IF_ERROR(rule.Validate());
  Problem problem;
  problem.gpu_ = &gpu;
  problem.pool_ = {GpuOffer{&gpu, 0, 0}};
  problem.scenario_ = scenario;
  problem.rule_ = rule;
  problem.services_.reserve(scenario.services.size());
  for (const Service& service : scenario.services) {
    std::vector<const ProfileEntry*> entries = profiles.EntriesFor(service.model, gpu.name);
    if (entries.empty()) {
      return Status::NotFound(ServiceLocation(scenario, service.line) +
                              ": field 'model': no profiles for model '" + service.model + "' on " +
                              gpu.name + " (profiled models: " + KnownModels(profiles, gpu) + ")");
    }
    ServiceSpec spec;
    spec.service = service;
    for (const ProfileEntry* e : entries) {
      const int profile = gpu.ProfileIndex(e->key.profile);
      if (profile < 0) {
        return Status::InvalidArgument("profile entry for " + e->key.model + " names '" +
                                       e->key.profile + "', which " + gpu.name + " does not have");
      }
      const Triplet t{profile, e->key.batch, e->key.procs, e->throughput_rps, e->latency_ms};
      if (rule.max_procs > 0 && t.procs > rule.max_procs) continue;
      if (!spec.fastest || t.latency_ms < spec.fastest->latency_ms) spec.fastest = t;
      if (rule.Allows(t.latency_ms, t.procs, service.slo_ms)) spec.feasible.push_back(t);
    }
    problem.services_.push_back(std::move(spec));
  }
  return problem;
}

bool Problem::priced() const {
  return std::any_of(pool_.begin(), pool_.end(),
                     [](const GpuOffer& offer) { return offer.price_per_hour > 0; });
}

bool CoversRate(double capacity_rps, double rate_rps) {
  return capacity_rps >= rate_rps * (1 - kCapacityTolerance);
}

}  // namespace tessera
