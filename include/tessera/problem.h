// Problem: the immutable input of every planner. It binds a scenario to a
// pool of GPU models under a latency rule, in one of three ways of sharing
// (Sharing): MIG instances (one process each, or several MPS processes each),
// planned from a profile table, for which it lists each service's (profile,
// batch, procs) triplets that may serve it; or whole GPUs shared by MPS
// processes, planned with the iGniter model of each service's workload
// (MpsModel).
//
// Planners never read files: everything they need is here (DESIGN.md).
//
// Thread-safety: immutable after Build; safe to share between threads.
#ifndef TESSERA_PROBLEM_H_
#define TESSERA_PROBLEM_H_

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/latency_rule.h"
#include "tessera/plan/sharing.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/status.h"

namespace tessera {

// What MPS planners plan with: the iGniter model of each service's workload
// on the pool's one GPU model.
struct MpsModel {
  MpsCoefficients coefficients;
  // Per service (scenario order): index into coefficients.workloads.
  std::vector<int> workload_of;
  // gpu-lets' profiling tables; only the gpulet planner needs them.
  std::shared_ptr<const GpuletTables> gpulet;
};

// One way to run a segment of a service.
struct Triplet {
  int profile = 0;  // index into GpuModel::profiles
  int batch = 1;
  int procs = 1;
  double throughput_rps = 0;  // whole segment, as profiled
  double latency_ms = 0;      // per batch
  int pool = 0;               // which GPU model of Problem::pool() it runs on
  // What the segment counts towards its service's rate under the rule
  // (LatencyRule::CountedRps). Planners cover rates with it.
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
  // `gpu`; InvalidArgument if the scenario or the rule is invalid, a
  // profile entry names a profile `gpu` does not have, or the plan would be
  // too large to plan in bounded time: a service whose rate needs more than
  // limits::kSegmentsPerService segments of some profile that can serve it
  // ("<file>:<line>: field 'rate_rps': ..."), or services needing more than
  // limits::kSegmentsPerProblem in all (input_limits.h).
  static Result<Problem> Build(const Scenario& scenario, const GpuModel& gpu,
                               const ProfileTable& profiles, const LatencyRule& rule);
  // The same over several GPU models: a service's triplets are those of every
  // model (Triplet::pool says which). NotFound if a service's model has no
  // profile on one of them; InvalidArgument for an empty pool, a null model,
  // a price neither 0 (not priced) nor within limits::kPricePerHour, or a cap
  // neither 0 (none) nor within limits::kMaxCount.
  static Result<Problem> BuildPool(const Scenario& scenario, std::vector<GpuOffer> pool,
                                   const ProfileTable& profiles, const LatencyRule& rule);
  // A problem of whole GPUs of one model shared through MPS (Sharing::kMps),
  // described by `coefficients`. MPS planners count a process's whole
  // predicted throughput towards its rate, as the papers do, so the problem's
  // rule is `rule` with the bare capacity rule (its factor and router stay).
  // NotFound
  // "<file>:<line>: field 'model': no iGniter coefficients for '<m>' (have:
  // ...)"; InvalidArgument for an invalid scenario or rule, a null model, a
  // price outside limits::kPriceFlag, or a service needing more whole GPUs
  // at its largest batch than limits::kSegmentsPerService (or all of them
  // more than limits::kSegmentsPerProblem).
  static Result<Problem> BuildMps(const Scenario& scenario, GpuOffer gpu,
                                  MpsCoefficients coefficients, const LatencyRule& rule,
                                  std::shared_ptr<const GpuletTables> gpulet = nullptr);

  // How plans of this problem share GPUs: kMps for BuildMps; otherwise kMig
  // when the rule allows one process per segment, else kMigMps.
  Sharing sharing() const;
  // The MPS model of a kMps problem; nullptr otherwise.
  const MpsModel* mps() const { return mps_.get(); }
  // The profile table of a MIG problem (empty for kMps).
  const ProfileTable& profiles() const { return *profiles_; }
  // The iGniter coefficients of `service`'s workload. REQUIRES: mps().
  const WorkloadCoefficients& Workload(int service) const {
    return mps_->coefficients.workloads[mps_->workload_of[service]];
  }
  // The latency budget of `service` under the rule (ms).
  double BudgetMs(int service) const { return rule_.BudgetMs(scenario_.services[service].slo_ms); }

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
  std::shared_ptr<const ProfileTable> profiles_;
  std::shared_ptr<const MpsModel> mps_;
  int gpus_per_node_ = 8;
};

}  // namespace tessera

#endif  // TESSERA_PROBLEM_H_
