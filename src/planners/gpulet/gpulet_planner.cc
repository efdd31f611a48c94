#include "planners/gpulet/gpulet_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "plan/time_limit.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/igniter_model.h"

namespace tessera {
namespace {

// gpu-lets' partitions (resource %), ascending.
constexpr std::array<int, 6> kPartitions = {20, 40, 50, 60, 80, 100};
// The tables' largest batch.
constexpr int kMaxBatch = 32;
// More gpulets than this for one service: left out rather than allocated.
constexpr double kMaxGpuletsPerService = 100000;
// Relative slack of the floating-point comparisons against budgets and rates.
constexpr double kSlack = 1e-9;

// One process: a service's batch on a partition, carrying part of its rate.
struct Gpulet {
  int service = 0;
  int batch = 1;
  int resource = 0;
  double rate_rps = 0;        // carried
  double budget_ms = 0;       // the service's latency budget
  double solo_ms = 0;         // table latency at (batch, resource)
  double throughput_rps = 0;  // table throughput at (batch, resource)
  // Utilisation at (batch, resource), when the tables have it; a gpulet
  // without it never shares a GPU.
  std::optional<double> l2_pct;
  std::optional<double> dram_pct;
};

// A partition that meets the budget at some batch.
struct Candidate {
  int resource = 0;
  double latency_ms = 0;
  double throughput_rps = 0;
};

// Step 2 for one service: its gpulets, or none when it is infeasible.
std::vector<Gpulet> Allocate(const GpuletTables& tables, const GpuletModelTables& model,
                             int service, int start_batch, double budget_ms, double rate_rps) {
  for (int batch = start_batch; batch >= 1; --batch) {
    std::vector<Candidate> candidates;  // ascending resource
    for (int p : kPartitions) {
      const std::optional<double> latency = GpuletLookup(model.latency_ms, batch, p);
      const std::optional<double> throughput = GpuletLookup(model.throughput_rps, batch, p);
      if (latency && throughput && *latency <= budget_ms) {
        candidates.push_back({p, *latency, *throughput});
      }
    }
    if (candidates.empty()) continue;
    // The most efficient partition: throughput per resource %, ties to the
    // smaller (the first met, scanning upwards).
    const Candidate* best = &candidates.front();
    for (const Candidate& c : candidates) {
      if (c.throughput_rps / c.resource > best->throughput_rps / best->resource) best = &c;
    }
    auto make = [&](const Candidate& c, double rate) {
      return Gpulet{.service = service,
                    .batch = batch,
                    .resource = c.resource,
                    .rate_rps = rate,
                    .budget_ms = budget_ms,
                    .solo_ms = c.latency_ms,
                    .throughput_rps = c.throughput_rps,
                    .l2_pct = GpuletL2Pct(tables, model.model, batch, c.resource),
                    .dram_pct = GpuletDramPct(tables, model.model, batch, c.resource)};
    };
    std::vector<Gpulet> out;
    if (rate_rps <= best->throughput_rps) {
      out.push_back(make(*best, rate_rps));
      return out;
    }
    const double full = std::floor(rate_rps / best->throughput_rps);
    if (!(full < kMaxGpuletsPerService)) return {};
    double remainder = rate_rps - full * best->throughput_rps;
    if (remainder <= kSlack * rate_rps) remainder = 0;
    for (int k = 0; k < static_cast<int>(full); ++k)
      out.push_back(make(*best, best->throughput_rps));
    if (remainder > 0) {
      const Candidate* last = best;
      for (const Candidate& c : candidates) {
        if (c.throughput_rps >= remainder) {
          last = &c;
          break;
        }
      }
      out.push_back(make(*last, remainder));
    }
    return out;
  }
  return {};
}

// Whether `g` meets its budget and rate with the slowdown `factor`.
bool Meets(const Gpulet& g, double factor) {
  return g.solo_ms * factor <= g.budget_ms * (1 + kSlack) &&
         g.throughput_rps / factor >= g.rate_rps * (1 - kSlack);
}

// Whether `a` and `b` may share a GPU, as the interference model predicts.
bool CanShare(const GpuletInterference& model, const Gpulet& a, const Gpulet& b) {
  if (!a.l2_pct || !a.dram_pct || !b.l2_pct || !b.dram_pct) return false;
  const double factor = model.Factor(*a.l2_pct + *b.l2_pct, *a.dram_pct + *b.dram_pct);
  return Meets(a, factor) && Meets(b, factor);
}

class GpuletPlanner final : public Planner {
 public:
  std::string_view Name() const override { return "gpulet"; }
  Sharing Mode() const override { return Sharing::kMps; }

  Status Check(const Problem& problem) const override {
    if (problem.mps() == nullptr || problem.mps()->gpulet == nullptr) {
      return Status::InvalidArgument(
          "needs gpu-lets' profiling tables (--gpulet-tables FILE, e.g. "
          "i-Gniter/Profile/tools/gpulet.config)");
    }
    return Status::Ok();
  }

  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    TESSERA_RETURN_IF_ERROR(Check(problem));
    const Deadline deadline = PlanDeadline(context);
    const GpuletTables& tables = *problem.mps()->gpulet;
    const std::vector<Service>& services = problem.scenario().services;

    // Step 2: allocation.
    std::vector<Gpulet> gpulets;
    for (int i = 0; i < static_cast<int>(services.size()); ++i) {
      if (deadline.Passed()) return TimeLimitPassed(context, "while sizing gpulets");
      const GpuletModelTables* model = tables.Find(services[i].model);
      const double budget = problem.BudgetMs(i);
      const double rate = services[i].rate_rps;
      if (model == nullptr || !(budget > 0) || !std::isfinite(budget) || !(rate > 0) ||
          !std::isfinite(rate)) {
        continue;  // infeasible: left out
      }
      const int batch = std::clamp(
          LowerBoundOf(problem.mps()->coefficients.hardware, problem.Workload(i), budget, rate)
              .batch,
          1, kMaxBatch);
      for (Gpulet& g : Allocate(tables, *model, i, batch, budget, rate)) {
        gpulets.push_back(std::move(g));
      }
    }

    // Step 3: best-fit placement, largest partitions first.
    std::stable_sort(gpulets.begin(), gpulets.end(),
                     [](const Gpulet& a, const Gpulet& b) { return a.resource > b.resource; });
    const GpuletInterference interference = FitGpuletInterference(tables);
    struct Gpu {
      int used = 0;
      std::vector<int> members;  // indices into gpulets
    };
    std::vector<Gpu> gpus;
    for (int g = 0; g < static_cast<int>(gpulets.size()); ++g) {
      if (deadline.Passed()) return TimeLimitPassed(context, "while placing gpulets");
      const Gpulet& gpulet = gpulets[g];
      int best = -1;
      int best_left = std::numeric_limits<int>::max();
      for (int k = 0; k < static_cast<int>(gpus.size()); ++k) {
        const Gpu& gpu = gpus[k];
        if (gpu.members.size() != 1) continue;
        const int left = 100 - gpu.used - gpulet.resource;
        if (left < 0 || left >= best_left) continue;
        if (!CanShare(interference, gpulet, gpulets[gpu.members.front()])) continue;
        best = k;
        best_left = left;
      }
      if (best < 0) {
        best = static_cast<int>(gpus.size());
        gpus.emplace_back();
      }
      gpus[best].used += gpulet.resource;
      gpus[best].members.push_back(g);
    }

    PlanResult result;
    MpsGpus& shared = result.gpus.emplace<MpsGpus>();
    shared.reserve(gpus.size());
    for (const Gpu& gpu : gpus) {
      std::vector<MpsShare> shares;
      for (int g : gpu.members) {
        const Gpulet& gpulet = gpulets[g];
        shares.push_back({.service = gpulet.service,
                          .batch = gpulet.batch,
                          .resource_pct = static_cast<double>(gpulet.resource),
                          .rate_rps = gpulet.rate_rps});
      }
      shared.push_back(std::move(shares));
    }
    return result;
  }
};

}  // namespace

std::unique_ptr<Planner> NewGpuletPlanner() { return std::make_unique<GpuletPlanner>(); }

}  // namespace tessera
