// The independent transition checker: replays a Transition on the cluster
// state of deployment A, from nothing but A, B and the transition itself
// (none of the planner's bookkeeping), and reports every invariant of
// transition.h that does not hold:
//  (a) the start state of every phase plus the phase's creates is a legal MIG
//      layout on every GPU (mig_layout.h's CheckLayout: allowed starts, no
//      overlap, max instances), so no create uses slices a destroy of the
//      same phase frees; a destroy or reconfigure names an instance present
//      at its phase's start (gpu, profile, start, service), a create a free
//      place; no two steps of a phase act on the same instance;
//  (b) every service's capacity >= its floor in the worst state of every
//      phase (its destroys and reconfigures done, its creates not yet);
//  (c) at most max(GPUs of A, GPUs of B) + spare_gpus cluster GPUs hold an
//      instance in any state (a phase counts its start state plus its
//      creates);
//  (d) the final state equals B under gpu_map (a one-to-one map of every
//      GPU of B onto a cluster GPU of B's model), and no other cluster GPU
//      holds an instance;
// plus the format's own rules: step ids unique, the recorded summary equal to
// the measured one (min_capacity_ratio within 1e-3).
//
// Thread-safety: pure function.
#ifndef TESSERA_TRANSITION_CHECK_H_
#define TESSERA_TRANSITION_CHECK_H_

#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/transition.h"

namespace tessera {

struct TransitionCheck {
  // Each one line naming the phase, step id and rule, e.g.
  // "phase 2, step s7 (create on GPU 3 at 4): overlaps 3g.40gb@4 of resnet50".
  std::vector<std::string> violations;
  TransitionSummary measured;  // what the replay measured
  bool ok() const { return violations.empty(); }
};

TransitionCheck CheckTransition(const Deployment& from, const Deployment& to,
                                const Transition& transition);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_CHECK_H_
