// The phase scheduler of the transition planner: list scheduling of the
// differences between the cluster's state and B's GPUs on it.
//
// Every cluster GPU has its instances now and a target (the B GPU mapped
// onto it, or nothing). Its pending work is the diff of the two: destroys,
// reconfigures (same profile and start, something else runs) and creates.
// Each phase, from the state at its start:
//  1. creates: every create whose slices are free and which keeps the layout
//     legal (MigSlots: no overlap, max instances of "+me" profiles) next to
//     the instances there now and the phase's other creates: capacity only
//     helps. A create on an empty GPU opens it; GPUs open while the phase's
//     start state plus its creates hold at most `budget` nonempty GPUs,
//     those serving a service that waits for capacity first;
//  2. destroys and reconfigures, each service's as long as its capacity in
//     the phase's worst state (these done, the creates not yet) stays at
//     its floor: first those that free slices a waiting create needs (or
//     reconfigure an instance for a service that waits), then those that
//     empty a GPU no B GPU uses, then the rest; smaller first within a rank.
// When a phase can schedule nothing (a cycle: a service's new instance waits
// for slices held by another service's instance, whose removal waits for
// that service's new instance, ...), a blocked B GPU moves onto an empty GPU
// (a spare, or an A GPU already emptied): its creates then wait for nothing
// and its old GPU is emptied. It picks the B GPU whose blocked new instances
// serve the waiting services, wasting the fewest instances made during the
// transition, then moving the fewest of A's that stay in place; with no
// GPU free in the budget the schedule fails and names the waiting services.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "transition/transition_internal.h"

namespace tessera::transition_internal {
namespace {

// Rounding slack of a capacity compared with its floor (relative, as the
// checker compares them).
double Tolerance(double floor) { return 1e-9 * floor; }

// A GPU's occupancy for placing B's instances (whose starts the catalog
// allows, B's layout being legal): the slices taken and the instances of
// each profile. MigSlots without its list, so it costs no allocation.
class Occupancy {
 public:
  Occupancy(const GpuModel& gpu, const std::vector<Inst>& now) : gpu_(&gpu) {
    for (const Inst& in : now) Place(in);
  }
  bool CanPlace(const Inst& in) const {
    return (mask_ & in.mask) == 0 &&
           (in.profile >= kProfiles ||
            count_[in.profile] < gpu_->profiles[in.profile].max_instances);
  }
  void Place(const Inst& in) {
    mask_ |= in.mask;
    if (in.profile < kProfiles) ++count_[in.profile];
  }

 private:
  static constexpr int kProfiles = 16;  // more than any catalog GPU has
  const GpuModel* gpu_;
  SliceMask mask_ = 0;
  std::array<int, kProfiles> count_{};
};

class Scheduler {
 public:
  Scheduler(const Parsed& parsed, const ClusterLayout& layout, int budget,
            const ScheduleHints& hints)
      : p_(parsed), budget_(budget), frozen_(hints.frozen), depth_(hints.depth) {
    frozen_.resize(p_.b.gpus.size(), 0);
    depth_.resize(p_.b.gpus.size(), 0);
    out_.finish.assign(p_.b.gpus.size(), 0);
    out_.layout = layout;
    const size_t slots = layout.index.size();
    now_.resize(slots);
    target_.assign(slots, -1);
    for (size_t a = 0; a < p_.a.gpus.size(); ++a) now_[a] = p_.a.gpus[a].insts;
    for (size_t b = 0; b < p_.b.gpus.size(); ++b) {
      if (layout.slot_of_b[b] >= 0 && !p_.b.gpus[b].insts.empty()) {
        target_[layout.slot_of_b[b]] = static_cast<int>(b);
      }
    }
    cap_ = p_.cap_a;
    starved_.assign(cap_.size(), 0);
    diff_.resize(slots);
    listed_.assign(slots, 0);
    for (size_t s = 0; s < slots; ++s) {
      if (!now_[s].empty()) ++nonempty_;
      Refresh(static_cast<int>(s));
    }
    out_.peak_gpus = nonempty_;
  }

  Schedule Run() && {
    // Each round schedules a step or moves a B GPU (at most once each), so
    // this bound is never reached; it guards against a bug looping forever.
    size_t ops = 0;
    for (const Diff& d : diff_) ops += d.destroy.size() + d.reconf.size() + d.create.size();
    const size_t rounds = 4 * (ops + p_.b.gpus.size()) + 16;
    MoveEarly();
    for (size_t round = 0; round < rounds; ++round) {
      Compact();
      if (pending_.empty()) {
        out_.ok = true;
        return std::move(out_);
      }
      if (Phase()) {
        MoveEarly();
      } else if (!Remap()) {
        return std::move(out_);
      }
    }
    out_.reason = "internal error: the schedule did not converge";
    return std::move(out_);
  }

 private:
  const std::vector<Inst>& Target(int slot) const {
    static const std::vector<Inst> kNone;
    return target_[slot] >= 0 ? p_.b.gpus[target_[slot]].insts : kNone;
  }

  // Recomputes a slot's diff and lists it as pending if there is work.
  void Refresh(int slot) {
    diff_[slot] = DiffOf(now_[slot], Target(slot));
    if (!diff_[slot].empty() && !listed_[slot]) {
      listed_[slot] = 1;
      pending_.push_back(slot);
    }
  }

  // Drops slots whose work is done from `pending_` (in slot order).
  void Compact() {
    std::erase_if(pending_, [&](int slot) {
      if (!diff_[slot].empty()) return false;
      listed_[slot] = 0;
      return true;
    });
    std::sort(pending_.begin(), pending_.end());
  }

  double Slack(int service) const { return cap_[service] - p_.keep[service]; }

  // One phase; false (nothing emitted) when no step can be scheduled.
  bool Phase() {
    std::vector<Op> ops;
    int opened = PickCreates(ops);
    std::vector<char> starved(cap_.size(), 0);
    PickRemovals(ops, starved);
    starved_ = std::move(starved);
    if (ops.empty()) return false;
    out_.peak_gpus = std::max(out_.peak_gpus, nonempty_ + opened);
    Apply(ops);
    out_.phases.push_back(std::move(ops));
    return true;
  }

  // The creates of this phase; returns how many empty GPUs they open.
  int PickCreates(std::vector<Op>& ops) {
    blocked_mask_.assign(now_.size(), 0);
    blocked_profiles_.assign(now_.size(), 0);
    struct Opening {
      double relief;
      int slot;
      std::vector<int> creates;
    };
    std::vector<Opening> openings;
    for (int slot : pending_) {
      const Diff& d = diff_[slot];
      if (d.create.empty() || Frozen(slot)) continue;
      const std::vector<Inst>& target = Target(slot);
      Occupancy slots(*out_.layout.model[slot], now_[slot]);
      std::vector<int> placeable;
      double relief = 0;
      for (int j : d.create) {
        const Inst& t = target[j];
        if (slots.CanPlace(t)) {
          slots.Place(t);
          placeable.push_back(j);
          if (starved_[t.service]) relief += t.cap;
        } else {
          blocked_mask_[slot] |= t.mask;
          blocked_profiles_[slot] |= std::uint32_t{1} << t.profile;
        }
      }
      if (placeable.empty()) continue;
      if (now_[slot].empty()) {
        openings.push_back({relief, slot, std::move(placeable)});
      } else {
        for (int j : placeable) ops.push_back({StepAction::kCreate, slot, {}, target[j]});
      }
    }
    std::sort(openings.begin(), openings.end(), [](const Opening& x, const Opening& y) {
      return std::tuple(-x.relief, -static_cast<int>(x.creates.size()), x.slot) <
             std::tuple(-y.relief, -static_cast<int>(y.creates.size()), y.slot);
    });
    const int room = std::max(0, budget_ - nonempty_);
    const int opened = std::min(room, static_cast<int>(openings.size()));
    for (int k = 0; k < opened; ++k) {
      const Opening& o = openings[k];
      for (int j : o.creates) ops.push_back({StepAction::kCreate, o.slot, {}, Target(o.slot)[j]});
    }
    // Unopened GPUs' creates count as waiting (not blocked by slices).
    return opened;
  }

  // The destroys and reconfigures that keep every floor; marks the services
  // with a step left out in `starved`. Floors bind per service: a service
  // whose slack covers all its steps takes them all, the others theirs in
  // rank order while the slack lasts.
  void PickRemovals(std::vector<Op>& ops, std::vector<char>& starved) {
    by_service_.resize(cap_.size());
    std::vector<int> services;
    for (int slot : pending_) {
      const Diff& d = diff_[slot];
      const bool emptied = target_[slot] < 0;
      auto add = [&](int rank, const Op& op) {
        std::vector<Candidate>& list = by_service_[op.from.service];
        if (list.empty()) services.push_back(op.from.service);
        list.push_back({rank, op.from.cap, op});
      };
      for (int i : d.destroy) {
        const Inst& in = now_[slot][i];
        const bool frees = (in.mask & blocked_mask_[slot]) != 0 ||
                           (blocked_profiles_[slot] >> in.profile & 1) != 0;
        add(frees ? 0 : emptied ? 1 : 2, {StepAction::kDestroy, slot, in, {}});
      }
      if (Frozen(slot)) continue;
      for (auto [i, j] : d.reconf) {
        const Inst& to = Target(slot)[j];
        add(starved_[to.service] ? 0 : 2, {StepAction::kReconfigure, slot, now_[slot][i], to});
      }
    }
    for (int s : services) {
      std::vector<Candidate>& list = by_service_[s];
      const double floor = p_.keep[s];
      double need = 0;
      for (const Candidate& c : list) need += c.cap;
      if (floor <= 0 || Slack(s) - need >= -Tolerance(floor)) {
        for (const Candidate& c : list) ops.push_back(c.op);
        list.clear();
        continue;
      }
      std::sort(list.begin(), list.end(), [](const Candidate& x, const Candidate& y) {
        return std::tie(x.rank, x.cap, x.op.slot, x.op.from.start) <
               std::tie(y.rank, y.cap, y.op.slot, y.op.from.start);
      });
      double used = 0;
      for (const Candidate& c : list) {
        if (Slack(s) - used - c.cap < -Tolerance(floor)) {
          starved[s] = 1;
          continue;
        }
        used += c.cap;
        ops.push_back(c.op);
      }
      list.clear();
    }
  }

  void Apply(const std::vector<Op>& ops) {
    std::vector<int> touched;
    for (const Op& op : ops) {
      std::vector<Inst>& insts = now_[op.slot];
      const bool was_empty = insts.empty();
      switch (op.action) {
        case StepAction::kDestroy:
          std::erase_if(insts, [&](const Inst& in) { return SamePlace(in, op.from); });
          cap_[op.from.service] -= op.from.cap;
          break;
        case StepAction::kReconfigure:
          for (Inst& in : insts) {
            if (SamePlace(in, op.from)) in = op.to;
          }
          cap_[op.from.service] -= op.from.cap;
          cap_[op.to.service] += op.to.cap;
          break;
        case StepAction::kCreate:
          insts.insert(
              std::upper_bound(insts.begin(), insts.end(), op.to,
                               [](const Inst& x, const Inst& y) { return x.start < y.start; }),
              op.to);
          cap_[op.to.service] += op.to.cap;
          break;
      }
      if (was_empty != insts.empty()) nonempty_ += insts.empty() ? -1 : 1;
      touched.push_back(op.slot);
      if (op.action != StepAction::kDestroy && target_[op.slot] >= 0) {
        out_.finish[target_[op.slot]] = static_cast<int>(out_.phases.size()) + 1;
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int slot : touched) Refresh(slot);
  }

  // The services that cannot take every step they wait for in the next
  // phase: their pending destroys and reconfigures exceed their slack.
  std::vector<char> Starving() const {
    std::vector<double> need(cap_.size(), 0);
    for (int slot : pending_) {
      for (int i : diff_[slot].destroy) need[now_[slot][i].service] += now_[slot][i].cap;
      for (auto [i, j] : diff_[slot].reconf) need[now_[slot][i].service] += now_[slot][i].cap;
    }
    std::vector<char> starving(cap_.size(), 0);
    for (size_t s = 0; s < cap_.size(); ++s) {
      const double floor = p_.keep[s];
      starving[s] = floor > 0 && need[s] > Slack(static_cast<int>(s)) + Tolerance(floor);
    }
    return starving;
  }

  // What moving the target of `slot` onto an empty GPU would bring.
  struct Move {
    int slot = -1;
    double relief = 0;  // capacity for `starving` services stuck behind them
    int wasted = 0;     // instances made here during the transition, to make again
    int moved = 0;      // A's instances kept or reconfigured here, to make anew
    // False when, with the B GPU's instances made elsewhere, some service
    // still could not spare its instances here: the GPU then stays taken.
    bool frees = false;
    int depth = 0;  // the phase its B GPU was finished in a previous schedule
    std::tuple<int, int, bool, int, double, int> Score(const ClusterLayout& layout) const {
      return {wasted, -depth, !frees, moved, -relief, layout.index[slot]};
    }
  };

  // Only the relief when there is none, unless `count_all`.
  Move Evaluate(int slot, const std::vector<char>& starving, bool count_all = false) const {
    Move move;
    move.slot = slot;
    if (target_[slot] < 0) return move;
    move.depth = depth_[target_[slot]];
    const Diff& d = diff_[slot];
    const std::vector<Inst>& target = Target(slot);
    const std::vector<Inst>& now = now_[slot];
    Occupancy slots(*out_.layout.model[slot], now);
    const bool frozen = Frozen(slot);
    for (int j : d.create) {
      const Inst& t = target[j];
      if (slots.CanPlace(t)) {
        slots.Place(t);
        if (frozen && starving[t.service]) move.relief += t.cap;
        continue;
      }
      if (!starving[t.service]) continue;
      // Stuck: an instance in its way serves a starving service.
      const bool stuck = std::any_of(d.destroy.begin(), d.destroy.end(), [&](int i) {
        return starving[now[i].service] &&
               ((now[i].mask & t.mask) != 0 || now[i].profile == t.profile);
      });
      if (stuck) move.relief += t.cap;
    }
    for (auto [i, j] : d.reconf) {
      if (starving[target[j].service] && starving[now[i].service]) move.relief += target[j].cap;
    }
    if (move.relief <= 0 && !count_all) return move;
    for (const Inst& in : now) {
      if (!InTarget(slot, in)) continue;
      if (FromA(slot, in)) {
        ++move.moved;
      } else {
        ++move.wasted;
      }
    }
    move.moved += static_cast<int>(d.reconf.size());
    if (frozen) move.moved = 0;  // bound to move: the earlier, the better
    move.frees = std::all_of(now.begin(), now.end(), [&](const Inst& in) {
      const int s = in.service;
      if (p_.keep[s] <= 0) return true;
      double lost = 0, gained = 0;
      for (const Inst& x : now) lost += x.service == s ? x.cap : 0;
      for (const Inst& t : target) gained += t.service == s ? t.cap : 0;
      return Slack(s) + gained - lost >= -Tolerance(p_.keep[s]);
    });
    return move;
  }

  // The moves that bring `starving` services capacity (only those that
  // remake no instance made during the transition when `free_only`).
  std::vector<Move> Moves(const std::vector<char>& starving, bool free_only) const {
    std::vector<Move> moves;
    for (int slot : pending_) {
      if (target_[slot] < 0 || (diff_[slot].create.empty() && diff_[slot].reconf.empty())) continue;
      const Move move = Evaluate(slot, starving);
      if (move.relief <= 0 || (free_only && move.wasted > 0)) continue;
      moves.push_back(move);
    }
    return moves;
  }

  // The best of Moves(), or slot -1.
  Move BestMove(const std::vector<char>& starving, bool free_only) const {
    Move best;
    for (const Move& move : Moves(starving, free_only)) {
      if (best.slot < 0 || move.Score(out_.layout) < best.Score(out_.layout)) best = move;
    }
    return best;
  }

  // After a phase: while the budget has room, moves B GPUs whose new
  // instances are stuck behind starving services onto empty GPUs, when that
  // costs no step (their old GPU had nothing of theirs).
  void MoveEarly() {
    // Room left once every empty GPU waiting for its B GPU has it.
    int reserved = 0;
    for (int slot : pending_) reserved += now_[slot].empty() && target_[slot] >= 0;
    if (nonempty_ + reserved + 1 > budget_) return;
    const std::vector<char> starving = Starving();
    if (std::none_of(starving.begin(), starving.end(), [](char c) { return c != 0; })) return;
    // A move changes only its own slot and an empty one: one ranking does.
    std::vector<Move> moves = Moves(starving, /*free_only=*/true);
    std::sort(moves.begin(), moves.end(), [&](const Move& x, const Move& y) {
      return x.Score(out_.layout) < y.Score(out_.layout);
    });
    for (size_t k = 0;
         k < moves.size() && nonempty_ + reserved + static_cast<int>(k) + 1 <= budget_; ++k) {
      MoveTarget(moves[k].slot);
    }
  }

  // After a phase that could schedule nothing: moves one blocked B GPU onto
  // an empty GPU. False, with the reason, when none helps or fits.
  bool Remap() {
    std::vector<int> waiting;
    for (size_t s = 0; s < starved_.size(); ++s) {
      if (starved_[s]) waiting.push_back(static_cast<int>(s));
    }
    std::sort(waiting.begin(), waiting.end(),
              [&](int x, int y) { return p_.services.Name(x) < p_.services.Name(y); });
    out_.blocked_services = waiting;
    if (nonempty_ + 1 > budget_ && Thaw()) return true;
    if (nonempty_ + 1 > budget_) {
      out_.reason =
          "every move left waits for another (a new instance needs slices that an instance "
          "still serving a floor holds) and no spare GPU is free to break the cycle";
      return false;
    }
    const Move best = BestMove(starved_, /*free_only=*/false);
    if (best.slot < 0 && Thaw()) return true;
    if (best.slot < 0) {
      out_.reason = waiting.empty() ? "the GPU budget leaves no room for the new instances"
                                    : "their new instances wait for GPUs the budget does not allow";
      return false;
    }
    MoveTarget(best.slot);
    return true;
  }

  // True when `in` (on `slot` now) is one of its target's instances.
  bool InTarget(int slot, const Inst& in) const {
    const std::vector<Inst>& target = Target(slot);
    return std::any_of(target.begin(), target.end(),
                       [&](const Inst& t) { return SameInstance(t, in); });
  }

  // True when `in` (on `slot` now) was there in A.
  bool FromA(int slot, const Inst& in) const {
    if (slot >= static_cast<int>(p_.a.gpus.size())) return false;
    const std::vector<Inst>& a = p_.a.gpus[slot].insts;
    return std::any_of(a.begin(), a.end(), [&](const Inst& x) { return SameInstance(x, in); });
  }

  // True while the target of `slot` waits to be moved, untouched here.
  bool Frozen(int slot) const {
    return !thawed_ && target_[slot] >= 0 && frozen_[target_[slot]] && !moved_[target_[slot]];
  }

  // Lets frozen B GPUs be built where they are (when moving them fails);
  // false when none is frozen.
  bool Thaw() {
    if (thawed_) return false;
    for (size_t b = 0; b < frozen_.size(); ++b) {
      if (frozen_[b] && !moved_[b]) {
        thawed_ = true;
        return true;
      }
    }
    return false;
  }

  // Moves the target of `slot` onto an empty GPU of its model without one.
  void MoveTarget(int slot) {
    const int b = target_[slot];
    const GpuModel* model = p_.b.gpus[b].model;
    int host = -1;
    for (size_t s = 0; s < now_.size(); ++s) {
      if (target_[s] < 0 && now_[s].empty() && out_.layout.model[s] == model) {
        host = static_cast<int>(s);
        break;
      }
    }
    if (host < 0) {
      host = out_.layout.AddSlot(model);
      now_.emplace_back();
      target_.push_back(-1);
      diff_.emplace_back();
      listed_.push_back(0);
    }
    const Move move = Evaluate(slot, std::vector<char>(cap_.size(), 0), /*count_all=*/true);
    if (move.wasted > 0) out_.wasted_b.push_back(b);
    moved_[b] = 1;
    target_[slot] = -1;
    target_[host] = b;
    out_.layout.slot_of_b[b] = host;
    ++out_.remaps;
    Refresh(slot);
    Refresh(host);
  }

  const Parsed& p_;
  const int budget_;
  std::vector<char> frozen_;  // per B GPU: leave it alone until it moves
  std::vector<int> depth_;    // per B GPU: move the deepest first
  std::vector<char> moved_ = std::vector<char>(p_.b.gpus.size(), 0);  // per B GPU
  bool thawed_ = false;
  Schedule out_;
  std::vector<std::vector<Inst>> now_;  // per slot
  std::vector<int> target_;             // per slot: B GPU, or -1
  std::vector<Diff> diff_;              // per slot
  std::vector<char> listed_;            // per slot: in pending_
  std::vector<int> pending_;            // slots with work
  std::vector<double> cap_;             // per service, now
  std::vector<char> starved_;           // per service: a step was held back by its floor last phase
  struct Candidate {
    int rank;  // 0: frees slices a create waits for (or serves a waiting service), 1: empties
               // a GPU no B GPU uses, 2: the rest
    double cap;
    Op op;
  };
  std::vector<std::vector<Candidate>> by_service_;  // PickRemovals' buckets (kept empty)
  std::vector<SliceMask> blocked_mask_;             // per slot: slices creates wait for
  std::vector<std::uint32_t> blocked_profiles_;     // per slot: profiles of creates that wait
  int nonempty_ = 0;
};

}  // namespace

Schedule ScheduleTransition(const Parsed& parsed, const ClusterLayout& layout, int budget,
                            const ScheduleHints& hints) {
  return Scheduler(parsed, layout, budget, hints).Run();
}

}  // namespace tessera::transition_internal
