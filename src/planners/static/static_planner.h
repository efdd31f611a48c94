// MIG-serving's three static baselines (Tan et al., "Serving DNN Models with
// Multi-Instance GPUs: A Case of the Reconfigurable Machine Scheduling
// Problem", sections 2.3 and 8): every GPU is cut the same way ahead of time,
// whatever the workload, and services are then assigned to the instances.
//
// A service's instances all use one triplet per profile: among its feasible
// triplets on that profile with at most `max_procs` processes, the one with
// the highest capacity (ties: the first in profile-table order). The
// paper's baselines run one process per instance (max_procs 1, static-7,
// static-7x1, static-mix); its Figure 11 gives them up to N MPS processes
// inside each MIG instance, and static-7-mps, static-7x1-mps and
// static-mix-mps run as many as the profiles and the latency rule allow
// (max_procs 0). A service needs instances until their capacities cover
// its rate (ceil(rate / capacity) of one profile).
//
//   kWhole   (A100-7/7): each GPU is one instance of the full-GPU profile,
//            serving one service.
//   kSingles (A100-7x1/7): each GPU is cut into compute_slices instances of
//            the primary 1-slice profile, identical machines any service may
//            use: services in scenario order take instances in order, filling
//            each GPU's starts in ascending order before opening the next.
//   kMix     (A100-MIX): each GPU is cut "4-2-1" (4g@0, 2g@4, 1g@6 on a
//            7-slice GPU) and serves one service: a service takes whole GPUs,
//            and on its last one only the instances still needed, filling the
//            4g, then the 2g, then the 1g. Instances of a profile the service
//            has no triplet for stay idle. On other geometries the mix halves
//            what is left: each instance is the primary profile of the largest
//            power of two below the compute slices not yet cut, down to a last
//            1-slice instance (2g+1g+1g on an A30).
//
// A service no instance of the cut can serve (say, one whose SLO a 1g is too
// slow for under kSingles) still gets served, as the Planner contract asks
// of every service with a feasible triplet: it gets GPUs of its own, each
// holding one instance of its highest-capacity triplet within `max_procs`,
// or of its fewest-process one beyond it when it has none within (usually
// the full GPU, as A100-7/7 would). The paper's baselines
// do not say what they do with such a service.
// Only a service with no feasible triplet at all is left out (the engine
// reports it infeasible).
#ifndef TESSERA_PLANNERS_STATIC_STATIC_PLANNER_H_
#define TESSERA_PLANNERS_STATIC_STATIC_PLANNER_H_

#include <memory>
#include <string>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/planner.h"

namespace tessera {

enum class StaticPartition { kWhole, kSingles, kMix };

struct StaticOptions {
  StaticPartition partition = StaticPartition::kWhole;
  // MPS processes an instance may run: 1 (no MPS, the paper's baselines),
  // N, or 0 = as many as the problem's feasible triplets have.
  int max_procs = 1;
};

// The legal layout every GPU is cut into, in the order services fill it:
// larger instances first, then by start. Internal if `gpu` lacks a primary
// profile the partition needs or no legal layout holds the cut (neither
// happens on a catalog GPU).
Result<std::vector<Placement>> StaticCut(const GpuModel& gpu, StaticPartition partition);

// A single-model planner (SupportsPools() is false).
// REQUIRES: options.max_procs >= 0.
std::unique_ptr<Planner> NewStaticPlanner(const StaticOptions& options, std::string name);

}  // namespace tessera

#endif  // TESSERA_PLANNERS_STATIC_STATIC_PLANNER_H_
