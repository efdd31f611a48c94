#include "tessera/online/mig_capability.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace tessera {
namespace {

// The slices a profile occupies from `start`.
SliceMask SpanMask(const MigProfile& profile, int start) {
  return ((SliceMask{1} << profile.memory_slices) - 1) << start;
}

bool Fits(const MigProfile& profile, int start, SliceMask used, int memory_slices) {
  return start + profile.memory_slices <= memory_slices && (SpanMask(profile, start) & used) == 0;
}

}  // namespace

CapabilityTable::CapabilityTable(const GpuModel& gpu)
    : gpu_(&gpu), profiles_(gpu.NonMediaProfiles()), slot_of_profile_(gpu.profiles.size(), -1) {
  assert(gpu.memory_slices <= 8);
  for (size_t s = 0; s < profiles_.size(); ++s)
    slot_of_profile_[profiles_[s]] = static_cast<int>(s);
  const SliceMask masks = SliceMask{1} << gpu.memory_slices;
  const size_t p = profiles_.size();
  capacity_.assign(masks * p, 0);
  capability_.assign(masks, 0);
  assign_start_.assign(masks * p, -1);
  fragmentation_.assign(masks, 0);
  largest_free_run_.assign(masks, 0);
  stranded_.assign(masks, 0);
  // Capacities first: AssignStart needs the CC of every mask.
  for (SliceMask used = 0; used < masks; ++used) {
    for (size_t s = 0; s < p; ++s) {
      const MigProfile& profile = gpu.profiles[profiles_[s]];
      int count = 0;
      for (int start : profile.starts) count += Fits(profile, start, used, gpu.memory_slices);
      capacity_[used * p + s] = static_cast<std::uint8_t>(count);
      capability_[used] += count;
    }
  }
  for (SliceMask used = 0; used < masks; ++used) {
    double fragmentation = 0;
    const int free_slices = FreeSlices(used);
    int run = 0, longest = 0;
    for (int slice = 0; slice < gpu.memory_slices; ++slice) {
      run = (used >> slice) & 1 ? 0 : run + 1;
      longest = std::max(longest, run);
    }
    largest_free_run_[used] = static_cast<std::uint8_t>(longest);
    for (size_t s = 0; s < p; ++s) {
      const MigProfile& profile = gpu.profiles[profiles_[s]];
      int best_cc = -1;
      SliceMask usable = 0;
      for (int start : profile.starts) {
        if (!Fits(profile, start, used, gpu.memory_slices)) continue;
        usable |= SpanMask(profile, start);
        const int cc = capability_[used | SpanMask(profile, start)];
        if (cc > best_cc) {  // strict: the first of equal starts wins, as the driver does
          best_cc = cc;
          assign_start_[used * p + s] = static_cast<std::int8_t>(start);
        }
      }
      stranded_[used] += free_slices - std::popcount(usable);
      if (profile.memory_slices > free_slices) continue;
      SliceMask packed = used;
      for (int start : profile.starts) {
        if (Fits(profile, start, packed, gpu.memory_slices)) packed |= SpanMask(profile, start);
      }
      fragmentation += static_cast<double>(FreeSlices(packed)) / profile.memory_slices;
    }
    fragmentation_[used] = fragmentation;
  }
}

int CapabilityTable::Slot(int profile) const {
  if (profile < 0 || profile >= static_cast<int>(slot_of_profile_.size())) return -1;
  return slot_of_profile_[profile];
}

int CapabilityTable::ProfileCapacity(SliceMask used, int profile) const {
  const int slot = Slot(profile);
  return slot < 0 ? 0 : capacity_[used * profiles_.size() + slot];
}

double CapabilityTable::ExpectedCapability(SliceMask used, std::span<const double> weights) const {
  const size_t p = profiles_.size();
  double ecc = 0;
  for (size_t s = 0; s < p && s < weights.size(); ++s) ecc += weights[s] * capacity_[used * p + s];
  return ecc;
}

int CapabilityTable::AssignStart(SliceMask used, int profile) const {
  const int slot = Slot(profile);
  return slot < 0 ? -1 : assign_start_[used * profiles_.size() + slot];
}

int CapabilityTable::FreeSlices(SliceMask used) const {
  return gpu_->memory_slices - std::popcount(used);
}

}  // namespace tessera
