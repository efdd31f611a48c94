// Incremental re-planning (ParvaGPU section III-F): plans a changed scenario
// while keeping as many of the current deployment's instances in place as it
// can. A service whose model, SLO and rate are unchanged keeps its instances;
// one whose rate fell keeps the instances it still needs; one whose rate rose
// keeps its instances and gets new segments for the rest; a new service, or
// one whose SLO or model changed, is planned afresh; the instances of a
// removed service go. New segments fill free places on the current GPUs
// before new GPUs are opened. The result may use at most `max_extra_gpus`
// more GPUs than the best plan from scratch (RunDefaultPlanner); when the
// incremental plan needs more, the plan from scratch is used, its GPUs
// mapped onto the current ones to keep what can be kept, and `note` says so.
// With `repack_gpus`, the instances of that many of the least-filled current
// GPUs are not kept but planned afresh: their demand fills holes of the kept
// GPUs, then the repacked GPUs, before new GPUs open. With `consolidate`,
// several instances of a service are replaced by one of a profile serving
// more per share of a GPU (rising rates otherwise pile up small instances),
// and GPUs are then emptied into the holes that leaves.
//
// Thread-safety: pure function (the clock is only read).
#ifndef TESSERA_INCREMENTAL_PLAN_H_
#define TESSERA_INCREMENTAL_PLAN_H_

#include <optional>
#include <string>

#include "tessera/deployment.h"
#include "tessera/plan/plan.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/util/clock.h"

namespace tessera {

struct IncrementalOptions {
  // Unset: 0 when the plan from scratch is proven optimal, else 1.
  std::optional<int> max_extra_gpus;
  // The MIG planner of `planners` that plans the new segments (the demand
  // the kept instances leave uncovered). Default: parva.
  std::string planner = "parva";
  // The current GPUs, least filled first once what a fallen rate no longer
  // needs is dropped, whose instances are planned afresh with the new
  // segments: the others are kept as they are. Repacking a few GPUs frees
  // GPUs where the kept instances fill the cluster as it is.
  int repack_gpus = 0;
  // Replace several instances of a service by one larger instance where
  // that takes less of the GPUs, then empty what GPUs moving instances into
  // the holes allows. Over a rise of 0.55 to 1.00 of 200 generated
  // services' rates in steps of 0.05, the kept plan ends on 162 GPUs where
  // the plan from scratch takes 146; consolidated, on 152.
  bool consolidate = false;
};

struct IncrementalPlan {
  PlanReport report;  // the new deployment, validated against `problem`
  // Instances of `current` left exactly as they are (GPU, place, service,
  // model, profile, batch, procs).
  IncrementStats counts;  // instances kept, moved, added and removed
  int scratch_gpus = 0;   // the plan from scratch
  bool scratch_proven = false;
  int allowed_gpus = 0;  // scratch_gpus + max_extra_gpus
  std::string note;      // why the plan from scratch was used, or empty
};

// InvalidArgument when `current` is not a MIG plan on the problem's GPU
// model, or its layout is illegal (messages name the JSON path of the field
// at fault, e.g. "gpus[2]: ..."), or `options.planner` is no MIG planner of
// `planners`.
Result<IncrementalPlan> PlanIncremental(const PlannerRegistry& planners, const Problem& problem,
                                        const Deployment& current,
                                        const IncrementalOptions& options,
                                        const PlanContext& context,
                                        const Clock& clock = SystemClock());

}  // namespace tessera

#endif  // TESSERA_INCREMENTAL_PLAN_H_
