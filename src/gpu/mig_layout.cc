#include "tessera/gpu/mig_layout.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

bool StartAllowed(const MigProfile& profile, int start) {
  return std::find(profile.starts.begin(), profile.starts.end(), start) != profile.starts.end();
}

int CountOf(std::span<const Placement> placements, int profile) {
  return static_cast<int>(std::count_if(placements.begin(), placements.end(),
                                        [&](const Placement& p) { return p.profile == profile; }));
}

bool ValidProfileIndex(const GpuModel& gpu, int profile) {
  return profile >= 0 && profile < static_cast<int>(gpu.profiles.size());
}

// Depth-first over memory slices: at `slice`, either leave it empty or start
// one of `profiles` there. Each layout is reached exactly once.
void EnumerateFrom(const GpuModel& gpu, std::span<const int> profiles, int slice, MigSlots& slots,
                   std::vector<Layout>& out) {
  if (slice >= gpu.memory_slices) {
    for (int p : profiles) {
      for (int s : gpu.profiles[p].starts) {
        if (slots.CanPlace(p, s)) return;  // not maximal
      }
    }
    Layout layout = slots.placements();
    std::sort(layout.begin(), layout.end(),
              [](const Placement& a, const Placement& b) { return a.start < b.start; });
    out.push_back(std::move(layout));
    return;
  }
  for (int p : profiles) {
    if (!slots.CanPlace(p, slice)) continue;
    slots.Place(p, slice);
    EnumerateFrom(gpu, profiles, slice + gpu.profiles[p].memory_slices, slots, out);
    slots.Remove(p, slice);
  }
  EnumerateFrom(gpu, profiles, slice + 1, slots, out);
}

bool PackFrom(const GpuModel& gpu, const std::vector<int>& order, size_t next,
              const std::vector<std::vector<int>>& start_order, MigSlots& slots,
              std::vector<int>& starts) {
  if (next == order.size()) return true;
  const int profile = order[next];
  const std::vector<int>& candidates =
      profile < static_cast<int>(start_order.size()) && !start_order[profile].empty()
          ? start_order[profile]
          : gpu.profiles[profile].starts;
  for (int s : candidates) {
    if (!slots.CanPlace(profile, s)) continue;
    slots.Place(profile, s);
    starts[next] = s;
    if (PackFrom(gpu, order, next + 1, start_order, slots, starts)) return true;
    slots.Remove(profile, s);
  }
  return false;
}

}  // namespace

SliceMask MaskOf(const GpuModel& gpu, const Placement& placement) {
  const int size = gpu.profiles[placement.profile].memory_slices;
  return ((SliceMask{1} << size) - 1) << placement.start;
}

Status CheckLayout(const GpuModel& gpu, std::span<const Placement> placements) {
  SliceMask used = 0;
  for (const Placement& pl : placements) {
    if (!ValidProfileIndex(gpu, pl.profile)) {
      return Status::InvalidArgument("profile index " + std::to_string(pl.profile) +
                                     " is not a profile of " + gpu.name);
    }
    const MigProfile& profile = gpu.profiles[pl.profile];
    if (!StartAllowed(profile, pl.start)) {
      return Status::InvalidArgument(profile.name + " cannot start at memory slice " +
                                     std::to_string(pl.start));
    }
    const SliceMask mask = MaskOf(gpu, pl);
    if (used & mask) {
      return Status::InvalidArgument(profile.name + "@" + std::to_string(pl.start) +
                                     " overlaps another instance's memory slices");
    }
    used |= mask;
    if (CountOf(placements, pl.profile) > profile.max_instances) {
      return Status::InvalidArgument("more than " + std::to_string(profile.max_instances) +
                                     " instance(s) of " + profile.name);
    }
  }
  return Status::Ok();
}

bool MigSlots::CanPlace(int profile, int start) const {
  if (!ValidProfileIndex(*gpu_, profile)) return false;
  const MigProfile& p = gpu_->profiles[profile];
  if (!StartAllowed(p, start)) return false;
  if (used_ & MaskOf(*gpu_, {profile, start})) return false;
  return CountOf(placements_, profile) < p.max_instances;
}

void MigSlots::Place(int profile, int start) {
  used_ |= MaskOf(*gpu_, {profile, start});
  used_compute_ += gpu_->profiles[profile].compute_slices;
  placements_.push_back({profile, start});
}

void MigSlots::Remove(int profile, int start) {
  auto it = std::find(placements_.begin(), placements_.end(), Placement{profile, start});
  if (it == placements_.end()) return;
  placements_.erase(it);
  used_ &= ~MaskOf(*gpu_, {profile, start});
  used_compute_ -= gpu_->profiles[profile].compute_slices;
}

std::vector<Layout> EnumerateMaximalLayouts(const GpuModel& gpu, std::span<const int> profiles) {
  std::vector<Layout> layouts;
  MigSlots slots(gpu);
  EnumerateFrom(gpu, profiles, 0, slots, layouts);
  return layouts;
}

std::vector<int> ProfileMix(const GpuModel& gpu, const Layout& layout) {
  std::vector<int> mix(gpu.profiles.size(), 0);
  for (const Placement& p : layout) ++mix[p.profile];
  return mix;
}

std::vector<std::vector<int>> DistinctMixes(const GpuModel& gpu, std::span<const Layout> layouts) {
  std::vector<std::vector<int>> mixes;
  for (const Layout& layout : layouts) {
    std::vector<int> mix = ProfileMix(gpu, layout);
    if (std::find(mixes.begin(), mixes.end(), mix) == mixes.end()) mixes.push_back(mix);
  }
  return mixes;
}

std::string FormatLayout(const GpuModel& gpu, const Layout& layout) {
  std::string out;
  for (const Placement& p : layout) {
    if (!out.empty()) out += " | ";
    out += gpu.profiles[p.profile].name + "@" + std::to_string(p.start);
  }
  return out;
}

std::optional<std::vector<Placement>> PackProfiles(
    const GpuModel& gpu, std::span<const int> profiles,
    const std::vector<std::vector<int>>& start_order) {
  for (int p : profiles) {
    if (!ValidProfileIndex(gpu, p)) return std::nullopt;
  }
  // Largest memory footprint first: it has the fewest starts, so the search
  // fails fast and the result is canonical.
  std::vector<size_t> order_idx(profiles.size());
  std::iota(order_idx.begin(), order_idx.end(), 0);
  std::stable_sort(order_idx.begin(), order_idx.end(), [&](size_t a, size_t b) {
    const MigProfile& pa = gpu.profiles[profiles[a]];
    const MigProfile& pb = gpu.profiles[profiles[b]];
    if (pa.memory_slices != pb.memory_slices) return pa.memory_slices > pb.memory_slices;
    return pa.compute_slices > pb.compute_slices;
  });
  std::vector<int> order;
  for (size_t i : order_idx) order.push_back(profiles[i]);
  std::vector<int> starts(order.size(), -1);
  MigSlots slots(gpu);
  if (!PackFrom(gpu, order, 0, start_order, slots, starts)) return std::nullopt;
  std::vector<Placement> result(profiles.size());
  for (size_t k = 0; k < order_idx.size(); ++k) result[order_idx[k]] = {order[k], starts[k]};
  return result;
}

}  // namespace tessera
