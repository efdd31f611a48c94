// Merging a destroy with a later create in the same place (transition
// planner). A GPU emptied while no B GPU was mapped onto it may later take a
// B GPU that moved there; its old instances were destroyed and the new ones
// are created, where the same profile at the same start could have been
// reconfigured (or kept, when it runs the same thing). Keeping the old
// instance until the create's phase and reconfiguring it then only adds
// capacity before that phase, costs the same in it, and holds slices no
// other step of the GPU uses meanwhile (checked); the merge is made when the
// GPU budget also holds in every phase in between.
#include <algorithm>
#include <vector>

#include "transition/transition_internal.h"

namespace tessera::transition_internal {
namespace {

struct Where {
  int phase;
  int op;
};

class Merger {
 public:
  Merger(Schedule& schedule, int budget) : s_(schedule), budget_(budget) {}

  void Run(const Parsed& parsed) {
    const size_t slots = s_.layout.index.size();
    const size_t phases = s_.phases.size();
    // Instances per slot at the start, and the union count per phase.
    start_count_.assign(slots, 0);
    for (size_t a = 0; a < parsed.a.gpus.size(); ++a) {
      start_count_[a] = static_cast<int>(parsed.a.gpus[a].insts.size());
    }
    initial_ = parsed.a.gpus;
    union_count_.assign(phases, 0);
    std::vector<std::vector<Where>> by_slot(slots);
    for (size_t p = 0; p < phases; ++p) {
      for (size_t i = 0; i < s_.phases[p].size(); ++i) {
        by_slot[s_.phases[p][i].slot].push_back({static_cast<int>(p), static_cast<int>(i)});
      }
    }
    for (size_t slot = 0; slot < slots; ++slot) {
      const std::vector<char> busy = Busy(static_cast<int>(slot), by_slot[slot]);
      for (size_t p = 0; p < phases; ++p) union_count_[p] += busy[p];
    }
    for (size_t slot = 0; slot < slots; ++slot) MergeSlot(static_cast<int>(slot), by_slot[slot]);
    for (std::vector<Op>& ops : s_.phases) {
      std::erase_if(ops, [](const Op& op) { return op.slot < 0; });
    }
    std::erase_if(s_.phases, [](const std::vector<Op>& ops) { return ops.empty(); });
  }

 private:
  // Per phase: whether `slot` holds an instance in the phase's start state
  // plus its creates.
  std::vector<char> Busy(int slot, const std::vector<Where>& ops) const {
    std::vector<char> busy(s_.phases.size(), 0);
    int count = start_count_[slot];
    size_t k = 0;
    for (size_t p = 0; p < s_.phases.size(); ++p) {
      int created = 0, destroyed = 0;
      for (; k < ops.size() && ops[k].phase == static_cast<int>(p); ++k) {
        const Op& op = s_.phases[p][ops[k].op];
        if (op.slot < 0) continue;
        created += op.action == StepAction::kCreate;
        destroyed += op.action == StepAction::kDestroy;
      }
      busy[p] = count > 0 || created > 0;
      count += created - destroyed;
    }
    return busy;
  }

  // True when every phase's start state plus its creates is a legal layout
  // on `slot` with its steps `ops`.
  bool Legal(int slot, const std::vector<Where>& ops) const {
    const GpuModel& model = *s_.layout.model[slot];
    std::vector<Inst> now;
    if (slot < static_cast<int>(initial_.size())) now = initial_[slot].insts;
    size_t k = 0;
    for (size_t p = 0; p < s_.phases.size() && k < ops.size(); ++p) {
      MigSlots slots(model);
      for (const Inst& in : now) {
        if (!slots.CanPlace(in.profile, in.start)) return false;
        slots.Place(in.profile, in.start);
      }
      const size_t first = k;
      for (; k < ops.size() && ops[k].phase == static_cast<int>(p); ++k) {
        const Op& op = s_.phases[p][ops[k].op];
        if (op.slot < 0 || op.action != StepAction::kCreate) continue;
        if (!slots.CanPlace(op.to.profile, op.to.start)) return false;
        slots.Place(op.to.profile, op.to.start);
      }
      for (size_t j = first; j < k; ++j) {
        const Op& op = s_.phases[p][ops[j].op];
        if (op.slot < 0) continue;
        std::erase_if(now, [&](const Inst& in) {
          return op.action != StepAction::kCreate && SamePlace(in, op.from);
        });
        if (op.action != StepAction::kDestroy) now.push_back(op.to);
      }
    }
    return true;
  }

  void MergeSlot(int slot, std::vector<Where>& ops) {
    for (size_t d = 0; d < ops.size(); ++d) {
      Op& destroy = s_.phases[ops[d].phase][ops[d].op];
      if (destroy.slot < 0 || destroy.action != StepAction::kDestroy) continue;
      for (size_t c = d + 1; c < ops.size(); ++c) {
        Op& create = s_.phases[ops[c].phase][ops[c].op];
        if (create.slot < 0) continue;
        const Inst& touched = create.action == StepAction::kCreate ? create.to : create.from;
        if ((touched.mask & destroy.from.mask) == 0) continue;
        // The first later step on these slices: merge only with a create
        // in a later phase, in the same place.
        if (create.action == StepAction::kCreate && SamePlace(create.to, destroy.from) &&
            ops[c].phase > ops[d].phase) {
          TryMerge(slot, ops, d, c);
        }
        break;
      }
    }
  }

  void TryMerge(int slot, std::vector<Where>& ops, size_t d, size_t c) {
    Op& destroy = s_.phases[ops[d].phase][ops[d].op];
    Op& create = s_.phases[ops[c].phase][ops[c].op];
    const std::vector<char> before = Busy(slot, ops);
    const Op saved_destroy = destroy, saved_create = create;
    destroy.slot = -1;
    if (SameInstance(saved_destroy.from, saved_create.to)) {
      create.slot = -1;
    } else {
      create = {StepAction::kReconfigure, slot, saved_destroy.from, saved_create.to};
    }
    const std::vector<char> after = Busy(slot, ops);
    bool fits = Legal(slot, ops);
    for (size_t p = 0; fits && p < after.size(); ++p) {
      fits = union_count_[p] - before[p] + after[p] <= budget_;
    }
    if (!fits) {
      destroy = saved_destroy;
      create = saved_create;
      return;
    }
    for (size_t p = 0; p < after.size(); ++p) union_count_[p] += after[p] - before[p];
  }

  Schedule& s_;
  const int budget_;
  std::vector<int> start_count_;  // per slot
  std::vector<Gpu> initial_;      // A's GPUs (slot = A's order)
  std::vector<int> union_count_;  // per phase: nonempty GPUs, start state plus creates
};

}  // namespace

void MergeReplaced(const Parsed& parsed, Schedule& schedule, int budget) {
  if (!schedule.ok) return;
  Merger(schedule, budget).Run(parsed);
}

}  // namespace tessera::transition_internal
