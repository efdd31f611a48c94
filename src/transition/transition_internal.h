// The transition planner's internals (transition.h): both deployments parsed
// into interned, index-based GPUs; the matching of B's GPUs onto the cluster
// (transition_match.cc); the phase scheduler (transition_schedule.cc); and
// the replay that measures a Transition's summary (transition.cc).
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_SRC_TRANSITION_TRANSITION_INTERNAL_H_
#define TESSERA_SRC_TRANSITION_TRANSITION_INTERNAL_H_

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/transition.h"

namespace tessera::transition_internal {

// Strings (service and model names) as dense ids.
class Names {
 public:
  int Id(const std::string& name);
  const std::string& Name(int id) const { return names_[id]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
};

// One MIG instance with its strings interned.
struct Inst {
  int profile = 0;  // index into the GPU model's profiles
  int start = 0;
  SliceMask mask = 0;
  int service = 0;  // Names id
  int model = 0;    // Names id
  int batch = 1;
  int procs = 1;
  double tp = 0;   // throughput_rps
  double cap = 0;  // what the floors count it for: TransitionCapacity::Of
};

// True when two throughputs are the same figure: equal up to 1e-6 relative
// or the 4 decimals the JSON formats round them to.
bool SameThroughput(double a, double b);
// Same placement (profile and start).
inline bool SamePlace(const Inst& a, const Inst& b) {
  return a.profile == b.profile && a.start == b.start;
}
// Same placement and the same service, model, batch, procs and throughput:
// the instance stays as it is.
bool SameInstance(const Inst& a, const Inst& b);

struct Gpu {
  int index = 0;  // the deployment's GPU index
  const GpuModel* model = nullptr;
  std::vector<Inst> insts;  // sorted by start
  SliceMask mask = 0;       // union of the instances' masks
};

struct Side {
  std::vector<Gpu> gpus;  // the deployment's order
  int nonempty = 0;       // GPUs holding an instance
};

struct Parsed {
  Names services;
  Names models;
  Side a, b;
  // Per service id: floor = min(rate in A, rate in B), 0 unless in both
  // service lists; capacity in A and B; the floor the scheduler keeps,
  // min(floor, capacity in A, capacity in B) (a floor A or B itself breaks
  // cannot be kept in between either).
  std::vector<double> floor, cap_a, cap_b, keep;
};

// Parses `from` and `to`. With `validate`, InvalidArgument for anything
// PlanTransition rejects; without, unknown profiles get an empty mask (the
// naive order on unchecked input must not crash).
Result<Parsed> Parse(const Deployment& from, const Deployment& to, bool validate);

// Where every GPU of B goes: slot ids into the cluster (A's GPUs in A's
// order, then empty GPUs at the lowest indices A does not hold).
struct ClusterLayout {
  std::vector<int> index;              // per slot: cluster GPU index
  std::vector<const GpuModel*> model;  // per slot (new slots: their B GPU's)
  std::vector<int> slot_of_b;  // per B GPU (Parsed::b order); -1 = empty B GPU not yet placed
  int next_index = 0;          // new cluster indices are the lowest free from here
  int AddSlot(const GpuModel* gpu_model);  // a new GPU; returns its slot
};

// Maps every nonempty GPU of B onto a cluster slot of the same model,
// keeping as many instances exactly (then in place, reconfigured) as the
// greedy matching finds. Empty B GPUs are left at -1. Where B has more GPUs
// of a model than A, the B GPUs of greatest `depth` (per B GPU; may be
// empty) go onto the new GPUs, the others are matched.
ClusterLayout MatchGpus(const Parsed& parsed, const std::vector<int>& depth = {});

// Places B's empty GPUs on slots no B GPU uses (same model; A's first).
void PlaceEmptyGpus(const Parsed& parsed, ClusterLayout& layout);

// One step, internal form.
struct Op {
  StepAction action = StepAction::kCreate;
  int slot = 0;
  Inst from;  // destroy, reconfigure
  Inst to;    // create, reconfigure
};

struct Schedule {
  bool ok = false;
  std::vector<std::vector<Op>> phases;
  ClusterLayout layout;  // after any remap onto spare GPUs
  int peak_gpus = 0;     // most GPUs nonempty in a phase's start state plus its creates
  int remaps = 0;
  std::vector<int> blocked_services;  // when !ok
  std::string reason;                 // when !ok
  std::vector<int> wasted_b;          // B GPUs moved after some of their instances were made
  std::vector<int> finish;            // per B GPU: the phase of its last step (0: none)
};

// What an earlier schedule teaches the next one (both per B GPU, may be
// empty): `frozen` B GPUs get no create or reconfigure where the layout
// puts them (they are expected to move) unless the schedule stalls
// otherwise; B GPUs of greater `depth` (finished later before) move first.
struct ScheduleHints {
  std::vector<char> frozen;
  std::vector<int> depth;
};

// Orders the differences between A (on the cluster) and B (on `layout`)
// into phases; at most `budget` GPUs nonempty in any state. When it stalls,
// remaps a blocked B GPU onto an empty GPU while the budget allows.
Schedule ScheduleTransition(const Parsed& parsed, const ClusterLayout& layout, int budget,
                            const ScheduleHints& hints = {});

// Where a GPU's instance was destroyed and the same profile at the same
// start is created later (a B GPU moved onto a GPU emptied before), keeps
// the instance until then and reconfigures it (or keeps it, when it runs
// the same), when the GPU budget `budget` holds in every phase between.
void MergeReplaced(const Parsed& parsed, Schedule& schedule, int budget);

// The diff of one cluster GPU: its instances now against its target's.
struct Diff {
  std::vector<int> destroy;                 // indices into `now`
  std::vector<std::pair<int, int>> reconf;  // (index into now, index into target)
  std::vector<int> create;                  // indices into target
  bool empty() const { return destroy.empty() && reconf.empty() && create.empty(); }
};
Diff DiffOf(const std::vector<Inst>& now, const std::vector<Inst>& target);

// The public form of the ops (ids s1, s2, ... in emission order; each phase:
// destroys, reconfigures, creates, by GPU and start).
std::vector<TransitionPhase> EmitPhases(const Parsed& parsed, const ClusterLayout& layout,
                                        const std::vector<std::vector<Op>>& phases);

// gpu_map of `layout` (B index -> cluster index).
std::map<int, int> GpuMapOf(const Parsed& parsed, const ClusterLayout& layout);

// Replays `transition` on A and measures it (transition.h's summary).
TransitionSummary MeasureTransition(const Deployment& from, const Deployment& to,
                                    const Transition& transition);

}  // namespace tessera::transition_internal

#endif  // TESSERA_SRC_TRANSITION_TRANSITION_INTERNAL_H_
