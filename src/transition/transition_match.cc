// The GPU matching of the transition planner: every nonempty GPU of B onto a
// cluster GPU of its model, keeping as many instances in place as a greedy
// matching finds, in near-linear time (1,000 GPUs in a few milliseconds):
//
//  1. exact layouts: a B GPU whose instances (profile, start, service, model,
//     batch, procs) equal an A GPU's takes it; such a pair is in some
//     maximum-weight matching, so nothing is lost;
//  2. kept instances: an index from each instance key to the A GPUs holding
//     it gives every remaining B GPU the A GPUs it shares instances with,
//     of which its best few (by shared instances, then instances that could
//     be reconfigured in place: same profile and start) become candidate
//     pairs; the pairs are taken greedily, heaviest first;
//  3. the rest by geometry: A GPUs are grouped by their layout (profile and
//     start of each instance, whatever they run); each remaining B GPU,
//     largest first, takes a GPU of the group sharing the most placements
//     with it (each one a reconfigure in place instead of a destroy and a
//     create), then the one whose other instances overlap its new ones
//     least (an empty GPU first: its creates wait for no destroy), then the
//     emptiest. So the A GPUs left to be emptied when B needs fewer GPUs
//     are those whose slices B's new instances would wait for
//     (MIG-serving's exchange: whole GPUs drain while the new instances go
//     to free slices);
//  4. B GPUs left over (B has more GPUs of a model than A) go to empty
//     cluster GPUs: the lowest indices A does not hold.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "transition/transition_internal.h"

namespace tessera::transition_internal {
namespace {

// How many candidate A GPUs each B GPU keeps in step 2.
constexpr int kCandidatesPerGpu = 8;

void AppendInt(std::string& key, std::int64_t v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string InstanceKey(const GpuModel* model, const Inst& in) {
  std::string key;
  key.reserve(7 * sizeof(std::int64_t));
  AppendInt(key, reinterpret_cast<std::intptr_t>(model));
  AppendInt(key, in.profile);
  AppendInt(key, in.start);
  AppendInt(key, in.service);
  AppendInt(key, in.model);
  AppendInt(key, in.batch);
  AppendInt(key, in.procs);
  return key;
}

std::string LayoutKey(const Gpu& gpu) {
  std::string key;
  AppendInt(key, reinterpret_cast<std::intptr_t>(gpu.model));
  for (const Inst& in : gpu.insts) {
    AppendInt(key, in.profile);
    AppendInt(key, in.start);
    AppendInt(key, in.service);
    AppendInt(key, in.model);
    AppendInt(key, in.batch);
    AppendInt(key, in.procs);
  }
  return key;
}

// Instances kept, and placements shared (kept or reconfigured).
std::pair<int, int> Shared(const Gpu& a, const Gpu& b) {
  int kept = 0, places = 0;
  for (const Inst& x : a.insts) {
    for (const Inst& y : b.insts) {
      if (!SamePlace(x, y)) continue;
      ++places;
      if (SameInstance(x, y)) ++kept;
    }
  }
  return {kept, places};
}

// The placements of a GPU as one number (3 bits of profile and 3 of start
// per instance, at most 8 instances), with the model.
std::pair<const GpuModel*, std::uint64_t> GeometryKey(const Gpu& gpu) {
  std::uint64_t key = 0;
  for (const Inst& in : gpu.insts) {
    key = key * 4096 + static_cast<std::uint64_t>(in.profile) * 64 + in.start + 1;
  }
  return {gpu.model, key};
}

struct GeometryGroup {
  const Gpu* layout = nullptr;  // a representative
  std::vector<int> gpus;        // A GPUs, highest index first (taken from the back)
};

struct PairHash {
  size_t operator()(const std::pair<const GpuModel*, std::uint64_t>& p) const {
    return std::hash<std::uint64_t>()(p.second * 1000003 ^
                                      reinterpret_cast<std::uintptr_t>(p.first));
  }
};

class Matcher {
 public:
  Matcher(const Parsed& parsed, ClusterLayout& layout)
      : a_(parsed.a.gpus), b_(parsed.b.gpus), layout_(layout), a_used_(a_.size(), 0) {}

  void Run(const std::vector<int>& depth) {
    Fresh(depth);
    ExactLayouts();
    KeptInstances();
    ByGeometry();
    for (size_t b = 0; b < b_.size(); ++b) {
      if (Open(b)) layout_.slot_of_b[b] = layout_.AddSlot(b_[b].model);
    }
  }

 private:
  // Where B has more GPUs of a model than A: the deepest B GPUs (depth > 0)
  // onto new GPUs.
  void Fresh(const std::vector<int>& depth) {
    if (depth.empty()) return;
    std::unordered_map<const GpuModel*, int> spare;
    for (const Gpu& b : b_) spare[b.model] += !b.insts.empty();
    for (const Gpu& a : a_) --spare[a.model];
    std::vector<int> order;
    for (size_t b = 0; b < b_.size(); ++b) {
      if (Open(b) && depth[b] > 0) order.push_back(static_cast<int>(b));
    }
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return depth[x] > depth[y]; });
    for (int b : order) {
      if (spare[b_[b].model] <= 0) continue;
      --spare[b_[b].model];
      layout_.slot_of_b[b] = layout_.AddSlot(b_[b].model);
    }
  }

  bool Open(size_t b) const { return layout_.slot_of_b[b] < 0 && !b_[b].insts.empty(); }

  void Take(size_t b, int a) {
    layout_.slot_of_b[b] = a;
    a_used_[a] = 1;
  }

  void ExactLayouts() {
    std::unordered_map<std::string, std::vector<int>> by_key;
    for (int a = static_cast<int>(a_.size()) - 1; a >= 0; --a) {
      if (!a_[a].insts.empty()) by_key[LayoutKey(a_[a])].push_back(a);
    }
    for (size_t b = 0; b < b_.size(); ++b) {
      if (!Open(b)) continue;
      auto it = by_key.find(LayoutKey(b_[b]));
      if (it == by_key.end() || it->second.empty()) continue;
      Take(b, it->second.back());
      it->second.pop_back();
    }
  }

  void KeptInstances() {
    std::unordered_map<std::string, std::vector<int>> holders;
    for (size_t a = 0; a < a_.size(); ++a) {
      if (a_used_[a]) continue;
      for (const Inst& in : a_[a].insts) {
        holders[InstanceKey(a_[a].model, in)].push_back(static_cast<int>(a));
      }
    }
    struct Candidate {
      int weight;
      int b;
      int a;
    };
    std::vector<Candidate> pairs;
    std::vector<int> count(a_.size(), 0);
    std::vector<int> touched;
    for (size_t b = 0; b < b_.size(); ++b) {
      if (!Open(b)) continue;
      touched.clear();
      for (const Inst& in : b_[b].insts) {
        auto it = holders.find(InstanceKey(b_[b].model, in));
        if (it == holders.end()) continue;
        for (int a : it->second) {
          if (count[a]++ == 0) touched.push_back(a);
        }
      }
      // The best few by shared keys (ties: lower index), weighed exactly.
      auto better = [&](int x, int y) { return std::tie(count[y], x) < std::tie(count[x], y); };
      if (static_cast<int>(touched.size()) > kCandidatesPerGpu) {
        std::nth_element(touched.begin(), touched.begin() + kCandidatesPerGpu, touched.end(),
                         better);
        touched.resize(kCandidatesPerGpu);
      }
      for (int a : touched) {
        auto [kept, places] = Shared(a_[a], b_[b]);
        if (kept > 0) pairs.push_back({kept * 16 + (places - kept), static_cast<int>(b), a});
      }
      for (int a : touched) count[a] = 0;
    }
    std::sort(pairs.begin(), pairs.end(), [](const Candidate& x, const Candidate& y) {
      return std::tie(y.weight, x.b, x.a) < std::tie(x.weight, y.b, y.a);
    });
    for (const Candidate& c : pairs) {
      if (Open(c.b) && !a_used_[c.a]) Take(c.b, c.a);
    }
  }

  void ByGeometry() {
    std::unordered_map<std::pair<const GpuModel*, std::uint64_t>, int, PairHash> group_of;
    std::vector<GeometryGroup> groups;
    for (int a = static_cast<int>(a_.size()) - 1; a >= 0; --a) {
      if (a_used_[a]) continue;
      auto [it, added] = group_of.try_emplace(GeometryKey(a_[a]), static_cast<int>(groups.size()));
      if (added) groups.push_back({&a_[a], {}});
      groups[it->second].gpus.push_back(a);
    }
    std::vector<int> order;
    for (size_t b = 0; b < b_.size(); ++b) {
      if (Open(b)) order.push_back(static_cast<int>(b));
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return b_[x].insts.size() > b_[y].insts.size(); });
    for (int b : order) {
      const Gpu& target = b_[b];
      int best = -1;
      std::tuple<int, int, int> best_score;
      for (size_t g = 0; g < groups.size(); ++g) {
        const GeometryGroup& group = groups[g];
        if (group.gpus.empty() || group.layout->model != target.model) continue;
        SliceMask shared = 0;
        int places = 0;
        for (const Inst& x : group.layout->insts) {
          for (const Inst& y : target.insts) {
            if (SamePlace(x, y)) {
              ++places;
              shared |= x.mask;
            }
          }
        }
        const int overlap = std::popcount((group.layout->mask & ~shared) & (target.mask & ~shared));
        const std::tuple<int, int, int> score(-places, overlap, std::popcount(group.layout->mask));
        if (best < 0 || score < best_score) {
          best = static_cast<int>(g);
          best_score = score;
        }
      }
      if (best < 0) continue;
      Take(b, groups[best].gpus.back());
      groups[best].gpus.pop_back();
    }
  }

  const std::vector<Gpu>& a_;
  const std::vector<Gpu>& b_;
  ClusterLayout& layout_;
  std::vector<char> a_used_;  // per A GPU (= its slot)
};

}  // namespace

int ClusterLayout::AddSlot(const GpuModel* gpu_model) {
  // The lowest index from next_index no slot has: an empty GPU between A's
  // (freed by earlier moves) before one past them all.
  while (std::find(index.begin(), index.end(), next_index) != index.end()) ++next_index;
  index.push_back(next_index++);
  model.push_back(gpu_model);
  return static_cast<int>(index.size()) - 1;
}

ClusterLayout MatchGpus(const Parsed& parsed, const std::vector<int>& depth) {
  ClusterLayout layout;
  for (const Gpu& g : parsed.a.gpus) {
    layout.index.push_back(g.index);
    layout.model.push_back(g.model);
  }
  layout.next_index = 0;
  layout.slot_of_b.assign(parsed.b.gpus.size(), -1);
  Matcher(parsed, layout).Run(depth);
  return layout;
}

void PlaceEmptyGpus(const Parsed& parsed, ClusterLayout& layout) {
  std::vector<char> used(layout.index.size(), 0);
  for (int slot : layout.slot_of_b) {
    if (slot >= 0) used[slot] = 1;
  }
  size_t next = 0;
  for (size_t b = 0; b < parsed.b.gpus.size(); ++b) {
    if (layout.slot_of_b[b] >= 0) continue;
    const GpuModel* model = parsed.b.gpus[b].model;
    while (next < used.size() && (used[next] || layout.model[next] != model)) ++next;
    int slot = -1;
    // Any unused slot of the model (scanning from the start again when the
    // models differ: mixed pools are small).
    if (next < used.size()) {
      slot = static_cast<int>(next);
    } else {
      for (size_t s = 0; s < used.size(); ++s) {
        if (!used[s] && layout.model[s] == model) {
          slot = static_cast<int>(s);
          break;
        }
      }
    }
    if (slot < 0) {
      slot = layout.AddSlot(model);
      used.push_back(0);
    }
    used[slot] = 1;
    layout.slot_of_b[b] = slot;
  }
}

Diff DiffOf(const std::vector<Inst>& now, const std::vector<Inst>& target) {
  Diff diff;
  std::vector<char> matched(target.size(), 0);  // target[j] has an instance in place
  for (size_t i = 0; i < now.size(); ++i) {
    bool placed = false;
    for (size_t j = 0; j < target.size(); ++j) {
      if (!SamePlace(now[i], target[j])) continue;
      placed = true;
      matched[j] = 1;
      if (!SameInstance(now[i], target[j])) {
        diff.reconf.emplace_back(static_cast<int>(i), static_cast<int>(j));
      }
      break;
    }
    if (!placed) diff.destroy.push_back(static_cast<int>(i));
  }
  for (size_t j = 0; j < target.size(); ++j) {
    if (!matched[j]) diff.create.push_back(static_cast<int>(j));
  }
  return diff;
}

}  // namespace tessera::transition_internal
