#include "tessera/problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/scenario.h"
#include "tessera/text_io.h"

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
  problem.profiles_ = std::make_shared<const ProfileTable>(profiles);
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
                            ": field 'model': no profiles for model " +
                            QuoteForMessage(service.model) + " on " + gpu.name +
                            " (profiled models: " + KnownModels(profiles, gpu) + ")");
  }
  for (const ProfileEntry* e : entries) {
    const int profile = gpu.ProfileIndex(e->key.profile);
    if (profile < 0) {
      return Status::InvalidArgument("profile entry for " + QuoteForMessage(e->key.model) +
                                     " names " + QuoteForMessage(e->key.profile) + ", which " +
                                     gpu.name + " does not have");
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

Result<Problem> Problem::BuildMps(const Scenario& scenario, GpuOffer gpu,
                                  MpsCoefficients coefficients, const LatencyRule& rule,
                                  std::shared_ptr<const GpuletTables> gpulet) {
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  TESSERA_RETURN_IF_ERROR(rule.Validate());
  if (gpu.gpu == nullptr || !(gpu.price_per_hour >= 0) || !std::isfinite(gpu.price_per_hour)) {
    return Status::InvalidArgument(
        fmt::format("price per hour must be >= 0, got {}", gpu.price_per_hour));
  }
  auto mps = std::make_shared<MpsModel>();
  for (const Service& s : scenario.services) {
    const WorkloadCoefficients* w = coefficients.Find(s.model);
    if (w == nullptr) {
      std::vector<std::string> have;
      for (const WorkloadCoefficients& c : coefficients.workloads) have.push_back(c.model);
      return Status::NotFound(fmt::format(
          "{}: field 'model': no iGniter coefficients for {} (have: {})",
          ServiceLocation(scenario, s.line), QuoteForMessage(s.model), fmt::join(have, ", ")));
    }
    mps->workload_of.push_back(static_cast<int>(w - coefficients.workloads.data()));
  }
  mps->coefficients = std::move(coefficients);
  mps->gpulet = std::move(gpulet);
  Problem problem;
  problem.gpu_ = gpu.gpu;
  problem.pool_ = {gpu};
  problem.scenario_ = scenario;
  problem.rule_ = rule;
  TESSERA_RETURN_IF_ERROR(problem.rule_.SetCapacity("bare"));
  problem.profiles_ = std::make_shared<const ProfileTable>();
  problem.mps_ = std::move(mps);
  for (const Service& service : scenario.services) problem.services_.push_back({service, {}, {}});
  return problem;
}

Sharing Problem::sharing() const {
  if (mps_) return Sharing::kMps;
  return rule_.max_procs == 1 ? Sharing::kMig : Sharing::kMigMps;
}

bool Problem::priced() const {
  return std::any_of(pool_.begin(), pool_.end(),
                     [](const GpuOffer& offer) { return offer.price_per_hour > 0; });
}

}  // namespace tessera
