// The one list of every built-in planner (style anchor 5: one registry).
#include <cstdlib>
#include <iostream>

#include "planners/exact/exact_planner.h"
#include "planners/parva/parva_planner.h"
#include "planners/static/static_planner.h"
#include "tessera/planner.h"

namespace tessera {
namespace {

void MustRegister(PlannerRegistry& registry, std::string name, std::string description,
                  PlannerFactory factory) {
  Status s = registry.Register(std::move(name), std::move(description), std::move(factory));
  if (!s.ok()) {  // a duplicate built-in name is a bug caught by every test run
    std::cerr << "tessera: " << s.ToString() << "\n";
    std::abort();
  }
}

PlannerRegistry MakeBuiltins() {
  PlannerRegistry r("planner");
  MustRegister(r, "exact",
               "optimal MIG + MPS plan: fewest GPUs (or lowest cost of a priced pool), "
               "proven by branch and bound (COIN-OR CBC)",
               [] { return NewExactPlanner({}, "exact"); });
  MustRegister(r, "parva",
               "ParvaGPU (SC24): MIG + MPS segments, demand matching, best fit, "
               "allocation optimization",
               [] { return NewParvaPlanner({}, "parva"); });
  MustRegister(r, "parva-single", "ParvaGPU without MPS: one process per segment", [] {
    ParvaOptions o;
    o.use_mps = false;
    return NewParvaPlanner(o, "parva-single");
  });
  MustRegister(r, "parva-unopt", "ParvaGPU without the allocation optimization", [] {
    ParvaOptions o;
    o.optimize = false;
    return NewParvaPlanner(o, "parva-unopt");
  });
  MustRegister(r, "static-7",
               "MIG-serving's A100-7/7 baseline: whole GPUs, one service each, no MPS",
               [] { return NewStaticPlanner(StaticPartition::kWhole, "static-7"); });
  MustRegister(r, "static-7x1",
               "MIG-serving's A100-7x1/7 baseline: every GPU cut into 1g instances, "
               "shared by all services, no MPS",
               [] { return NewStaticPlanner(StaticPartition::kSingles, "static-7x1"); });
  MustRegister(r, "static-mix",
               "MIG-serving's A100-MIX baseline: every GPU cut 4g+2g+1g (2g+1g+1g on A30), "
               "one service each, no MPS",
               [] { return NewStaticPlanner(StaticPartition::kMix, "static-mix"); });
  return r;
}

}  // namespace

const PlannerRegistry& BuiltinPlanners() {
  static const PlannerRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
