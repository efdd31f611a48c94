// Deployment: what a plan puts on every GPU, how each service fares, the
// plan's metrics, and the rule it was made under. A GPU holds MIG instances
// (each a segment of one service, with one or more MPS processes) or, shared
// whole, MPS processes with a share of its SMs each. Its canonical
// serialization is the JSON of DESIGN.md (deployment_format.h); planners
// build it through BuildDeployment (plan.h), so every planner's output has
// the same shape and metrics.
//
// Thread-safety: values.
#ifndef TESSERA_DEPLOYMENT_H_
#define TESSERA_DEPLOYMENT_H_

#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tessera/latency_rule.h"
#include "tessera/plan/sharing.h"

namespace tessera {

// One MIG instance: a segment of one service.
struct Instance {
  std::string profile;  // e.g. "3g.40gb"
  int start = 0;        // first memory slice (as `nvidia-smi mig -lgipp` numbers it)
  std::string service;
  std::string model;
  int batch = 1;
  int procs = 1;
  double throughput_rps = 0;  // whole segment
  double latency_ms = 0;      // per batch
};

// One MPS process of a GPU shared whole (Sharing::kMps): one service's
// batch on a share of the GPU's SMs, described by the iGniter model next to
// its GPU's other processes.
struct MpsProcess {
  std::string service;
  std::string model;
  int batch = 1;
  double resource_pct = 0;    // share of the SMs, in (0, 100]
  double rate_rps = 0;        // the part of the service's rate it serves
  double throughput_rps = 0;  // predicted
  double latency_ms = 0;      // predicted, per batch
  bool meets_slo = true;      // predicted latency within budget and throughput >= rate
};

// What one GPU holds: MIG instances sorted by start, or MPS processes
// sharing it whole (Sharing::kMps). One or the other: a plan's GPUs all hold
// the kind its sharing says.
using MigInstances = std::vector<Instance>;
using MpsProcesses = std::vector<MpsProcess>;

namespace deployment_internal {
// The elements of `holds`'s list of T; none when it holds the other kind.
template <typename T, typename Holds>
std::span<std::conditional_t<std::is_const_v<Holds>, const T, T>> View(Holds& holds) {
  auto* list = std::get_if<std::vector<T>>(&holds);
  if (list == nullptr) return {};
  return *list;
}
}  // namespace deployment_internal

struct GpuAssignment {
  int index = 0;  // global GPU index, 0-based
  int node = 0;   // index / gpus_per_node
  // The catalog model when it differs from Deployment::gpu (a mixed pool);
  // empty = Deployment::gpu.
  std::string gpu;
  std::variant<MigInstances, MpsProcesses> holds;

  bool shared_whole() const { return std::holds_alternative<MpsProcesses>(holds); }
  // A MIG GPU's instances; none for a GPU shared whole. The non-const views
  // change elements; mig() and mps() change the lists.
  std::span<const Instance> instances() const { return deployment_internal::View<Instance>(holds); }
  std::span<Instance> instances() { return deployment_internal::View<Instance>(holds); }
  // A GPU shared whole's processes; none for a MIG GPU.
  std::span<const MpsProcess> processes() const {
    return deployment_internal::View<MpsProcess>(holds);
  }
  std::span<MpsProcess> processes() { return deployment_internal::View<MpsProcess>(holds); }
  // The lists. REQUIRES: that kind of GPU (MIG is the default).
  MigInstances& mig() { return std::get<MigInstances>(holds); }
  MpsProcesses& mps() { return std::get<MpsProcesses>(holds); }
};

enum class ServiceStatus { kOk, kInfeasible };

struct ServiceOutcome {
  std::string name;
  std::string model;
  double rate_rps = 0;
  double slo_ms = 0;
  double capacity_rps = 0;  // sum of the service's segment throughputs
  ServiceStatus status = ServiceStatus::kOk;
  std::string reason;  // when infeasible: why, and what is achievable
  // MPS plans: the largest predicted batch latency of the service's
  // processes, and whether some process misses its budget or rate.
  double worst_latency_ms = 0;
  bool predicted_violation = false;
};

// DESIGN.md, Metrics: one definition each.
struct Metrics {
  int gpus = 0;  // GPUs holding at least one instance
  int gpcs = 0;  // compute slices allocated
  double internal_slack = 0;
  double external_fragmentation = 0;
  int lower_bound = 0;
  std::string lower_bound_kind;  // "fractional" | "integer-cover" | ...
  double gap = 0;                // gpus / lower_bound - 1 (0 when both are 0)
  double plan_ms = 0;            // planner wall time, files excluded
  // Set by planners that prove a bound: whether the plan's objective (GPUs,
  // or the hourly cost of a priced pool) is proven optimal.
  std::optional<bool> proven_optimal;
  // Hourly price of the GPUs used, and a proven lower bound on the cheapest
  // plan's (0 = unknown); both 0 when the pool has no prices.
  double cost_per_hour = 0;
  double cost_lower_bound = 0;
  // MPS plans: every process's share summed (% of one GPU), and the services
  // the iGniter model predicts miss their latency budget or rate.
  double resource_pct = 0;
  int predicted_violations = 0;
};

// One priced GPU model of the pool and how many of it the plan uses.
struct PoolUse {
  std::string gpu;
  double price_per_hour = 0;
  int max_count = 0;  // 0 = no limit
  int used = 0;
};

// The MIG profiles a plan was made on: where they came from ("embedded"
// for the synthesized ones, "in memory" for a table given so, else the path
// given) and their content's FNV-1a 64 hash (ProfilesHash, problem_inputs.h)
// over the table written as Tessera's profile CSV, so that a plan read back
// can find its profiles again, or see that others were given.
struct ProfileSource {
  std::string source;
  std::string fnv1a64;  // 16 hex digits
};

struct Deployment {
  std::string gpu;      // catalog name (the first of a mixed pool)
  std::string planner;  // registry name
  Sharing sharing = Sharing::kMigMps;
  // The rule the plan was made under; validate and simulate use it.
  LatencyRule rule;
  // False when read from JSON written before plans recorded their rule
  // (`rule` is then the default).
  bool rule_recorded = true;
  std::vector<GpuAssignment> gpus;
  std::vector<ServiceOutcome> services;  // scenario order
  Metrics metrics;
  std::vector<PoolUse> pool;  // priced pools only: the cost table
  // MIG plans made by Plan() (plan_request.h): the profiles they were made on.
  std::optional<ProfileSource> profiles;
};

// The catalog name of `assignment`'s GPU model.
inline const std::string& GpuModelName(const Deployment& d, const GpuAssignment& assignment) {
  return assignment.gpu.empty() ? d.gpu : assignment.gpu;
}

}  // namespace tessera

#endif  // TESSERA_DEPLOYMENT_H_
