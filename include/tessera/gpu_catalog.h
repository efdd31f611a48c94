// The GPU catalog: every MIG-capable GPU model Tessera knows, with every MIG
// profile (name, nvidia-smi ID, compute and memory slices, GiB, SMs, the most
// instances one GPU holds, allowed start memory slices).
//
// Facts come from NVIDIA's MIG user guide and `nvidia-smi mig -lgip/-lgipp`
// outputs, as collected in shared/reference/mig-mps-ecosystem.md (section 1.3).
// Where a figure was not published it is inferred from the sibling GPU and the
// profile is marked `inferred`.
//
// Thread-safety: the catalog is immutable static data; safe from any thread.
#ifndef TESSERA_GPU_CATALOG_H_
#define TESSERA_GPU_CATALOG_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// One GPU instance profile, e.g. 3g.40gb on an A100-80GB.
struct MigProfile {
  std::string name;               // as nvidia-smi prints it, e.g. "3g.40gb" or "1g.10gb+me"
  int id = 0;                     // the ID `nvidia-smi mig -cgi` takes (not the NVML enum)
  int compute_slices = 0;         // g: GPCs / compute slices
  int memory_slices = 0;          // placement size in memory slices
  double memory_gib = 0;          // usable memory, as `-lgip` reports it
  int sms = 0;                    // streaming multiprocessors
  int max_instances = 0;          // how many fit on one GPU (1 for +me profiles)
  std::vector<int> starts;        // allowed first memory slices (`-lgipp`)
  bool media_extensions = false;  // "+me": at most one per GPU
  bool inferred = false;          // some figure inferred, not read off a published table
};

// A GPU model with MIG.
struct GpuModel {
  std::string name;                 // catalog key, lower case: "a100-80gb"
  std::string display_name;         // "NVIDIA A100 80GB (SXM4/PCIe)"
  int compute_slices = 0;           // C: 7 on A100/H100/H200, 4 on A30
  int memory_slices = 0;            // M: 8 on A100/H100/H200, 4 on A30
  double memory_gib = 0;            // total memory of the board
  int sms = 0;                      // SMs usable by the full-GPU profile
  double memory_bandwidth_gbs = 0;  // HBM bandwidth of the full GPU, GB/s
  double fp16_tensor_tflops = 0;    // dense FP16 tensor-core peak of the full GPU
  std::vector<MigProfile> profiles;

  // The profile called `name` ("3g.40gb"), or nullptr.
  const MigProfile* FindProfile(std::string_view name) const;
  // Index into `profiles`, or -1.
  int ProfileIndex(std::string_view name) const;
  // Indices of the primary profiles: for each compute size, the profile with
  // the fewest memory slices and no media extensions (on A100-80GB: 1g.10gb,
  // 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb). Sorted by compute size.
  std::vector<int> PrimaryProfiles() const;
  // Indices of every profile without media extensions, in catalog order.
  std::vector<int> NonMediaProfiles() const;
  // The primary profile with `compute_slices`, or -1.
  int PrimaryProfileWithComputeSlices(int compute_slices) const;
};

// Every GPU in the catalog, in a fixed order.
std::span<const GpuModel> AllGpus();

// Looks a GPU up by catalog name, case-insensitively ("A100-80GB" works).
// Returns NotFound listing the known names otherwise.
Result<const GpuModel*> FindGpu(std::string_view name);

// Comma-separated catalog names, for help texts and error messages.
std::string GpuNames();

}  // namespace tessera

#endif  // TESSERA_GPU_CATALOG_H_
