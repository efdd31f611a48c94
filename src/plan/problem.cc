#include "tessera/problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "tessera/scenario.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

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

// The most segments a plan of `spec` may place: for each (pool model,
// profile) that can serve it, the rate over that profile's best capacity,
// rounded up; `worst` names the profile that needs them. 0 without a
// feasible triplet.
double MostSegments(const ServiceSpec& spec, const std::vector<GpuOffer>& pool,
                    std::string& worst) {
  std::map<std::pair<int, int>, const Triplet*> best;  // (pool, profile) -> best capacity
  for (const Triplet& t : spec.feasible) {
    const Triplet*& b = best[{t.pool, t.profile}];
    if (b == nullptr || t.capacity_rps > b->capacity_rps) b = &t;
  }
  double most = 0;
  for (const auto& [key, t] : best) {
    const double n = std::ceil(spec.service.rate_rps / t->capacity_rps);
    if (n <= most) continue;
    most = n;
    worst = fmt::format("{} on {} (its best batch {} x {} procs counts {:.4g} req/s)",
                        pool[key.first].gpu->profiles[key.second].name, pool[key.first].gpu->name,
                        t->batch, t->procs, t->capacity_rps);
  }
  return most;
}

// The planners' loops scale with each service's rate over its segments'
// capacity: bound it per service and per problem (input_limits.h).
Status CheckPlanSize(const Scenario& scenario, const std::vector<ServiceSpec>& services,
                     const std::vector<GpuOffer>& pool) {
  double total = 0;
  for (const ServiceSpec& spec : services) {
    std::string worst;
    const double most = MostSegments(spec, pool, worst);
    if (most > limits::kSegmentsPerService) {
      return Status::InvalidArgument(fmt::format(
          "{}: field 'rate_rps': {:g} req/s needs {:g} segments of {}; a service may need at most "
          "{:g} (input limits): lower the rate, or split the service",
          ServiceLocation(scenario, spec.service.line), spec.service.rate_rps, most, worst,
          limits::kSegmentsPerService));
    }
    total += most;
  }
  if (total > limits::kSegmentsPerProblem) {
    return Status::InvalidArgument(fmt::format(
        "{}: field 'services': the services need up to {:g} segments in all, about {:.1f} GB of "
        "memory to plan; a scenario may need at most {:g} (about {:.1f} GB; input limits): plan "
        "it in parts",
        ServiceLocation(scenario, 0), total, total * limits::kPlanBytesPerSegment / 1e9,
        limits::kSegmentsPerProblem,
        limits::kSegmentsPerProblem * limits::kPlanBytesPerSegment / 1e9));
  }
  return Status::Ok();
}

// The same for an MPS problem: whole GPUs a service needs at its largest
// batch on a whole GPU (MPS planners dedicate GPUs so to a service that
// needs more than one). Services whose batch 1 misses the budget are left
// to the planners (infeasible).
Status CheckMpsPlanSize(const Scenario& scenario, const MpsModel& mps, const LatencyRule& rule) {
  std::map<std::pair<int, double>, double> solo;  // (workload, budget) -> throughput
  double total = 0;
  for (size_t i = 0; i < scenario.services.size(); ++i) {
    const Service& s = scenario.services[i];
    const int workload = mps.workload_of[i];
    const double budget = rule.BudgetMs(s.slo_ms);
    auto [it, inserted] = solo.try_emplace({workload, budget}, 0.0);
    const MpsHardware& hw = mps.coefficients.hardware;
    const WorkloadCoefficients& w = mps.coefficients.workloads[workload];
    if (inserted) {
      const std::optional<int> batch = LargestSoloBatch(hw, w, budget);
      if (batch) it->second = PredictAlone(hw, w, *batch, 100).throughput_rps;
    }
    if (it->second <= 0) continue;
    const double gpus = std::ceil(s.rate_rps / it->second);
    if (gpus > limits::kSegmentsPerService) {
      return Status::InvalidArgument(fmt::format(
          "{}: field 'rate_rps': {:g} req/s needs {:g} whole GPUs of {:.4g} req/s each (the "
          "iGniter model's best); a service may need at most {:g} (input limits): lower the "
          "rate, or split the service",
          ServiceLocation(scenario, s.line), s.rate_rps, gpus, it->second,
          limits::kSegmentsPerService));
    }
    total += gpus;
  }
  if (total > limits::kSegmentsPerProblem) {
    return Status::InvalidArgument(fmt::format(
        "{}: field 'services': the services need up to {:g} whole GPUs in all; a scenario may "
        "need at most {:g} (input limits): plan it in parts",
        ServiceLocation(scenario, 0), total, limits::kSegmentsPerProblem));
  }
  return Status::Ok();
}

// Prices of 0 (not priced) or within the pool's limit, caps of 0 (none) or
// within theirs.
bool ValidOffer(const GpuOffer& offer, const InputRange& prices) {
  return offer.gpu != nullptr &&
         (offer.price_per_hour == 0 || prices.Contains(offer.price_per_hour)) &&
         (offer.max_count == 0 || limits::kMaxCount.Contains(offer.max_count));
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
        return !ValidOffer(offer, limits::kPricePerHour);
      })) {
    return Status::InvalidArgument(fmt::format(
        "a pool needs GPU models with prices 0 (not priced) or {} and caps 0 (none) or {}",
        limits::kPricePerHour.Describe(), limits::kMaxCount.Describe()));
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
  TESSERA_RETURN_IF_ERROR(CheckPlanSize(scenario, problem.services_, problem.pool_));
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
  const auto counted = [&](const Triplet& t) {
    return rule_.CountedRps(t.batch, t.procs, t.throughput_rps, t.latency_ms, service.slo_ms,
                            service.rate_rps);
  };
  bool fastest_counted = true;  // spec.fastest's capacity_rps is set
  for (const ProfileEntry* e : entries) {
    const int profile = gpu.ProfileIndex(e->key.profile);
    if (profile < 0) {
      return Status::InvalidArgument("profile entry for " + QuoteForMessage(e->key.model) +
                                     " names " + QuoteForMessage(e->key.profile) + ", which " +
                                     gpu.name + " does not have");
    }
    Triplet t{profile, e->key.batch, e->key.procs, e->throughput_rps, e->latency_ms, pool, 0};
    if (rule_.max_procs > 0 && t.procs > rule_.max_procs) continue;
    // The capacity rule's share costs a root search: only for the triplets
    // the latency rule allows, and for the fastest (after the loop).
    const bool allowed = rule_.Allows(t.latency_ms, t.procs, service.slo_ms);
    if (allowed) t.capacity_rps = counted(t);
    if (!spec.fastest || t.latency_ms < spec.fastest->latency_ms) {
      spec.fastest = t;
      fastest_counted = allowed;
    }
    // A segment that counts for nothing under the rule cannot serve.
    if (allowed && t.capacity_rps > 0) spec.feasible.push_back(t);
  }
  if (!fastest_counted) spec.fastest->capacity_rps = counted(*spec.fastest);
  return Status::Ok();
}

Result<Problem> Problem::BuildMps(const Scenario& scenario, GpuOffer gpu,
                                  MpsCoefficients coefficients, const LatencyRule& rule,
                                  std::shared_ptr<const GpuletTables> gpulet) {
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  TESSERA_RETURN_IF_ERROR(rule.Validate());
  if (!ValidOffer(gpu, limits::kPriceFlag)) {
    return Status::InvalidArgument(fmt::format(
        "a GPU model with a price per hour {} and a cap 0 (none) or {}; got price {}",
        limits::kPriceFlag.Describe(), limits::kMaxCount.Describe(), gpu.price_per_hour));
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
  TESSERA_RETURN_IF_ERROR(CheckMpsPlanSize(scenario, *problem.mps_, problem.rule_));
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
