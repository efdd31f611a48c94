// CheckTransition (transition_check.h): replays a transition on A's cluster
// state with its own bookkeeping, independent of the planner
// (transition.cc): geometry comes only from the catalog and mig_layout.h's
// CheckLayout and MaskOf.
//
// The replay keeps, for every cluster GPU, the instances it holds, and for
// every service its capacity. A phase is checked in three passes over its
// steps (destroys and reconfigures, then creates, then the phase's worst
// state and GPU count) and then applied; each pass touches only the GPUs and
// services the phase names, so a check costs O(steps + GPUs + services)
// plus a sort of B's and the final state's instances.
#include "tessera/transition/transition_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/sharing.h"

namespace tessera {
namespace {

// What one instance of the replayed state holds.
struct Held {
  int profile = 0;  // index into GpuModel::profiles
  int start = 0;
  std::string service;
  std::string model;
  int batch = 1;
  int procs = 1;
  double throughput_rps = 0;
  double capacity = 0;  // TransitionCapacity::Of: what the floors count
};

using GpuState = std::vector<Held>;

// Throughputs equal up to 1e-6 relative, or the 4 decimals the JSON formats
// round them to.
bool SameThroughput(double a, double b) {
  return std::fabs(a - b) <= std::max(1e-6 * std::max(std::fabs(a), std::fabs(b)), 0.5e-4);
}

bool SameInstance(const Held& a, const Held& b) {
  return a.profile == b.profile && a.start == b.start && a.service == b.service &&
         a.model == b.model && a.batch == b.batch && a.procs == b.procs &&
         SameThroughput(a.throughput_rps, b.throughput_rps);
}

std::vector<Placement> Placements(const GpuState& state) {
  std::vector<Placement> out;
  out.reserve(state.size());
  for (const Held& h : state) out.push_back({h.profile, h.start});
  return out;
}

class Replay {
 public:
  Replay(const Deployment& from, const Deployment& to, const Transition& t)
      : from_(from), to_(to), t_(t), shares_(from, to) {}

  TransitionCheck Run();

 private:
  // One step of the phase being checked that removes an instance (destroy or
  // reconfigure), and where that instance is.
  struct Removal {
    const TransitionStep* step;
    int gpu;
    size_t at;  // index into cluster_[gpu]
  };
  struct Create {
    const TransitionStep* step;
    Held held;
  };

  void Violation(std::string message) { check_.violations.push_back(std::move(message)); }
  std::string Name(const Held& h) const {
    return fmt::format("{}@{} of {}", gpu_->profiles[h.profile].name, h.start, h.service);
  }
  static std::string Where(int phase, const TransitionStep& step, std::string_view action) {
    return fmt::format("phase {}, step {} ({} {}@{} on GPU {})", phase, step.id, action,
                       step.profile, step.start, step.gpu);
  }

  bool CheckInputs();
  bool LoadStart();
  // A's GPUs, and an empty GPU at every other index.
  static bool IsClusterGpu(int gpu) { return gpu >= 0; }
  // The step's profile and GPU, or a violation and -1.
  int ProfileOf(int phase, const TransitionStep& step, std::string_view action);
  void CheckPhase(int phase, const TransitionPhase& steps);
  void FindRemovals(int phase, const TransitionPhase& steps, std::vector<Removal>& removals);
  void FindCreates(int phase, const TransitionPhase& steps, const std::vector<Removal>& removals,
                   std::vector<Create>& creates);
  void CheckWorstState(int phase, const std::vector<Removal>& removals);
  void CheckGpuCount(int phase, const std::vector<Create>& creates);
  void Apply(const std::vector<Removal>& removals, const std::vector<Create>& creates);
  void CheckFinalState();
  void CheckSummary();

  double Floor(const std::string& service) const {
    const auto it = floor_.find(service);
    return it == floor_.end() ? 0 : it->second;
  }
  void Observe(const std::string& service, double capacity) {
    const double floor = Floor(service);
    if (floor > 0) min_ratio_ = std::min(min_ratio_, capacity / floor);
  }

  const Deployment& from_;
  const Deployment& to_;
  const Transition& t_;
  const TransitionCapacity shares_;
  const GpuModel* gpu_ = nullptr;
  std::unordered_map<int, GpuState> cluster_;  // A's GPUs, then spares as used
  int nonempty_ = 0;                           // cluster GPUs holding an instance
  int gpu_limit_ = 0;
  std::unordered_map<std::string, double> floor_;
  std::unordered_map<std::string, double> capacity_;
  double min_ratio_ = std::numeric_limits<double>::infinity();  // over services with a floor > 0
  TransitionCheck check_;
};

int CountNonEmpty(const Deployment& d) {
  return static_cast<int>(std::count_if(
      d.gpus.begin(), d.gpus.end(), [](const GpuAssignment& g) { return !g.instances().empty(); }));
}

// Both plans MIG plans of the transition's GPU model. False when the replay
// cannot start.
bool Replay::CheckInputs() {
  bool ok = true;
  for (const auto& [name, d] : {std::pair{"A", &from_}, std::pair{"B", &to_}}) {
    if (!UsesMig(d->sharing)) {
      Violation(fmt::format("{} is an MPS plan ({}): transitions move MIG instances only", name,
                            SharingName(d->sharing)));
      ok = false;
    }
    for (const GpuAssignment& g : d->gpus) {
      if (GpuModelName(*d, g) != t_.gpu) {
        Violation(fmt::format("{}'s GPU {} is a {}, the transition is for {}", name, g.index,
                              GpuModelName(*d, g), t_.gpu));
        ok = false;
        break;
      }
    }
  }
  Result<const GpuModel*> gpu = FindMigGpu(t_.gpu);
  if (!gpu.ok()) {
    Violation(fmt::format("gpu: {}", gpu.status().message()));
    return false;
  }
  gpu_ = *gpu;
  return ok;
}

// A's instances on their GPUs, the floors, and A's capacities. False when
// A's layout is illegal: the replay (MaskOf) needs legal placements.
bool Replay::LoadStart() {
  bool legal = true;
  for (const GpuAssignment& g : from_.gpus) {
    GpuState& state = cluster_[g.index];
    for (const Instance& in : g.instances()) {
      const int profile = gpu_->ProfileIndex(in.profile);
      if (profile < 0) {
        Violation(fmt::format("start state (A): GPU {}: {} is not a profile of {}", g.index,
                              in.profile, gpu_->name));
        legal = false;
        continue;
      }
      state.push_back({profile, in.start, in.service, in.model, in.batch, in.procs,
                       in.throughput_rps, shares_.Of(in)});
      capacity_[in.service] += state.back().capacity;
    }
    if (Status s = CheckLayout(*gpu_, Placements(state)); !s.ok()) {
      Violation(fmt::format("start state (A): GPU {}: {} (rule a)", g.index, s.message()));
      legal = false;
    }
    if (!state.empty()) ++nonempty_;
  }
  std::unordered_map<std::string, double> rate_a;
  for (const ServiceOutcome& s : from_.services) rate_a[s.name] = s.rate_rps;
  for (const ServiceOutcome& s : to_.services) {
    const auto it = rate_a.find(s.name);
    if (it != rate_a.end()) floor_[s.name] = std::min(it->second, s.rate_rps);
  }
  for (const auto& [service, floor] : floor_) {
    const auto it = capacity_.find(service);
    const double capacity = it == capacity_.end() ? 0 : it->second;
    Observe(service, capacity);
    if (capacity < floor * (1 - 1e-9)) {
      Violation(fmt::format("start state (A): {} has {:g} req/s < its floor {:g} (rule b)", service,
                            capacity, floor));
    }
  }
  gpu_limit_ = std::max(nonempty_, CountNonEmpty(to_)) + t_.spare_gpus;
  check_.measured.peak_gpus = nonempty_;
  return legal;
}

int Replay::ProfileOf(int phase, const TransitionStep& step, std::string_view action) {
  if (!IsClusterGpu(step.gpu)) {
    Violation(fmt::format("{}: GPU {} is not a cluster GPU index (0 or more)",
                          Where(phase, step, action), step.gpu));
    return -1;
  }
  const int profile = gpu_->ProfileIndex(step.profile);
  if (profile < 0) {
    Violation(fmt::format("{}: {} is not a profile of {}", Where(phase, step, action), step.profile,
                          gpu_->name));
  }
  return profile;
}

// Destroys and reconfigures: each names an instance held at the phase's
// start, and no instance is named twice.
void Replay::FindRemovals(int phase, const TransitionPhase& steps, std::vector<Removal>& removals) {
  std::unordered_set<int64_t> named;  // (gpu, start) of the phase's instances
  for (const TransitionStep& step : steps.steps) {
    if (step.action == StepAction::kCreate) continue;
    const bool destroy = step.action == StepAction::kDestroy;
    const std::string_view action = destroy ? "destroy" : "reconfigure";
    const std::string& service = destroy ? step.service : step.from_service;
    const int profile = ProfileOf(phase, step, action);
    if (profile < 0) continue;
    GpuState& state = cluster_[step.gpu];
    const auto it = std::find_if(state.begin(), state.end(), [&](const Held& h) {
      return h.profile == profile && h.start == step.start && h.service == service;
    });
    if (it == state.end()) {
      Violation(fmt::format("{}: GPU {} holds no {}@{} of {} at the phase's start (rule a)",
                            Where(phase, step, action), step.gpu, step.profile, step.start,
                            service));
      continue;
    }
    if (!named.insert(int64_t{step.gpu} << 32 | static_cast<uint32_t>(step.start)).second) {
      Violation(fmt::format("{}: another step of the phase acts on the same instance (rule a)",
                            Where(phase, step, action)));
      continue;
    }
    removals.push_back({&step, step.gpu, static_cast<size_t>(it - state.begin())});
  }
}

// Creates: each at a legal start, on slices that nothing held at the phase's
// start (destroyed in the phase or not) and no other create of the phase
// uses; then the GPU's whole layout (max instances).
void Replay::FindCreates(int phase, const TransitionPhase& steps,
                         const std::vector<Removal>& removals, std::vector<Create>& creates) {
  std::unordered_map<int, std::vector<size_t>> by_gpu;  // GPU -> indices into `creates`
  std::unordered_set<int> bad_gpus;
  const auto key = [](int gpu, size_t at) { return int64_t{gpu} << 32 | static_cast<int64_t>(at); };
  std::unordered_map<int64_t, const Removal*> removed;  // (GPU, index into its state)
  for (const Removal& r : removals) removed.emplace(key(r.gpu, r.at), &r);
  for (const TransitionStep& step : steps.steps) {
    if (step.action != StepAction::kCreate) continue;
    const int profile = ProfileOf(phase, step, "create");
    if (profile < 0) continue;
    const Placement placement{profile, step.start};
    if (Status s = CheckLayout(*gpu_, {&placement, 1}); !s.ok()) {
      Violation(fmt::format("{}: {} (rule a)", Where(phase, step, "create"), s.message()));
      continue;
    }
    const SliceMask mask = MaskOf(*gpu_, placement);
    const GpuState& state = cluster_[step.gpu];
    // A live instance under the create makes it impossible; slices a destroy
    // of the same phase frees make it unsafe, yet the state after the phase
    // holds it: replay it so that what follows is checked as planned.
    std::string live;
    std::string freed;
    for (size_t i = 0; i < state.size() && live.empty(); ++i) {
      if (!(MaskOf(*gpu_, {state[i].profile, state[i].start}) & mask)) continue;
      const auto removal = removed.find(key(step.gpu, i));
      if (removal == removed.end()) {
        live = fmt::format("overlaps {}, held throughout the phase", Name(state[i]));
      } else if (freed.empty()) {
        freed = fmt::format("uses slices of {} that step {} frees in the same phase",
                            Name(state[i]), removal->second->step->id);
      }
    }
    std::vector<size_t>& here = by_gpu[step.gpu];
    for (size_t c : here) {
      if (!live.empty()) break;
      if (MaskOf(*gpu_, {creates[c].held.profile, creates[c].held.start}) & mask) {
        live = fmt::format("overlaps step {}'s create", creates[c].step->id);
      }
    }
    if (!live.empty() || !freed.empty()) {
      Violation(fmt::format("{}: {} (rule a)", Where(phase, step, "create"),
                            live.empty() ? freed : live));
      bad_gpus.insert(step.gpu);
      if (!live.empty()) continue;
    }
    here.push_back(creates.size());
    creates.push_back({&step,
                       {profile, step.start, step.service, step.model, step.batch, step.procs,
                        step.throughput_rps, shares_.Of(step)}});
  }
  for (const auto& [gpu, indices] : by_gpu) {
    if (indices.empty() || bad_gpus.count(gpu)) continue;
    std::vector<Placement> all = Placements(cluster_[gpu]);
    for (size_t c : indices) all.push_back({creates[c].held.profile, creates[c].held.start});
    if (Status s = CheckLayout(*gpu_, all); !s.ok()) {
      Violation(fmt::format("phase {}: GPU {} with the phase's creates: {} (rule a)", phase, gpu,
                            s.message()));
    }
  }
}

// The worst state: the phase's destroys and reconfigures done, no create yet.
void Replay::CheckWorstState(int phase, const std::vector<Removal>& removals) {
  std::unordered_map<std::string, std::pair<double, std::vector<std::string>>> lost;
  for (const Removal& r : removals) {
    const Held& h = cluster_[r.gpu][r.at];
    auto& [rps, ids] = lost[h.service];
    rps += h.capacity;
    ids.push_back(r.step->id);
  }
  for (const auto& [service, loss] : lost) {
    const double capacity = capacity_[service] - loss.first;
    Observe(service, capacity);
    const double floor = Floor(service);
    if (floor > 0 && capacity < floor * (1 - 1e-9)) {
      Violation(fmt::format("phase {}, steps {}: {} drops to {:g} req/s < its floor {:g} (rule b)",
                            phase, fmt::join(loss.second, ", "), service, std::max(capacity, 0.0),
                            floor));
    }
  }
}

// The GPUs holding an instance at the phase's start, plus the empty ones its
// creates fill.
void Replay::CheckGpuCount(int phase, const std::vector<Create>& creates) {
  std::unordered_set<int> filled;
  for (const Create& c : creates) {
    if (cluster_[c.step->gpu].empty()) filled.insert(c.step->gpu);
  }
  const int count = nonempty_ + static_cast<int>(filled.size());
  check_.measured.peak_gpus = std::max(check_.measured.peak_gpus, count);
  if (count > gpu_limit_) {
    Violation(
        fmt::format("phase {}: {} GPUs hold an instance, more than max(GPUs of A, GPUs of "
                    "B) + {} spare = {} (rule c)",
                    phase, count, t_.spare_gpus, gpu_limit_));
  }
}

void Replay::Apply(const std::vector<Removal>& removals, const std::vector<Create>& creates) {
  std::vector<std::pair<int, size_t>> destroyed;  // (GPU, index), erased last to first
  for (const Removal& r : removals) {
    Held& h = cluster_[r.gpu][r.at];
    capacity_[h.service] -= h.capacity;
    if (r.step->action == StepAction::kDestroy) {
      destroyed.emplace_back(r.gpu, r.at);
      continue;
    }
    h.service = r.step->service;
    h.model = r.step->model;
    h.batch = r.step->batch;
    h.procs = r.step->procs;
    h.throughput_rps = r.step->throughput_rps;
    h.capacity = shares_.Of(*r.step);
    capacity_[h.service] += h.capacity;
  }
  std::sort(destroyed.rbegin(), destroyed.rend());
  for (const auto& [gpu, at] : destroyed) {
    GpuState& state = cluster_[gpu];
    state.erase(state.begin() + static_cast<std::ptrdiff_t>(at));
    if (state.empty()) --nonempty_;
  }
  for (const Create& c : creates) {
    GpuState& state = cluster_[c.step->gpu];
    if (state.empty()) ++nonempty_;
    state.push_back(c.held);
    capacity_[c.held.service] += c.held.capacity;
  }
}

void Replay::CheckPhase(int phase, const TransitionPhase& steps) {
  std::vector<Removal> removals;
  std::vector<Create> creates;
  FindRemovals(phase, steps, removals);
  FindCreates(phase, steps, removals, creates);
  CheckWorstState(phase, removals);
  CheckGpuCount(phase, creates);
  Apply(removals, creates);
}

// (d): gpu_map maps every GPU of B, one to one, onto cluster GPUs; each
// holds what B's GPU holds; every other cluster GPU is empty.
void Replay::CheckFinalState() {
  std::unordered_map<int, int> b_of_cluster;
  std::unordered_set<int> b_indices;
  for (const GpuAssignment& g : to_.gpus) b_indices.insert(g.index);
  for (const auto& [b, cluster] : t_.gpu_map) {
    if (!b_indices.count(b)) {
      Violation(fmt::format("gpu_map: {} is not a GPU index of B (rule d)", b));
    }
    if (!IsClusterGpu(cluster)) {
      Violation(fmt::format("gpu_map: B's GPU {} -> {}, which is not a cluster GPU index (rule d)",
                            b, cluster));
      continue;
    }
    const auto [it, inserted] = b_of_cluster.emplace(cluster, b);
    if (!inserted) {
      Violation(fmt::format("gpu_map: B's GPUs {} and {} both map to cluster GPU {} (rule d)",
                            it->second, b, cluster));
    }
  }
  const auto by_place = [](const Held& a, const Held& b) {
    return std::tie(a.start, a.profile) < std::tie(b.start, b.profile);
  };
  for (const GpuAssignment& g : to_.gpus) {
    const auto mapped = t_.gpu_map.find(g.index);
    if (mapped == t_.gpu_map.end()) {
      Violation(fmt::format("gpu_map: B's GPU {} is not mapped (rule d)", g.index));
      continue;
    }
    const auto state_it = cluster_.find(mapped->second);
    GpuState held = state_it == cluster_.end() ? GpuState{} : state_it->second;
    GpuState want;
    for (const Instance& in : g.instances()) {
      want.push_back({gpu_->ProfileIndex(in.profile), in.start, in.service, in.model, in.batch,
                      in.procs, in.throughput_rps});
    }
    std::sort(held.begin(), held.end(), by_place);
    std::sort(want.begin(), want.end(), by_place);
    const std::string where =
        fmt::format("final state: GPU {} (B's GPU {})", mapped->second, g.index);
    for (const Held& w : want) {
      const auto h = std::find_if(held.begin(), held.end(), [&](const Held& x) {
        return x.profile == w.profile && x.start == w.start;
      });
      const std::string place =
          fmt::format("{}@{}", w.profile < 0 ? "?" : gpu_->profiles[w.profile].name, w.start);
      if (h == held.end()) {
        Violation(fmt::format("{}: missing {} of {} (rule d)", where, place, w.service));
      } else if (!SameInstance(*h, w)) {
        Violation(
            fmt::format("{}: {} runs {} ({}, batch {} x {} procs, {:g} req/s) where B runs "
                        "{} ({}, batch {} x {} procs, {:g} req/s) (rule d)",
                        where, place, h->service, h->model, h->batch, h->procs, h->throughput_rps,
                        w.service, w.model, w.batch, w.procs, w.throughput_rps));
      }
    }
    for (const Held& h : held) {
      const bool wanted = std::any_of(want.begin(), want.end(), [&](const Held& w) {
        return w.profile == h.profile && w.start == h.start;
      });
      if (!wanted) Violation(fmt::format("{}: extra {}, not in B (rule d)", where, Name(h)));
    }
  }
  for (const auto& [gpu, state] : cluster_) {
    if (state.empty() || b_of_cluster.count(gpu)) continue;
    Violation(
        fmt::format("final state: GPU {} holds {} instance(s), e.g. {}, but no GPU of B "
                    "maps to it (rule d)",
                    gpu, state.size(), Name(state.front())));
  }
}

void Replay::CheckSummary() {
  const TransitionSummary& r = t_.summary;
  const TransitionSummary& m = check_.measured;
  const auto compare = [&](std::string_view key, int recorded, int measured) {
    if (recorded != measured) {
      Violation(
          fmt::format("summary.{}: records {}, the replay measures {}", key, recorded, measured));
    }
  };
  compare("steps", r.steps, m.steps);
  compare("phases", r.phases, m.phases);
  compare("gpus_touched", r.gpus_touched, m.gpus_touched);
  compare("peak_gpus", r.peak_gpus, m.peak_gpus);
  if (std::fabs(r.min_capacity_ratio - m.min_capacity_ratio) > 1e-3) {
    Violation(fmt::format("summary.min_capacity_ratio: records {:g}, the replay measures {:.4g}",
                          r.min_capacity_ratio, m.min_capacity_ratio));
  }
}

TransitionCheck Replay::Run() {
  if (!CheckInputs() || !LoadStart()) return check_;
  std::unordered_set<std::string> ids;
  std::unordered_set<int> touched;
  for (size_t p = 0; p < t_.phases.size(); ++p) {
    for (const TransitionStep& step : t_.phases[p].steps) {
      if (!ids.insert(step.id).second) {
        Violation(
            fmt::format("phase {}, step {}: the step id is used more than once", p + 1, step.id));
      }
      touched.insert(step.gpu);
      ++check_.measured.steps;
    }
    CheckPhase(static_cast<int>(p) + 1, t_.phases[p]);
  }
  check_.measured.phases = static_cast<int>(t_.phases.size());
  check_.measured.gpus_touched = static_cast<int>(touched.size());
  check_.measured.min_capacity_ratio = std::isinf(min_ratio_) ? 1 : min_ratio_;
  CheckFinalState();
  CheckSummary();
  return check_;
}

}  // namespace

TransitionCheck CheckTransition(const Deployment& from, const Deployment& to,
                                const Transition& transition) {
  return Replay(from, to, transition).Run();
}

}  // namespace tessera
