// Metrics and lower bounds of DESIGN.md, one definition each.
//
//  * gpus: GPUs holding at least one instance; gpcs: compute slices allocated.
//  * internal_slack = 1 - sum_i (rate_i / capacity_i) x gpcs_i / sum_i gpcs_i
//    over services with capacity (capacity_i and gpcs_i: service i's total
//    segment throughput and compute slices).
//  * external_fragmentation = 1 - gpcs / (gpus x C).
//  * lower bounds on gpus for the same problem:
//     - fractional: every service served at its best compute- (and memory-)
//       slices-per-request ratio, slices shared freely between GPUs:
//       ceil(max(sum_i rate_i min_t g_t/tp_t / C, sum_i rate_i min_t m_t/tp_t / M));
//     - integer cover: each service needs whole segments; the fewest compute
//       slices covering its rate (an exact unbounded covering knapsack) and,
//       separately, the fewest memory slices; ceil(max(sum / C, sum / M)).
//     - migserving: MIG-serving's (section 8), every service on its most
//       cost-efficient instance with MIG's placement rules ignored:
//       ceil(sum_i rate_i min_t g_t/tp_t / C), the compute half of the
//       fractional bound, so never stronger than it; reported to compare
//       with the paper's figures.
//    In a mixed pool each service counts on the model where its share of a
//    GPU is least, so all stay valid.
//    The integer cover is never weaker than the fractional bound.
//
// Thread-safety: pure functions.
#ifndef TESSERA_METRICS_H_
#define TESSERA_METRICS_H_

#include <map>
#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/problem.h"

namespace tessera {

// Compute and memory slices the instances of one GPU occupy. A profile the
// GPU model lacks counts as 0 (the validator reports it).
struct SliceUsage {
  int compute = 0;
  int memory = 0;
};
SliceUsage UsedSlices(const GpuAssignment& assignment, const GpuModel& gpu);

// The catalog model of `assignment` (GpuModelName); `fallback` when that is
// its name or the name is not in the catalog (the validator reports it).
const GpuModel& ModelOf(const Deployment& deployment, const GpuAssignment& assignment,
                        const GpuModel& fallback);

struct LowerBound {
  int gpus = 0;
  std::string kind;  // "migserving" | "fractional" | "integer-cover" (| "solver", plan.h)
};

// The fewest slices (of one resource: compute or memory) whose segments
// cover `rate`, given the best throughput of a segment of each size
// (slices -> req/s); 0 for an empty map or a rate <= 0. Exact by dynamic
// programming over at most kMaxCoveringDp slices (a problem within the input
// limits needs far fewer); beyond that, or for throughputs that are not
// finite and > 0, the fractional bound ceil(rate / best throughput per
// slice), capped at INT_MAX / 2: still a lower bound, never a cast of an
// out-of-range double.
inline constexpr int kMaxCoveringDp = 10'000'000;
int MinCoveringSlices(const std::map<int, double>& best_by_size, double rate);

// Services without a feasible triplet contribute nothing to either bound.
LowerBound FractionalBound(const Problem& problem);
LowerBound IntegerCoverBound(const Problem& problem);
LowerBound MigServingBound(const Problem& problem);
// The strongest bound available without solving the planning problem.
LowerBound StrongestBound(const Problem& problem);
// Every bound of this header, weakest first: migserving, fractional,
// integer cover.
std::vector<LowerBound> AllBounds(const Problem& problem);

// gpus, gpcs, internal slack and external fragmentation of `deployment`,
// with `bound` and its gap, and `plan_ms`. `gpu` is the model of GPUs that
// name none (GpuAssignment::gpu empty).
Metrics ComputeMetrics(const Deployment& deployment, const GpuModel& gpu, const LowerBound& bound,
                       double plan_ms);

}  // namespace tessera

#endif  // TESSERA_METRICS_H_
