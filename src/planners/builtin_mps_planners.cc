// The one list of every built-in MPS planner (style anchor 5: one registry).
#include <cstdlib>
#include <iostream>

#include "planners/gpulet/gpulet_planner.h"
#include "planners/igniter/igniter_planner.h"
#include "tessera/mps_plan.h"

namespace tessera {
namespace {

MpsPlannerRegistry MakeBuiltins() {
  MpsPlannerRegistry r("MPS planner");
  r.MustRegister("igniter",
                 "iGniter (TPDS'23): Theorem 1 lower bounds, placement with the least added "
                 "interference (Algorithms 1 and 2)",
                 NewIgniterPlanner);
  r.MustRegister("ffd+",
                 "iGniter's FFD+ baseline: lower-bound resources, first-fit decreasing, "
                 "interference ignored",
                 NewFfdPlusPlanner);
  r.MustRegister("gslice+",
                 "iGniter's GSLICE+ baseline: iGniter's placement, then five rounds of "
                 "GSLICE's self-tuning from the lower bounds",
                 NewGslicePlusPlanner);
  r.MustRegister("gpulet",
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
