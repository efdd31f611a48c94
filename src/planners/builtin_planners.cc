// The one list of every built-in planner (style anchor 5: one registry).
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "planners/exact/exact_planner.h"
#include "planners/gpulet/gpulet_planner.h"
#include "planners/igniter/igniter_planner.h"
#include "planners/migserving/migserving_planner.h"
#include "planners/parva/parva_planner.h"
#include "planners/static/static_planner.h"
#include "tessera/planner.h"

namespace tessera {
namespace {

PlannerRegistry MakeBuiltins() {
  PlannerRegistry r("planner");
  r.MustRegister("exact",
                 "optimal MIG + MPS plan: fewest GPUs (or lowest cost of a priced pool), "
                 "proven by branch and bound (COIN-OR CBC)",
                 [] {
                   // Its first plan is the better of the relaxation rounded
                   // and these heuristics' plans.
                   std::vector<std::unique_ptr<Planner>> warm_start;
                   warm_start.push_back(NewParvaPlanner({}, "parva"));
                   warm_start.push_back(NewMigServingPlanner({}, "migserving-greedy"));
                   return NewExactPlanner({}, "exact", std::move(warm_start));
                 });
  r.MustRegister("parva",
                 "ParvaGPU (SC24): MIG + MPS segments, demand matching, best fit, "
                 "allocation optimization",
                 [] { return NewParvaPlanner({}, "parva"); });
  r.MustRegister("parva-single", "ParvaGPU without MPS: one process per segment", [] {
    ParvaOptions o;
    o.use_mps = false;
    return NewParvaPlanner(o, "parva-single");
  });
  r.MustRegister("parva-unopt", "ParvaGPU without the allocation optimization", [] {
    ParvaOptions o;
    o.optimize = false;
    return NewParvaPlanner(o, "parva-unopt");
  });
  struct StaticBaseline {
    const char* name;
    StaticPartition partition;
    const char* description;
  };
  for (const StaticBaseline& b :
       {StaticBaseline{"static-7", StaticPartition::kWhole,
                       "MIG-serving's A100-7/7 baseline: whole GPUs, one service each"},
        StaticBaseline{"static-7x1", StaticPartition::kSingles,
                       "MIG-serving's A100-7x1/7 baseline: every GPU cut into 1g instances, "
                       "shared by all services"},
        StaticBaseline{"static-mix", StaticPartition::kMix,
                       "MIG-serving's A100-MIX baseline: every GPU cut 4g+2g+1g (2g+1g+1g on "
                       "A30), one service each"}}) {
    const std::string name = b.name, mps = name + "-mps";
    const StaticPartition partition = b.partition;
    r.MustRegister(name, fmt::format("{}, no MPS", b.description), [name, partition] {
      return NewStaticPlanner({partition, 1}, name);
    });
    r.MustRegister(mps,
                   fmt::format("{}, each instance running as many MPS processes as the "
                               "profiles allow (its Figure 11)",
                               b.description),
                   [mps, partition] {
                     return NewStaticPlanner({partition, 0}, mps);
                   });
  }
  r.MustRegister("migserving-greedy",
                 "MIG-serving's fast algorithm: GPU configurations by heuristic score, "
                 "one process per instance",
                 [] { return NewMigServingPlanner({}, "migserving-greedy"); });
  for (int procs : {2, 4}) {
    const std::string name = fmt::format("migserving-greedy-mps{}", procs);
    r.MustRegister(name,
                   fmt::format("MIG-serving's fast algorithm with up to {} MPS processes per "
                               "instance (its Figure 11)",
                               procs),
                   [procs, name] {
                     MigServingOptions o;
                     o.max_procs = procs;
                     return NewMigServingPlanner(o, name);
                   });
  }
  r.MustRegister("migserving-ga",
                 "MIG-serving's two-phase optimizer: the fast algorithm, then a Genetic "
                 "Algorithm refilling erased GPUs by Monte Carlo Tree Search (--time-limit, "
                 "default 10 s; stops after 10 rounds without improvement)",
                 [] {
                   MigServingOptions o;
                   o.genetic = true;
                   return NewMigServingPlanner(o, "migserving-ga");
                 });
  // MPS planners: whole GPUs shared through MPS, with the iGniter model.
  r.MustRegister("igniter",
                 "iGniter (TPDS'23): Theorem 1 lower bounds, placement with the least added "
                 "interference (Algorithms 1 and 2); MPS, needs --coeffs",
                 NewIgniterPlanner);
  r.MustRegister("ffd+",
                 "iGniter's FFD+ baseline: lower-bound resources, first-fit decreasing, "
                 "interference ignored; MPS, needs --coeffs",
                 NewFfdPlusPlanner);
  r.MustRegister("gslice+",
                 "iGniter's GSLICE+ baseline: iGniter's placement, then five rounds of "
                 "GSLICE's self-tuning from the lower bounds; MPS, needs --coeffs",
                 NewGslicePlusPlanner);
  r.MustRegister("gpulet",
                 "gpu-lets+ (ATC'22, as in iGniter's evaluation): partitions of 20-100%, "
                 "at most two per GPU, best fit, linear L2/DRAM interference; MPS, needs "
                 "--coeffs and --gpulet-tables",
                 NewGpuletPlanner);
  return r;
}

}  // namespace

const PlannerRegistry& BuiltinPlanners() {
  static const PlannerRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
