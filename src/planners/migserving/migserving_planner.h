// MIG-serving's optimizer (Tan et al., "Serving DNN Models with
// Multi-Instance GPUs: A Case of the Reconfigurable Machine Scheduling
// Problem", section 5 and Appendix A) as planners:
//  * the fast algorithm alone (greedy.h): GPU configurations picked by
//    heuristic score until every service is covered;
//  * the two-phase optimizer: the fast algorithm's deployment improved by
//    the Genetic Algorithm (genetic.h) whose crossover refills erased GPUs
//    with the customised Monte Carlo Tree Search (tree_search.h).
// Instances run one process each by default, as MIG-serving does; up to N
// MPS processes per instance is its Figure 11 experiment. Configurations
// are ranked by PlanContext::migserving_score: the capped score by default,
// or the paper's formula as written (config_space.h). Both phases end
// with idle instances trimmed (config_space.h), and the GA never returns a
// plan worse than the fast algorithm's: fewer GPUs, or as many with fewer
// busy compute slices.
//
// Time: PlanContext::time_limit_s bounds both phases (the GA's default, 10 s,
// when it is 0; the fast algorithm alone has no limit then, but names 5 s as
// its CompareTimeLimitS, since its first move scores every pair of services:
// minutes of CPU on 10,000 services). The fast
// algorithm stops at 90% of it: the services it has not covered by then get
// GPUs of their own (linear time, see GreedyFill, in the last 10%), the plan
// stays valid, a progress line says so, and the GA has no time left to
// improve it.
#ifndef TESSERA_PLANNERS_MIGSERVING_MIGSERVING_PLANNER_H_
#define TESSERA_PLANNERS_MIGSERVING_MIGSERVING_PLANNER_H_

#include <memory>
#include <string>

#include "planners/migserving/genetic.h"
#include "tessera/planner.h"

namespace tessera {

struct MigServingOptions {
  // MPS processes an instance may run. Default: 1 (no MPS).
  int max_procs = 1;
  // Run the Genetic Algorithm after the fast algorithm. Default: false.
  bool genetic = false;
  // The budget of the two phases with the GA when PlanContext::time_limit_s
  // is 0, and the GA's CompareTimeLimitS. Default: 10 s.
  double default_time_limit_s = 10;
  // The fast algorithm alone has no budget when PlanContext::time_limit_s is
  // 0; this is its CompareTimeLimitS. Default: 5 s (1,000 services of
  // `tessera gen --rates normal:300,100` take about 2.7 s of CPU, 10,000
  // minutes).
  double compare_time_limit_s = 5;
  migserving::GeneticOptions ga;

  // InvalidArgument unless max_procs >= 1, default_time_limit_s > 0,
  // compare_time_limit_s > 0 and the GA options are valid.
  Status Validate() const;
};

// A single-model planner (SupportsPools() is false).
// REQUIRES: options.Validate().ok().
std::unique_ptr<Planner> NewMigServingPlanner(const MigServingOptions& options, std::string name);

}  // namespace tessera

#endif  // TESSERA_PLANNERS_MIGSERVING_MIGSERVING_PLANNER_H_
