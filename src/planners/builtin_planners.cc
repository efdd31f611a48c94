// The one list of every built-in planner (style anchor 5: one registry).
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include "planners/exact/exact_planner.h"
#include "planners/gpulet/gpulet_planner.h"
#include "planners/igniter/igniter_planner.h"
#include "planners/migserving/migserving_planner.h"
#include "planners/parva/parva_planner.h"
#include "planners/static/static_planner.h"
#include "tessera/planner.h"
#include "tessera/util/input_limits.h"

namespace tessera {
namespace {

using PlannerPtr = std::unique_ptr<Planner>;

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
  r.MustRegisterWithOptions(
      "parva",
      "ParvaGPU (SC24): MIG + MPS segments, demand matching, best fit, allocation "
      "optimization; options mps (on|off: several MPS processes per segment) and optimize "
      "(on|off: the allocation optimization)",
      {"mps", "optimize"},
      [](const std::string& name, const RegistryOptions& options) -> Result<PlannerPtr> {
        ParvaOptions o;
        TESSERA_ASSIGN_OR_RETURN(o.use_mps, BoolOption("planner parva", options, "mps", true));
        TESSERA_ASSIGN_OR_RETURN(o.optimize,
                                 BoolOption("planner parva", options, "optimize", true));
        return NewParvaPlanner(o, name);
      });
  r.MustRegisterAlias("parva-single", "parva:mps=off",
                      "ParvaGPU without MPS: one process per segment");
  r.MustRegisterAlias("parva-unopt", "parva:optimize=off",
                      "ParvaGPU without the allocation optimization");
  // MIG-serving's static baselines: one planner, its partition an option.
  r.MustRegisterWithOptions(
      "static",
      "MIG-serving's static baselines; options partition (7: whole GPUs, one service each; "
      "7x1: every GPU cut into 1g instances shared by all services; mix: 4g+2g+1g, 2g+1g+1g "
      "on A30, one service each) and mps (on: each instance runs as many MPS processes as the "
      "profiles allow, its Figure 11; default off)",
      {"partition", "mps"},
      [](const std::string& name, const RegistryOptions& options) -> Result<PlannerPtr> {
        TESSERA_ASSIGN_OR_RETURN(
            const std::string partition,
            ChoiceOption("planner static", options, "partition", "", {"7", "7x1", "mix"}));
        TESSERA_ASSIGN_OR_RETURN(const bool mps,
                                 BoolOption("planner static", options, "mps", false));
        const StaticPartition p = partition == "7"     ? StaticPartition::kWhole
                                  : partition == "7x1" ? StaticPartition::kSingles
                                                       : StaticPartition::kMix;
        return NewStaticPlanner({p, mps ? 0 : 1}, name);
      },
      /*listed=*/false);
  for (const auto& [partition, description] :
       {std::pair{"7", "MIG-serving's A100-7/7 baseline: whole GPUs, one service each"},
        std::pair{"7x1",
                  "MIG-serving's A100-7x1/7 baseline: every GPU cut into 1g instances, shared "
                  "by all services"},
        std::pair{"mix",
                  "MIG-serving's A100-MIX baseline: every GPU cut 4g+2g+1g (2g+1g+1g on A30), "
                  "one service each"}}) {
    const std::string name = fmt::format("static-{}", partition);
    r.MustRegisterAlias(name, fmt::format("static:partition={}", partition),
                        fmt::format("{}, no MPS", description));
    r.MustRegisterAlias(name + "-mps", fmt::format("static:mps=on,partition={}", partition),
                        fmt::format("{}, each instance running as many MPS processes as the "
                                    "profiles allow (its Figure 11)",
                                    description));
  }
  r.MustRegisterWithOptions(
      "migserving-greedy",
      "MIG-serving's fast algorithm: GPU configurations by heuristic score; option procs "
      "(MPS processes per instance, 1-48, default 1)",
      {"procs"}, [](const std::string& name, const RegistryOptions& options) -> Result<PlannerPtr> {
        MigServingOptions o;
        TESSERA_ASSIGN_OR_RETURN(
            o.max_procs,
            IntOption("planner migserving-greedy", options, "procs", 1,
                      static_cast<int>(limits::kProcs.min), static_cast<int>(limits::kProcs.max)));
        return NewMigServingPlanner(o, name);
      });
  for (int procs : {2, 4}) {
    r.MustRegisterAlias(fmt::format("migserving-greedy-mps{}", procs),
                        fmt::format("migserving-greedy:procs={}", procs),
                        fmt::format("MIG-serving's fast algorithm with up to {} MPS processes "
                                    "per instance (its Figure 11)",
                                    procs));
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
