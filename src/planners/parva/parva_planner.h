// The ParvaGPU planner (Lee et al., SC24, section III): a two-stage heuristic.
//
// Segment Configurator (Algorithm 1): for every service and MIG profile, the
// feasible (batch, procs) with the highest segment capacity (its throughput
// under the latency rule's capacity rule, Triplet::capacity_rps; the paper's
// bare rule makes it the throughput; ties: the first found scanning batch,
// then procs, ascending); the optimal segment is the one with the most
// capacity per compute slice (ties: the smaller profile). Demand matching takes n = floor(R /
// t_opt) optimal segments (one fewer when R is an exact multiple) plus one last segment: the
// smallest profile whose best segment covers the remainder.
//
// Segment Allocator (Algorithm 2): segments are queued by size (services in
// scenario order, optimal ones then the last) and placed largest first on
// the GPU with the fewest free compute slices that still has room (ties:
// lowest index), at the first legal start of the section III-E preferences
// (memory slices): 7g and 4g at 0; 3g at 4 only, so 3g segments never share a
// GPU; 2g at 0, 4, 2; 1g at 0, 6, 4, 1, 2, 3, 5. Unlike ParvaGPU's artifact,
// a start is legal only if the instance's whole memory range is free.
// Allocation optimization then visits GPUs from the last to the first and
// empties each using at most the threshold of compute slices (4 of 7): every
// removed segment's throughput joins its service's freed rate, which is
// re-served at once with 2g and 1g segments (2g first when 2g is more
// efficient per slice), carrying any over-provisioning to that service's
// next removed segment. There is no rollback, as in the paper.
//
// The choices the paper leaves open follow ParvaGPU's public artifact, as
// documented in shared/data/parvagpu/README.md and docs/parva-planner.md.
#ifndef TESSERA_PLANNERS_PARVA_PARVA_PLANNER_H_
#define TESSERA_PLANNERS_PARVA_PARVA_PLANNER_H_

#include <memory>

#include "tessera/planner.h"

namespace tessera {

struct ParvaOptions {
  // Use MPS: segments may run several processes. false = ParvaGPU-single
  // (one process per segment). Default: true.
  bool use_mps = true;
  // Run the allocation optimization (Algorithm 2, second function). false =
  // ParvaGPU-unoptimized. Default: true.
  bool optimize = true;
  // GPUs using at most this many compute slices are emptied and re-served
  // with small segments. 0 = the paper's 4 on 7-slice GPUs, scaled to
  // floor(4 C / 7) on GPUs with C compute slices. Default: 0.
  int optimize_threshold = 0;

  Status Validate() const;
};

// REQUIRES: options.Validate().ok().
std::unique_ptr<Planner> NewParvaPlanner(const ParvaOptions& options, std::string name);

}  // namespace tessera

#endif  // TESSERA_PLANNERS_PARVA_PARVA_PLANNER_H_
