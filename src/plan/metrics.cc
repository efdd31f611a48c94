#include "tessera/plan/metrics.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "plan/mps_deployment.h"

namespace tessera {
namespace {

// Rounds a bound up, forgiving the last bits of floating-point noise.
int CeilBound(double value) { return static_cast<int>(std::ceil(value - 1e-9)); }

// The least share of a GPU's compute and of its memory that one service
// (NeedsOf), or all the services of a problem (TotalNeeds), can be served
// with: `fractional_*` if segments could be split at will, `cover_*` in whole
// MIG segments. In GPUs, so that services of a mixed pool add up: each takes
// the model on which it needs the least.
struct Needs {
  double fractional_compute = 0;
  double fractional_memory = 0;
  double cover_compute = 0;
  double cover_memory = 0;
};

Needs NeedsOn(const ServiceSpec& spec, int pool, const GpuModel& gpu) {
  std::map<int, double> best_compute, best_memory;
  double min_compute = std::numeric_limits<double>::infinity(), min_memory = min_compute;
  for (const Triplet& t : spec.feasible) {
    if (t.pool != pool) continue;
    const MigProfile& p = gpu.profiles[t.profile];
    min_compute = std::min(min_compute, p.compute_slices / t.capacity_rps);
    min_memory = std::min(min_memory, p.memory_slices / t.capacity_rps);
    best_compute[p.compute_slices] = std::max(best_compute[p.compute_slices], t.capacity_rps);
    best_memory[p.memory_slices] = std::max(best_memory[p.memory_slices], t.capacity_rps);
  }
  if (best_compute.empty()) {
    const double none = std::numeric_limits<double>::infinity();
    return {none, none, none, none};
  }
  const double rate = spec.service.rate_rps;
  const double c = gpu.compute_slices, m = gpu.memory_slices;
  return {rate * min_compute / c, rate * min_memory / m, MinCoveringSlices(best_compute, rate) / c,
          MinCoveringSlices(best_memory, rate) / m};
}

Needs NeedsOf(const ServiceSpec& spec, const std::vector<GpuOffer>& pool) {
  if (spec.feasible.empty()) return {};
  Needs least = NeedsOn(spec, 0, *pool[0].gpu);
  for (size_t m = 1; m < pool.size(); ++m) {
    const Needs on = NeedsOn(spec, static_cast<int>(m), *pool[m].gpu);
    least = {std::min(least.fractional_compute, on.fractional_compute),
             std::min(least.fractional_memory, on.fractional_memory),
             std::min(least.cover_compute, on.cover_compute),
             std::min(least.cover_memory, on.cover_memory)};
  }
  return least;
}

// The needs of every service of `problem`, summed in service order.
Needs TotalNeeds(const Problem& problem) {
  Needs total;
  for (const ServiceSpec& spec : problem.services()) {
    const Needs needs = NeedsOf(spec, problem.pool());
    total.fractional_compute += needs.fractional_compute;
    total.fractional_memory += needs.fractional_memory;
    total.cover_compute += needs.cover_compute;
    total.cover_memory += needs.cover_memory;
  }
  return total;
}

// The two bounds of one sum of needs, so StrongestBound runs the covering
// dynamic programs once.
LowerBound FractionalFrom(const Needs& total) {
  return {CeilBound(std::max(total.fractional_compute, total.fractional_memory)), "fractional"};
}

LowerBound MigServingFrom(const Needs& total) {
  return {CeilBound(total.fractional_compute), "migserving"};
}

LowerBound CoverFrom(const Needs& total) {
  return {CeilBound(std::max(total.cover_compute, total.cover_memory)), "integer-cover"};
}

}  // namespace

// An unbounded covering knapsack over (slices, best throughput at that
// size), solved exactly by dynamic programming on the slice total.
int MinCoveringSlices(const std::map<int, double>& best_by_size, double rate) {
  if (best_by_size.empty() || rate <= 0) return 0;
  double best_ratio = 0;  // throughput per slice of the most efficient size
  for (const auto& [size, tp] : best_by_size) best_ratio = std::max(best_ratio, tp / size);
  const int largest = best_by_size.rbegin()->first;
  // No fewer slices can cover the rate, even if segments could be split.
  const double fractional = std::ceil(rate / best_ratio);
  if (!(fractional + 2.0 * largest <= kMaxCoveringDp)) {
    return fractional < INT_MAX / 2 ? static_cast<int>(fractional) : INT_MAX / 2;  // NaN too
  }
  // Using only the most efficient size covers the rate within this many slices.
  const int limit = static_cast<int>(fractional) + 2 * largest;
  std::vector<double> covered(limit + 1, 0.0);  // max throughput with <= c slices
  for (int c = 1; c <= limit; ++c) {
    covered[c] = covered[c - 1];
    for (const auto& [size, tp] : best_by_size) {
      if (size <= c) covered[c] = std::max(covered[c], covered[c - size] + tp);
    }
    if (CoversRate(covered[c], rate)) return c;
  }
  return limit;
}

const GpuModel& ModelOf(const Deployment& deployment, const GpuAssignment& assignment,
                        const GpuModel& fallback) {
  if (GpuModelName(deployment, assignment) == fallback.name) return fallback;
  Result<const GpuModel*> model = FindGpu(GpuModelName(deployment, assignment));
  return model.ok() ? **model : fallback;
}

SliceUsage UsedSlices(const GpuAssignment& assignment, const GpuModel& gpu) {
  SliceUsage used;
  for (const Instance& inst : assignment.instances()) {
    if (const MigProfile* p = gpu.FindProfile(inst.profile)) {
      used.compute += p->compute_slices;
      used.memory += p->memory_slices;
    }
  }
  return used;
}

LowerBound FractionalBound(const Problem& problem) { return FractionalFrom(TotalNeeds(problem)); }

LowerBound IntegerCoverBound(const Problem& problem) { return CoverFrom(TotalNeeds(problem)); }

LowerBound MigServingBound(const Problem& problem) { return MigServingFrom(TotalNeeds(problem)); }

std::vector<LowerBound> AllBounds(const Problem& problem) {
  if (problem.mps()) return {{MpsLowerBound(problem), "igniter"}};
  const Needs total = TotalNeeds(problem);
  return {MigServingFrom(total), FractionalFrom(total), CoverFrom(total)};
}

LowerBound StrongestBound(const Problem& problem) {
  if (problem.mps()) return {MpsLowerBound(problem), "igniter"};
  const Needs total = TotalNeeds(problem);
  LowerBound fractional = FractionalFrom(total);
  LowerBound cover = CoverFrom(total);
  return cover.gpus >= fractional.gpus ? cover : fractional;
}

Metrics ComputeMetrics(const Deployment& deployment, const GpuModel& gpu, const LowerBound& bound,
                       double plan_ms) {
  Metrics m;
  std::map<std::string, int> gpcs_by_service;
  long capacity = 0;  // compute slices of the GPUs used
  for (const GpuAssignment& g : deployment.gpus) {
    if (g.instances().empty()) {
      m.gpus += g.processes().empty() ? 0 : 1;
      continue;
    }
    ++m.gpus;
    const GpuModel& model = ModelOf(deployment, g, gpu);
    capacity += model.compute_slices;
    for (const Instance& inst : g.instances()) {
      const MigProfile* p = model.FindProfile(inst.profile);
      const int slices = p ? p->compute_slices : 0;
      m.gpcs += slices;
      gpcs_by_service[inst.service] += slices;
    }
  }
  double used = 0, total = 0;
  for (const ServiceOutcome& s : deployment.services) {
    auto it = gpcs_by_service.find(s.name);
    if (it == gpcs_by_service.end() || s.capacity_rps <= 0) continue;
    used += s.rate_rps / s.capacity_rps * it->second;
    total += it->second;
  }
  m.internal_slack = total > 0 ? 1 - used / total : 0;
  m.external_fragmentation = capacity > 0 ? 1 - static_cast<double>(m.gpcs) / capacity : 0;
  m.lower_bound = bound.gpus;
  m.lower_bound_kind = bound.kind;
  m.gap = bound.gpus > 0 ? static_cast<double>(m.gpus) / bound.gpus - 1 : 0;
  m.plan_ms = plan_ms;
  return m;
}

}  // namespace tessera
