// Problem: the immutable input of every planner. It binds a scenario to one
// GPU model and a profile table under a latency rule, and lists for each
// service the (profile, batch, procs) triplets that may serve it.
//
// Planners never read files: everything they need is here (DESIGN.md).
//
// Thread-safety: immutable after Build; safe to share between threads.
#ifndef TESSERA_PROBLEM_H_
#define TESSERA_PROBLEM_H_

#include <optional>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/status.h"

namespace tessera {

// Which profiled configurations may serve a service (DESIGN.md, Latency rule):
// a triplet is allowed iff its latency < factor x SLO.
struct LatencyRule {
  // Share of the SLO a batch may take; the rest is left for queueing and
  // batching. Default: 0.5, as the papers do.
  double factor = 0.5;
  // Truncate the SLO to an integer number of ms first (ParvaGPU's artifact
  // reads it with atoi). Default: false.
  bool truncate_slo = false;
  // Largest number of MPS processes per segment; 0 = no limit. Default: 0.
  int max_procs = 0;
  // Queueing-aware capacity (the SLO-safe default): a segment counts only the
  // share of its throughput at which its processes' queues still meet the
  // SLO at `headroom_quantile` (UsableShare). false = the papers' bare rule:
  // the whole throughput counts. Default: true.
  bool queueing_headroom = true;
  double headroom_quantile = 0.995;  // in (0, 1)
  // Arrivals the headroom is sized for: Poisson when 1; an on/off burst that
  // is "on" this share of the time (at rate / share) when < 1. Default: 1.
  double burst_on_share = 1;

  // InvalidArgument unless 0 < factor <= 1, max_procs >= 0, 0 <
  // headroom_quantile < 1 and 0 < burst_on_share <= 1.
  Status Validate() const;
  // The latency budget (ms) of a batch for a service with `slo_ms`.
  double BudgetMs(double slo_ms) const;
  // True iff a batch of `latency_ms` with `procs` processes may serve `slo_ms`.
  bool Allows(double latency_ms, int procs, double slo_ms) const;
  // The share of a process's throughput (batches of `batch` taking
  // `latency_ms`) that may be loaded while its requests' `headroom_quantile`
  // latency stays within `slo_ms`; 1 without queueing_headroom. Model
  // (docs/serving-simulator.md): requests arrive Poisson at the peak rate
  // and are served B at a time; the request-level M/D/1 tail
  // P(wait > t) ~ exp(-theta t), with lambda (e^(theta L / B) - 1) = theta,
  // plus the request's own batch and a batch's worth of granularity,
  // L (2 B - 1) / B, must fit the SLO. Solved in closed form:
  // share = on_share x x / (e^x - 1), x = ln(1 / (1 - q)) (L / B) / slack,
  // slack = SLO - L (2 B - 1) / B; 0 when slack <= 0.
  double UsableShare(int batch, double latency_ms, double slo_ms) const;
};

// Relative tolerance of the capacity rule, so that sums of the same segment
// throughputs taken in another order (or read back from rounded JSON) agree.
inline constexpr double kCapacityTolerance = 1e-9;

// The capacity rule of DESIGN.md: capacity >= rate, up to kCapacityTolerance
// (capacity counted as Triplet::capacity_rps).
bool CoversRate(double capacity_rps, double rate_rps);

// ParvaGPU artifact compatibility: latency < 0.45 x trunc(SLO), up to 5
// processes, bare capacity (`--compat parva-artifact`). Never the default.
LatencyRule ParvaArtifactRule();

// One way to run a segment of a service.
struct Triplet {
  int profile = 0;  // index into GpuModel::profiles
  int batch = 1;
  int procs = 1;
  double throughput_rps = 0;  // whole segment, as profiled
  double latency_ms = 0;      // per batch
  int pool = 0;               // which GPU model of Problem::pool() it runs on
  // What the segment counts towards its service's rate under the rule:
  // throughput_rps x LatencyRule::UsableShare. Planners cover rates with it.
  double capacity_rps = 0;
};

// One GPU model a plan may use, with its price and an optional cap.
struct GpuOffer {
  const GpuModel* gpu = nullptr;
  double price_per_hour = 0;  // 0 = not priced
  int max_count = 0;          // 0 = no limit
};

struct ServiceSpec {
  Service service;
  // Triplets the latency rule allows, in profile-table order.
  std::vector<Triplet> feasible;
  // The lowest-latency triplet of the model on this GPU, allowed or not:
  // what to tell the user when `feasible` is empty.
  std::optional<Triplet> fastest;
};

class Problem {
 public:
  // Builds the problem. NotFound if a service's model has no profile on
  // `gpu`; InvalidArgument if the scenario or the rule is invalid, or a
  // profile entry names a profile `gpu` does not have.
  static Result<Problem> Build(const Scenario& scenario, const GpuModel& gpu,
                               const ProfileTable& profiles, const LatencyRule& rule);
  // The same over several GPU models: a service's triplets are those of every
  // model (Triplet::pool says which). NotFound if a service's model has no
  // profile on one of them; InvalidArgument for an empty pool, a null model,
  // or a negative price or cap.
  static Result<Problem> BuildPool(const Scenario& scenario, std::vector<GpuOffer> pool,
                                   const ProfileTable& profiles, const LatencyRule& rule);

  // The GPU model of a single-model problem; the first of the pool otherwise.
  const GpuModel& gpu() const { return *gpu_; }
  // The GPU models a plan may use: one for a problem made by Build.
  const std::vector<GpuOffer>& pool() const { return pool_; }
  // True iff some GPU model of the pool has a price: plans then minimise cost.
  bool priced() const;
  const Scenario& scenario() const { return scenario_; }
  const LatencyRule& rule() const { return rule_; }
  const std::vector<ServiceSpec>& services() const { return services_; }
  // GPUs per node (server) when numbering nodes. Default 8 (a p4de.24xlarge).
  int gpus_per_node() const { return gpus_per_node_; }

 private:
  Problem() = default;
  // Adds the triplets of `spec`'s model on pool model `pool` to `spec`.
  Status AddTriplets(int pool, const ProfileTable& profiles, ServiceSpec& spec,
                     const Scenario& scenario) const;

  const GpuModel* gpu_ = nullptr;
  std::vector<GpuOffer> pool_;
  Scenario scenario_;
  LatencyRule rule_;
  std::vector<ServiceSpec> services_;
  int gpus_per_node_ = 8;
};

}  // namespace tessera

#endif  // TESSERA_PROBLEM_H_
