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
// Anytime, within the time limit (PlanContext::time_limit_s on
// PlanContext::clock) at every phase: the warm-start planners (heuristics,
// a share of the limit) give a first plan; cover listing, the LP relaxation
// (a proven bound; rounding it gives another plan) and CBC's branch and bound
// (started from the better plan) each stop when the deadline passes, and
// the best plan found is returned with the best bound proven. The model is
// built once, as one packed matrix, and loaded into the solver once; the
// cover columns are bounded in all (ExactOptions::max_total_covers), so the
// model's size, and memory, stay bounded at any number of services.
// Placement is deterministic: mixes become their first maximal layout, and
// segments fill GPUs in service order.
#ifndef TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_
#define TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/planner.h"

namespace tessera {

struct ExactOptions {
  // Wall-clock budget when PlanContext::time_limit_s is 0. Default: 10 s.
  double default_time_limit_s = 10;
  // Candidate covers enumerated per service class before it is modelled per
  // service instead. Default: 20,000.
  int max_covers = 20000;
  // Covers listed over all classes (columns of the model); the classes
  // with the fewest covers are listed first, the others modelled per
  // service. Default: 200,000.
  long max_total_covers = 200000;
  // Share of the time limit the warm-start planners may take together; the
  // planners that honour a time limit get what is left of it, and they run
  // until one of them has a plan, whatever the share. Default: 0.2.
  double warm_start_share = 0.2;
  // Among the plans of optimal cost, also minimise compute slices, then
  // segments, for at most as long as the optimum took to find (at least 1 s)
  // within the time limit, on models of at most 20,000 columns. Default: true.
  bool tie_break = true;

  // InvalidArgument unless default_time_limit_s > 0, max_covers >= 1,
  // max_total_covers >= 0 and warm_start_share is in [0, 1].
  Status Validate() const;
};

// Where a run spent its effort, for tests and benchmarks.
struct ExactStats {
  int classes = 0;              // service classes
  int per_service_classes = 0;  // of them, modelled per service
  long covers = 0;              // covers listed (cover columns)
  int columns = 0, rows = 0;    // of the model
  long elements = 0;            // nonzero coefficients of the model
  int model_loads = 0;          // times the model was loaded into the solver
  // The plan branch and bound started from: "rounded" (the relaxation
  // rounded), a warm-start planner's name, or empty when there was none.
  std::string start;
  // The phase the deadline passed in ("warm start", "covers", "model",
  // "relaxation", "branch and bound", "tie break"), or empty.
  std::string stopped_in;
};

struct ExactRun {
  PlanResult plan;
  ExactStats stats;
};

// What the planner NewExactPlanner(options, ..., warm_start) returns for
// `problem`, with its statistics. Errors as Planner::Plan.
// REQUIRES: options.Validate().ok().
Result<ExactRun> PlanExact(const Problem& problem, const PlanContext& context,
                           const ExactOptions& options,
                           std::span<const std::unique_ptr<Planner>> warm_start);

// The exact planner; `warm_start` planners (MIG, one GPU model; run on
// problems of one GPU model) give branch and bound its first plan when
// theirs is better than the rounded relaxation, so its plan is never worse
// than theirs. REQUIRES: options.Validate().ok().
std::unique_ptr<Planner> NewExactPlanner(const ExactOptions& options, std::string name,
                                         std::vector<std::unique_ptr<Planner>> warm_start = {});

}  // namespace tessera

#endif  // TESSERA_PLANNERS_EXACT_EXACT_PLANNER_H_
