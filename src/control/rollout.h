// Rollout: the state machine of a stored transition (docs/control-plane.md,
// "Resources and states"): proposed -> running -> done, running -> paused
// (a step failed) -> running (resume) or aborted, proposed -> aborted. Each
// phase's steps run on the nodes holding their GPUs; a phase whose steps are
// all done hands over to the next, and the last one finishes the
// transition. These functions change a StoredTransition in memory; the
// control plane writes it with ControlStore::UpdateTransition.
//
// Errors: a change the state does not allow is InvalidArgument saying why
// (the API answers 409 conflict); the transition is then unchanged.
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_CONTROL_ROLLOUT_H_
#define TESSERA_CONTROL_ROLLOUT_H_

#include <string>
#include <vector>

#include "tessera/control_store.h"
#include "tessera/node_plan.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

// The node index of cluster GPU `gpu`: gpu / gpus_per_node.
int NodeIndexOf(int gpu, const DeployOptions& deploy);

// Every step of `transition` as stored: its phase (1-based), the node of its
// cluster GPU (NodeName), state pending.
std::vector<StoredStep> StoredStepsOf(const Transition& transition, const DeployOptions& deploy);

// proposed -> running with phase 1's steps running (done at once when the
// transition has no step).
Status StartRollout(StoredTransition& transition, const std::string& now);

// A node's result for `phase`: its running steps of that phase become done
// (ok) or failed with `error` (the transition pauses with it). A phase whose
// steps are all done advances to the next; after the last, state "done".
// InvalidArgument when the transition is not running or `phase` is not the
// running phase.
Status ApplyPhaseResult(StoredTransition& transition, const std::string& node, int phase, bool ok,
                        const std::string& error, const std::string& now);

// paused -> running: its failed steps running again, the error cleared.
Status ResumeRollout(StoredTransition& transition, const std::string& now);

// proposed or paused -> aborted.
Status AbortRollout(StoredTransition& transition, const std::string& now);

// The ids of `node`'s running steps in the running phase (empty unless the
// transition runs).
std::vector<std::string> RunningStepsOf(const StoredTransition& transition,
                                        const std::string& node);

}  // namespace tessera

#endif  // TESSERA_CONTROL_ROLLOUT_H_
