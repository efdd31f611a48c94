// The GPU catalog: the one table of every GPU model Tessera plans for. MIG
// GPUs (A100, A30, H100, H200) list every MIG profile (name, nvidia-smi ID,
// compute and memory slices, GiB, SMs, the most instances one GPU holds,
// allowed start memory slices); GPUs without MIG (V100, T4, A10G) list none
// and are shared whole through MPS. Every GPU has its SM count, the cloud
// instance that rents one and its price, and its MPS client limit.
//
// Sources:
//  * MIG profiles: NVIDIA's MIG user guide and `nvidia-smi mig -lgip/-lgipp`
//    outputs, as collected in shared/reference/mig-mps-ecosystem.md (section
//    1.3). Where a figure was not published it is inferred from the sibling
//    GPU and the profile is marked `inferred`.
//  * SMs of the whole board (MIG off): NVIDIA's architecture whitepapers (A100:
//    108 SMs, of which the 7g profile exposes 98; H100 SXM5: 132; A30: 56;
//    V100: 80; T4: 40; A10G: 80).
//  * MPS: Volta and newer MPS servers accept 48 client CUDA contexts per
//    device (NVIDIA MPS documentation; shared/reference section 5.4).
//  * Prices: on-demand, USD per hour, AWS us-east-1, of the instance renting
//    one GPU (an eighth of an 8-GPU instance). p3.2xlarge and g4dn.xlarge are
//    the prices of the iGniter paper (section 5.3: $18.36/h for 6 p3.2xlarge,
//    $7.89/h for 15 g4dn.xlarge).
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

// Renting one GPU in the cloud.
struct CloudOffer {
  std::string instance;       // e.g. "p3.2xlarge", "p4de.24xlarge / 8"
  double price_per_hour = 0;  // USD, on demand
};

// A GPU model.
struct GpuModel {
  std::string name;                  // catalog key, lower case: "a100-80gb"
  std::string display_name;          // "NVIDIA A100 80GB (SXM4/PCIe)"
  int compute_slices = 0;            // C: 7 on A100/H100/H200, 4 on A30; 0 without MIG
  int memory_slices = 0;             // M: 8 on A100/H100/H200, 4 on A30; 0 without MIG
  double memory_gib = 0;             // total memory of the board
  int sms = 0;                       // SMs of the whole board, MIG off (what MPS shares)
  double memory_bandwidth_gbs = 0;   // memory bandwidth of the full GPU, GB/s
  double fp16_tensor_tflops = 0;     // dense FP16 tensor-core peak of the full GPU
  std::vector<MigProfile> profiles;  // empty: no MIG
  CloudOffer cloud;
  int mps_max_clients = 48;  // MPS client contexts per device

  // True iff the GPU can be cut into MIG instances.
  bool HasMig() const { return !profiles.empty(); }
  // SMs of the largest MIG profile (the whole GPU under MIG: 98 on an
  // A100); `sms` for a GPU without MIG.
  int MigSms() const;

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

// Every GPU with MIG, in catalog order.
std::vector<const GpuModel*> AllMigGpus();

// Looks a GPU up by catalog name, case-insensitively ("A100-80GB" works).
// Returns NotFound listing the known names otherwise.
Result<const GpuModel*> FindGpu(std::string_view name);

// FindGpu, for what needs MIG: InvalidArgument "<name> has no MIG: ..." for
// a GPU without it, saying to share it whole with an MPS planner.
Result<const GpuModel*> FindMigGpu(std::string_view name);

// Comma-separated catalog names, for help texts and error messages; of the
// GPUs with MIG only when `mig_only`.
std::string GpuNames(bool mig_only = false);

}  // namespace tessera

#endif  // TESSERA_GPU_CATALOG_H_
