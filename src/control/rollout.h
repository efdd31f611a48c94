// Rollout: the state machine of a stored transition (docs/control-plane.md,
// "Resources and states"): proposed -> running -> done, running -> paused
// (a step failed) -> running (resume) or aborted, proposed -> aborted. Each
// phase's steps run on the nodes holding their GPUs; a phase whose steps are
// all done hands over to the next, and the last one finishes the
// transition.
//
// Routers (control_plane.h) take part in every phase with two steps of
// their own, node "router/NAME": "drain" runs first (the router drains the
// servers of what the phase stops, and puts them in maintenance once
// nothing is outstanding at them), then the nodes' steps, then "ready" (the
// router gives what the phase started its weight and makes it ready), so
// that no process stops while a request is on its way to it and the next
// phase starts only once the router sends requests to this one's new
// instances. These functions change a StoredTransition in memory; the
// control plane writes it with ControlStore::UpdateTransition.
//
// Errors: a change the state does not allow is InvalidArgument saying why
// (the API answers 409 conflict); the transition is then unchanged.
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_CONTROL_ROLLOUT_H_
#define TESSERA_CONTROL_ROLLOUT_H_

#include <optional>
#include <string>
#include <vector>

#include "tessera/control/control_store.h"
#include "tessera/emit/node_plan.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

// The node index of cluster GPU `gpu`: gpu / gpus_per_node.
int NodeIndexOf(int gpu, const DeployOptions& deploy);

// The node name of router `router`'s steps: "router/" + router.
std::string RouterStepNode(const std::string& router);
// A router step's kind, "drain" or "ready" (its id is
// "<kind>-<phase>-<router>", unique in its transition).
std::string RouterStepKind(const StoredStep& step);
// The router whose step `step` is, or nullopt for a node's step.
std::optional<std::string> RouterOfStep(const StoredStep& step);

// Every step of `transition` as stored: its phase (1-based), the node of its
// cluster GPU (NodeName), state pending; in each phase, before its steps a
// "drain" and after them a "ready" step for every router in `routers`.
std::vector<StoredStep> StoredStepsOf(const Transition& transition, const DeployOptions& deploy,
                                      const std::vector<std::string>& routers = {});

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

// A router's result for its step `step` ("drain" or "ready") of `phase`:
// as ApplyPhaseResult, for that one step. InvalidArgument when that step of
// the router is not running.
Status ApplyRouterResult(StoredTransition& transition, const std::string& router, int phase,
                         const std::string& step, bool ok, const std::string& error,
                         const std::string& now);

// The running step of router `router` ("drain" or "ready"), or "" when none
// runs.
std::string RunningRouterStep(const StoredTransition& transition, const std::string& router);

// paused -> running: its failed steps running again, the error cleared.
Status ResumeRollout(StoredTransition& transition, const std::string& now);

// proposed or paused -> aborted.
Status AbortRollout(StoredTransition& transition, const std::string& now);

// The ids of `node`'s running steps in the running phase (empty unless the
// transition runs, and while the phase's routers drain).
std::vector<std::string> RunningStepsOf(const StoredTransition& transition,
                                        const std::string& node);

}  // namespace tessera

#endif  // TESSERA_CONTROL_ROLLOUT_H_
