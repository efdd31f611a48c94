// iGniter's provisioning (Xu et al., IEEE TPDS 2023, section 4.1) and the two
// baselines of its evaluation that share its first step, as MPS planners:
//  * "igniter": Theorem 1's batch and resource lower bound per workload, then
//    Algorithm 1: workloads in descending lower bound, each onto the GPU where
//    Algorithm 2 (alloc_gpus: raise every co-located workload that the model
//    predicts misses its budget by one unit until all meet it) adds the least
//    resource; a new GPU when none can take it.
//  * "ffd+": the lower bound, placed first-fit decreasing, ignoring
//    interference.
//  * "gslice+": iGniter's placement, then GSLICE's tuning rule (Algorithm 1
//    of GSLICE: ComputeNewShare, gslice_tuning.h) applied for five rounds to every
//    process from its lower bound, with latency and throughput predicted by
//    the iGniter model, and the GPU divided max-min fairly.
// A workload whose lower bound exceeds a whole GPU is split as the artifact
// does: whole GPUs at the largest batch meeting the budget, each carrying 90%
// of its predicted throughput, and the rest placed as a smaller workload.
//
// Thread-safety: planners are immutable.
#ifndef TESSERA_PLANNERS_IGNITER_IGNITER_PLANNER_H_
#define TESSERA_PLANNERS_IGNITER_IGNITER_PLANNER_H_

#include <memory>

#include "tessera/planner.h"

namespace tessera {

std::unique_ptr<Planner> NewIgniterPlanner();
std::unique_ptr<Planner> NewFfdPlusPlanner();
std::unique_ptr<Planner> NewGslicePlusPlanner();

// Rounds of GSLICE's tuning "gslice+" runs (the iGniter paper adopts the plan
// after five adjustments).
inline constexpr int kGslicePlusRounds = 5;

}  // namespace tessera

#endif  // TESSERA_PLANNERS_IGNITER_IGNITER_PLANNER_H_
