// One transition as every front-end asks for it (`tessera transition`, the
// Python package's transition()): planned (transition.h), replayed by the
// independent checker, and set beside the naive order on the same GPUs.
//
// Thread-safety: functions of their arguments; safe on any thread.
#ifndef TESSERA_TRANSITION_REQUEST_H_
#define TESSERA_TRANSITION_REQUEST_H_

#include <optional>
#include <string>

#include "tessera/deployment.h"
#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_check.h"

namespace tessera {

struct TransitionRun {
  // Empty when no transition keeps every floor within the spare GPUs:
  // `infeasible` then says why and how many spare GPUs it needs.
  std::optional<Transition> transition;
  std::string infeasible;   // "transition: <why>; rerun with --spare-gpus N"
  TransitionCheck check;    // the independent checker's replay of `transition`
  TransitionSummary naive;  // destroy all that differs, then create, on the same GPUs
};

// InvalidArgument "<path>: field 'sharing': ..." when `plan` is an MPS plan
// (GPUs shared whole), which has no MIG instances to move; else Ok.
Status CheckMigPlan(const std::string& path, const Deployment& plan);

// Plans the move from `from` to `to` with up to `spare_gpus` spare GPUs and
// checks it; Internal when the checker finds a broken invariant (a bug).
Result<TransitionRun> RunTransition(const Deployment& from, const Deployment& to, int spare_gpus);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_REQUEST_H_
