// Transition: the plan that moves a live cluster from one MIG deployment (A)
// to another (B) without dropping any service below its floor. The model
// (docs/transitions.md):
//
//  * the cluster's GPUs are A's GPU indices and empty GPUs at every other
//    index >= 0 (a transition takes the lowest free ones, so that GPUs
//    earlier moves emptied are used again); every GPU of B is mapped onto one cluster GPU
//    (`gpu_map`, B index -> cluster index) of the same GPU model;
//  * a transition is a list of phases; the steps of one phase may run in any
//    order or all at once, and the next phase starts when all have finished;
//  * `create` makes a MIG instance and starts its service on it: capacity
//    only once its phase has finished; `destroy` drains and destroys one:
//    capacity lost from the start of its phase; `reconfigure` gives an
//    instance a new service/batch/procs in place: down during its phase;
//  * a create never uses memory slices that a destroy of the same phase
//    frees, so every state inside a phase is a subset of (the phase's start
//    state plus its creates), which must be a legal MIG layout on every GPU;
//  * a service's floor is min(its rate in A, its rate in B) (0 when it is in
//    only one of them); its capacity (the summed SLO-safe capacity of its
//    instances, TransitionCapacity below: what the planners and the
//    validator count an instance for) must stay >= its floor in the worst
//    state of every phase: the phase's destroys and reconfigures done, its
//    creates not yet;
//  * at most `spare_gpus` GPUs beyond max(GPUs of A, GPUs of B) hold an
//    instance at any time;
//  * the final state equals B with B's GPU i on cluster GPU gpu_map[i].
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_TRANSITION_H_
#define TESSERA_TRANSITION_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/status.h"

namespace tessera {

// What an incremental plan (a re-plan from a running deployment) did to the
// running instances: kept exactly, moved (a kept service's segment on another
// GPU or place), added and removed.
struct IncrementStats {
  int kept = 0;
  int moved = 0;
  int added = 0;
  int removed = 0;
};

enum class StepAction { kCreate, kDestroy, kReconfigure };

// "create", "destroy", "reconfigure".
std::string_view StepActionName(StepAction action);

struct TransitionStep {
  std::string id;  // unique in the transition: "s1", "s2", ...
  StepAction action = StepAction::kCreate;
  int gpu = 0;  // cluster GPU index
  std::string profile;
  int start = 0;
  // destroy: the service whose instance is destroyed; create and
  // reconfigure: the service the instance serves afterwards.
  std::string service;
  // create and reconfigure only: what the instance runs afterwards.
  std::string model;
  int batch = 1;
  int procs = 1;
  double throughput_rps = 0;
  // reconfigure only: the service the instance served before.
  std::string from_service;
};

// The instance a create or reconfigure step leaves at its place (its
// latency is not part of a step: 0).
Instance InstanceAfter(const TransitionStep& step);

struct TransitionPhase {
  std::vector<TransitionStep> steps;
};

// Measured over every state of the transition (the start, the worst state
// inside each phase, the end of each phase).
struct TransitionSummary {
  int steps = 0;
  int phases = 0;
  int gpus_touched = 0;  // cluster GPUs some step acts on
  int peak_gpus = 0;     // most cluster GPUs holding an instance at once
  // Lowest capacity / floor over every state and every service with a
  // floor > 0; 1 when no service has one.
  double min_capacity_ratio = 1;
};

struct Transition {
  std::string gpu;  // A's (and B's) catalog GPU model
  int spare_gpus = 0;
  std::map<int, int> gpu_map;  // B's GPU index -> cluster GPU index
  std::vector<TransitionPhase> phases;
  TransitionSummary summary;
};

// What a transition counts an instance for: its throughput_rps times the
// SLO-safe share of its configuration (service, model, profile, batch,
// procs): LatencyRule::CountedRps over the throughput, under the plan
// holding that configuration, at the instance's batch, procs and latency
// and its service's SLO and rate there (B's
// figures when B has the configuration, else A's; the whole throughput when
// neither has it, or for a plan under the bare capacity rule). Planners and
// the validator count segments the same way, so a service at its floor is
// served as its plan promised; the raw throughput would leave no headroom.
class TransitionCapacity {
 public:
  TransitionCapacity(const Deployment& from, const Deployment& to);
  double Share(const std::string& service, const std::string& model, const std::string& profile,
               int batch, int procs) const;
  // throughput_rps x Share of the same configuration.
  double Of(const Instance& instance) const;
  double Of(const TransitionStep& step) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string, int, int>;
  std::map<Key, double> shares_;
};

struct TransitionOptions {
  int spare_gpus = 0;  // limits::kSpareGpus
};

// The outcome of planning: a transition, or (when no transition keeps every
// floor within the spare budget) the fewest spare GPUs that make one
// possible.
struct TransitionPlan {
  std::optional<Transition> transition;
  int spare_gpus_needed = 0;  // set when `transition` is empty
  std::string reason;         // why, when `transition` is empty
};

// Plans a transition from `from` to `to`: maps B's GPUs onto the cluster so
// that as many instances as possible stay in place, then orders the
// differences (destroy what differs, create what differs, reconfigure an
// instance in place when only its service/batch/procs change) into as few
// phases as the floors, the geometry and the spare budget allow.
// InvalidArgument when a deployment is not a MIG plan, the two are on
// different GPU models, or a deployment's layout is illegal.
Result<TransitionPlan> PlanTransition(const Deployment& from, const Deployment& to,
                                      const TransitionOptions& options);

// `to` as the cluster holds it after `transition`: every GPU renumbered by
// the transition's gpu_map (B index -> cluster index; a GPU the map does not
// name keeps its index), in cluster order.
Deployment PlacedOnCluster(const Deployment& to, const Transition& transition);

// The naive order, for comparison: B mapped onto the cluster as PlanTransition
// maps it, phase 1 destroys (and reconfigures) everything that differs,
// phase 2 creates. Its summary is filled; it may break the floors.
Transition NaiveTransition(const Deployment& from, const Deployment& to,
                           const std::map<int, int>& gpu_map);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_H_
