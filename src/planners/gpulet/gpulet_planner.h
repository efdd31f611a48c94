// The gpu-lets+ planner: gpu-lets (Choi et al., USENIX ATC'22) as iGniter's
// evaluation modifies it (Xu et al., IEEE TPDS 2023, section 5.1), on
// gpu-lets' own profiling tables (gpulet_tables.h), not on the iGniter model.
//
// 1. Partitions (MPS resource %): {20, 40, 50, 60, 80, 100}. The tables give
//    100% only for batch 1, so for other batches 100% is unavailable unless
//    the table has it. (The iGniter paper lists five choices, 20..80; the
//    whole GPU is kept so that a service too slow for 80% can still run.)
// 2. Per service i (budget = problem.BudgetMs(i), half the SLO; rate =
//    scenario rate): the batch b = Theorem 1's batch (LowerBoundOf, iGniter's
//    change: the batch that just keeps up with the arrival rate), clamped to
//    [1, 32]. Candidate partitions are those whose table latency at b meets
//    the budget (and which have a table throughput). The most efficient
//    partition p* maximises table throughput / p (ties: the smaller p).
//    If the rate fits in throughput(b, p*), one gpulet of p* carries it
//    (as in the paper's examples: W2 gets AlexNet's most efficient 40%
//    even though a smaller partition would carry 500 rps). Otherwise
//    floor(rate / thr) gpulets of p* each carry thr, and the remainder goes
//    to the smallest candidate partition whose throughput covers it (p*
//    itself at worst). When no partition meets the budget at b, smaller
//    batches are tried down to 1 with the same rule; when none does, or the
//    tables lack the model, or the service would need more than 100,000
//    gpulets, the service is left out (infeasible).
// 3. Placement: gpulets in descending partition size (stable: services in
//    scenario order, a service's gpulets in allocation order), each onto
//    the best-fit GPU: among GPUs holding exactly one gpulet (at most two
//    per GPU, as in gpu-lets) whose free share (100 - used) >= p and on which
//    the interference model (GpuletInterference, fitted on the tables'
//    interference rows at every Plan call) predicts both processes still
//    meet their budgets and rates, the one left with the least free share
//    (ties: lowest index); else a new GPU.
//    Our reading of "meets its rate": the process's table throughput at its
//    (batch, partition) divided by the interference factor >= the rate it
//    carries, i.e. throughput = batch * 1000 / latency scaled to the table's
//    measured throughput. The tables' throughput exceeds batch * 1000 /
//    latency by up to 45% (Triton overlaps copies with compute), so the bare
//    formula would reject every gpulet carrying its table throughput even
//    alone, and full gpulets could never share a GPU.
// Output: MpsShare{service, batch, resource_pct = p, rate_rps = the rate
// carried}, per GPU in placement order.
//
// Deterministic; O(gpulets x GPUs) time.
// Thread-safety: the planner is immutable.
#ifndef TESSERA_PLANNERS_GPULET_GPULET_PLANNER_H_
#define TESSERA_PLANNERS_GPULET_GPULET_PLANNER_H_

#include <memory>

#include "tessera/planner.h"

namespace tessera {

// The "gpulet" MPS planner described above. Plan() returns InvalidArgument
// when problem.gpulet is null ("gpulet needs gpu-lets' profiling tables
// (--gpulet-tables FILE, e.g. i-Gniter/Profile/tools/gpulet.config)") or when
// problem.workload_of does not map every service to a workload.
std::unique_ptr<Planner> NewGpuletPlanner();

}  // namespace tessera

#endif  // TESSERA_PLANNERS_GPULET_GPULET_PLANNER_H_
