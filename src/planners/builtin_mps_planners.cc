// The one list of every built-in MPS planner (style anchor 5: one registry).
#include <cstdlib>
#include <iostream>

#include "planners/gpulet/gpulet_planner.h"
#include "planners/igniter/igniter_planner.h"
#include "tessera/mps_plan.h"

namespace tessera {
namespace {

void MustRegister(MpsPlannerRegistry& registry, std::string name, std::string description,
                  MpsPlannerRegistry::Factory factory) {
  Status s = registry.Register(std::move(name), std::move(description), std::move(factory));
  if (!s.ok()) {  // a duplicate built-in name is a bug caught by every test run
    std::cerr << "tessera: " << s.ToString() << "\n";
    std::abort();
  }
}

MpsPlannerRegistry MakeBuiltins() {
  MpsPlannerRegistry r("MPS planner");
  MustRegister(r, "igniter",
               "iGniter (TPDS'23): Theorem 1 lower bounds, placement with the least added "
               "interference (Algorithms 1 and 2)",
               NewIgniterPlanner);
  MustRegister(r, "ffd+",
               "iGniter's FFD+ baseline: lower-bound resources, first-fit decreasing, "
               "interference ignored",
               NewFfdPlusPlanner);
  MustRegister(r, "gslice+",
               "iGniter's GSLICE+ baseline: iGniter's placement, then five rounds of "
               "GSLICE's self-tuning from the lower bounds",
               NewGslicePlusPlanner);
  MustRegister(r, "gpulet",
               "gpu-lets+ (ATC'22, as in iGniter's evaluation): partitions of 20-100%, "
               "at most two per GPU, best fit, linear L2/DRAM interference",
               NewGpuletPlanner);
  return r;
}

}  // namespace

const MpsPlannerRegistry& BuiltinMpsPlanners() {
  static const MpsPlannerRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
