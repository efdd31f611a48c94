// MIG configuration capability: how many more instances of each profile a
// GPU's free memory slices can still take, and the start the NVIDIA driver
// picks for a new instance (GRMU paper, section 5, Eq. 1-2 and Algorithm 1).
//
// CC(G) = sum over profiles p of |S(G, p)|, where S(G, p) are the allowed
// starts of p whose memory slices are all free in G. The driver places a new
// instance at the allowed start that leaves the highest CC; among equal CCs,
// the first start in the profile's start list wins (observed with driver
// 530.30.02). The profile set is the GPU model's profiles without media
// extensions (on A100-40GB exactly GRMU's six: 1g.5gb ... 7g.40gb).
//
// Everything is tabulated once per GPU model over all 2^M occupancy masks
// (M <= 8 memory slices), so every query is a table lookup.
//
// Thread-safety: an immutable value after construction.
#ifndef TESSERA_MIG_CAPABILITY_H_
#define TESSERA_MIG_CAPABILITY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"

namespace tessera {

class CapabilityTable {
 public:
  // REQUIRES: gpu.memory_slices <= 8.
  explicit CapabilityTable(const GpuModel& gpu);

  const GpuModel& gpu() const { return *gpu_; }
  // The profile set (indices into gpu().profiles), in catalog order.
  const std::vector<int>& profiles() const { return profiles_; }
  // Position of catalog profile `profile` in profiles(), or -1.
  int Slot(int profile) const;

  // |S(G, profile)|: starts of `profile` whose slices are free under `used`.
  int ProfileCapacity(SliceMask used, int profile) const;
  // CC of the free slices under `used` (Eq. 1).
  int Capability(SliceMask used) const { return capability_[used]; }
  // Probability-weighted CC: sum over profiles of weight[slot] x |S(G, p)|,
  // `weights` indexed like profiles() (GRMU Algorithm 7, read as a sum).
  double ExpectedCapability(SliceMask used, std::span<const double> weights) const;
  // The start the driver gives a new `profile` instance (Algorithm 1), or -1
  // when no allowed start is free.
  int AssignStart(SliceMask used, int profile) const;
  // Fragmentation score of GRMU Algorithm 4: for every profile no larger than
  // the free slices, pack as many instances as fit (starts in order) into a
  // copy of the free slices and add (slices left) / (profile size). 0 for a
  // full GPU; higher = more free space no profile can use.
  double Fragmentation(SliceMask used) const { return fragmentation_[used]; }
  // Memory slices free under `used`.
  int FreeSlices(SliceMask used) const;
  // The longest run of consecutive free memory slices under `used` (HAMi's
  // reservation-first MIG scheduler keeps it as long as it can).
  int LargestFreeRun(SliceMask used) const { return largest_free_run_[used]; }
  // Fragmentation of one GPU as the frag policy measures it
  // (docs/online-placement.md): the sum over profiles of the free memory
  // slices under `used` that no free allowed start of the profile covers,
  // i.e. the free memory each profile can no longer use. 0 on a full GPU;
  // not on an empty one, where the geometry alone strands some slices
  // (slice 7 of an A100 for 1g.5gb).
  int StrandedSlices(SliceMask used) const { return stranded_[used]; }

 private:
  const GpuModel* gpu_;
  std::vector<int> profiles_;
  std::vector<int> slot_of_profile_;            // catalog index -> slot or -1
  std::vector<std::uint8_t> capacity_;          // [mask * P + slot]
  std::vector<int> capability_;                 // [mask]
  std::vector<std::int8_t> assign_start_;       // [mask * P + slot]
  std::vector<double> fragmentation_;           // [mask]
  std::vector<std::uint8_t> largest_free_run_;  // [mask]
  std::vector<int> stranded_;                   // [mask]
};

}  // namespace tessera

#endif  // TESSERA_MIG_CAPABILITY_H_
