// MIG geometry: placements as memory-slice masks, legality of a GPU's layout,
// enumeration of maximal layouts, and packing a multiset of profiles.
//
// A placement is (profile, start memory slice). A set of placements on one GPU
// is legal iff every start is one the profile allows, no two memory ranges
// [start, start + memory_slices) overlap, and no profile exceeds its
// max_instances (which only binds for "+me" profiles). See DESIGN.md, MIG
// geometry, and shared/reference/mig-mps-ecosystem.md section 1.
//
// Thread-safety: free functions on immutable inputs; MigSlots is a value.
#ifndef TESSERA_MIG_LAYOUT_H_
#define TESSERA_MIG_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/status.h"

namespace tessera {

using SliceMask = std::uint32_t;  // bit i set = memory slice i occupied

struct Placement {
  int profile = 0;  // index into GpuModel::profiles
  int start = 0;    // first memory slice
  friend bool operator==(const Placement&, const Placement&) = default;
};

// The memory slices `placement` occupies. REQUIRES: a valid profile index.
SliceMask MaskOf(const GpuModel& gpu, const Placement& placement);

// OK, or InvalidArgument naming the first rule the layout breaks.
Status CheckLayout(const GpuModel& gpu, std::span<const Placement> placements);

// The occupancy of one GPU while a planner fills it. Cheap to copy.
class MigSlots {
 public:
  explicit MigSlots(const GpuModel& gpu) : gpu_(&gpu) {}

  // True iff `profile` may start at `start` given what is already placed.
  bool CanPlace(int profile, int start) const;
  // REQUIRES: CanPlace(profile, start).
  void Place(int profile, int start);
  // REQUIRES: the placement is present.
  void Remove(int profile, int start);

  SliceMask used_mask() const { return used_; }
  int used_compute_slices() const { return used_compute_; }
  int free_compute_slices() const { return gpu_->compute_slices - used_compute_; }
  bool empty() const { return placements_.empty(); }
  const std::vector<Placement>& placements() const { return placements_; }

 private:
  const GpuModel* gpu_;
  SliceMask used_ = 0;
  int used_compute_ = 0;
  std::vector<Placement> placements_;
};

// A legal layout, placements sorted by start.
using Layout = std::vector<Placement>;

// Every maximal legal layout using only `profiles` (indices into
// gpu.profiles): no further placement of any of them fits. Deterministic order.
std::vector<Layout> EnumerateMaximalLayouts(const GpuModel& gpu, std::span<const int> profiles);

// Count of each profile in a layout, indexed like gpu.profiles.
std::vector<int> ProfileMix(const GpuModel& gpu, const Layout& layout);

// The distinct profile mixes of `layouts`, in first-seen order.
std::vector<std::vector<int>> DistinctMixes(const GpuModel& gpu, std::span<const Layout> layouts);

// Human-readable layout, e.g. "4g.40gb@0 | 2g.20gb@4 | 1g.10gb@6".
std::string FormatLayout(const GpuModel& gpu, const Layout& layout);

// Finds legal starts for the multiset `profiles` on an empty GPU, trying
// larger profiles first and, for each, the starts of `start_order(profile)`
// in order (the profile's allowed starts when empty). Deterministic. nullopt
// iff no legal layout holds the multiset. The result is in input order.
std::optional<std::vector<Placement>> PackProfiles(
    const GpuModel& gpu, std::span<const int> profiles,
    const std::vector<std::vector<int>>& start_order = {});

}  // namespace tessera

#endif  // TESSERA_MIG_LAYOUT_H_
