#include "online/rearrange.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "tessera/gpu/mig_layout.h"

namespace tessera {
namespace {

// Starts for the VMs of `gpu` (VmsOn order) followed by one for a new
// instance of `profile`, all legal together; nullopt when no layout holds
// them. The instances of one profile are interchangeable, so the packed
// starts of a profile go first to the VMs already there, and the new
// instance takes one that none of them holds.
std::optional<std::vector<int>> StartsWith(const OnlineCluster& cluster, int gpu, int profile) {
  const GpuModel& model = cluster.gpu_model();
  std::vector<int> profiles, current;
  std::vector<std::vector<int>> start_order(model.profiles.size());
  for (int vm : cluster.VmsOn(gpu)) {
    profiles.push_back(cluster.vm(vm).profile);
    current.push_back(cluster.LocationOf(vm).start);
    start_order[profiles.back()].push_back(current.back());
  }
  profiles.push_back(profile);
  current.push_back(-1);
  for (size_t p = 0; p < start_order.size(); ++p) {
    std::vector<int>& order = start_order[p];  // current starts first, then the others
    if (order.empty()) continue;
    for (int start : model.profiles[p].starts) {
      if (std::find(order.begin(), order.end(), start) == order.end()) order.push_back(start);
    }
  }
  const std::optional<std::vector<Placement>> packed = PackProfiles(model, profiles, start_order);
  if (!packed) return std::nullopt;
  std::vector<int> starts(profiles.size(), -1);
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    std::vector<int> free;  // the packed starts of profile p
    for (const Placement& placed : *packed) {
      if (placed.profile == static_cast<int>(p)) free.push_back(placed.start);
    }
    for (size_t i = 0; i < profiles.size(); ++i) {  // those that stay
      const auto kept = std::find(free.begin(), free.end(), current[i]);
      if (profiles[i] != static_cast<int>(p) || kept == free.end()) continue;
      starts[i] = current[i];
      free.erase(kept);
    }
    for (size_t i = 0; i < profiles.size(); ++i) {  // those that move, or arrive
      if (profiles[i] != static_cast<int>(p) || starts[i] >= 0) continue;
      starts[i] = free.front();
      free.erase(free.begin());
    }
  }
  return starts;
}

}  // namespace

bool PlaceByRearranging(const VmRequest& vm, OnlineCluster& cluster) {
  const CapabilityTable& table = cluster.capability();
  const int size = cluster.gpu_model().profiles[vm.profile].memory_slices;
  int best_gpu = -1, best_moves = 0;
  std::vector<int> best_starts;
  const SliceMask masks = SliceMask{1} << cluster.gpu_model().memory_slices;
  for (SliceMask used = 1; used < masks; ++used) {
    if (table.FreeSlices(used) < size) continue;
    for (int gpu : cluster.GpusWithMask(used)) {
      if (!cluster.HostFits(cluster.HostOf(gpu), vm)) continue;
      std::optional<std::vector<int>> starts = StartsWith(cluster, gpu, vm.profile);
      if (!starts) continue;
      const std::vector<int>& vms = cluster.VmsOn(gpu);
      int moves = 0;
      for (size_t i = 0; i < vms.size(); ++i)
        moves += (*starts)[i] != cluster.LocationOf(vms[i]).start;
      if (best_gpu < 0 || moves < best_moves || (moves == best_moves && gpu < best_gpu)) {
        best_gpu = gpu, best_moves = moves, best_starts = std::move(*starts);
      }
    }
  }
  if (best_gpu < 0) return false;
  const int start = best_starts.back();
  best_starts.pop_back();
  return cluster.Rearrange(best_gpu, best_starts, vm.arrival_s).ok() &&
         cluster.Place(vm.id, best_gpu, start).ok();
}

}  // namespace tessera
