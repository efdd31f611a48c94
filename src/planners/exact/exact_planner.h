// The exact planner: the fewest GPUs (or the lowest hourly cost of a priced
// pool) that serve every service, proven optimal by branch and bound, then
// the fewest compute slices and segments among such plans.
//
// Formulation (docs/exact-planner.md): every MIG instance serves one service
// with its best triplet on that profile (service_covers.h). Each service
// class picks minimal covers (integer x_cj summing to its multiplicity); each
// GPU model of the pool is bought as counts y_mk of its distinct maximal
// profile mixes k. A plan exists iff, for every resource (model m, profile
// p), the mixes bought provide at least as many instances as the covers
// use: sum_k y_mk mix_k[p] >= sum_cj x_cj cover_cj[m,p]. Any instance multiset
// within a maximal mix has a legal layout (drop instances from that mix's
// layout), so this is exact. Objective: sum_mk price_m y_mk. A class whose
// covers are too many to list is modelled per service with integer segment
// counts and its rate constraint instead, which is exact too, only slower.
//
// Anytime: the LP relaxation gives a proven bound at once, rounding it
// gives a first plan, and CBC's branch and bound improves both until the
// time limit. Placement is deterministic: mixes become their first maximal
// layout, and segments fill GPUs in service order.
#ifndef TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_
#define TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_

#include <memory>
#include <string>

#include "tessera/planner.h"

namespace tessera {

struct ExactOptions {
  // Wall-clock budget when PlanContext::time_limit_s is 0. Default: 10 s.
  double default_time_limit_s = 10;
  // Candidate covers enumerated per service class before it is modelled per
  // service instead. Default: 20,000.
  int max_covers = 20000;
  // Among the plans of optimal cost, also minimise compute slices, then
  // segments, for at most as long as the optimum took to find (at least 1 s)
  // within the time limit. Default: true.
  bool tie_break = true;

  // InvalidArgument unless default_time_limit_s > 0 and max_covers >= 1.
  Status Validate() const;
};

// REQUIRES: options.Validate().ok().
std::unique_ptr<Planner> NewExactPlanner(const ExactOptions& options, std::string name);

}  // namespace tessera

#endif  // TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_
