#include "tessera/gpu_catalog.h"

#include <algorithm>
#include <string>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// Sizes of one 8-memory-slice GPU family member (A100, H100, H200): every one
// shares the placement table of `nvidia-smi mig -lgipp` on the A100.
struct EightSliceSizes {
  std::string one_g, one_g_double, two_g, three_g, four_g, seven_g;  // names
  double gib_1, gib_2, gib_4, gib_8;  // GiB of 1, 2, 4 and 8 memory slices
  int sm_1g, sm_1g_double, sm_2g, sm_3g, sm_4g, sm_7g;
  bool inferred_double_1g = false;  // 1g with 2 memory slices not on a public table
  bool inferred_4g = false;
};

std::vector<MigProfile> EightSliceProfiles(const EightSliceSizes& s) {
  return {
      {s.one_g, 19, 1, 1, s.gib_1, s.sm_1g, 7, {0, 1, 2, 3, 4, 5, 6}, false, false},
      {s.one_g + "+me", 20, 1, 1, s.gib_1, s.sm_1g, 1, {0, 1, 2, 3, 4, 5, 6}, true, false},
      {s.one_g_double,
       15,
       1,
       2,
       s.gib_2,
       s.sm_1g_double,
       4,
       {0, 2, 4, 6},
       false,
       s.inferred_double_1g},
      {s.two_g, 14, 2, 2, s.gib_2, s.sm_2g, 3, {0, 2, 4}, false, false},
      {s.three_g, 9, 3, 4, s.gib_4, s.sm_3g, 2, {0, 4}, false, false},
      {s.four_g, 5, 4, 4, s.gib_4, s.sm_4g, 1, {0}, false, s.inferred_4g},
      {s.seven_g, 0, 7, 8, s.gib_8, s.sm_7g, 1, {0}, false, false},
  };
}

std::vector<GpuModel> BuildCatalog() {
  std::vector<GpuModel> gpus;
  gpus.push_back({"a100-40gb",
                  "NVIDIA A100 40GB (SXM4/PCIe)",
                  7,
                  8,
                  40,
                  108,
                  1555,
                  312,
                  EightSliceProfiles({"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
                                      "7g.40gb", 4.75, 9.62, 19.50, 39.25, 14, 14, 28, 42, 56, 98}),
                  {"p4d.24xlarge / 8", 4.0966}});
  gpus.push_back(
      {"a100-80gb",
       "NVIDIA A100 80GB (SXM4/PCIe)",
       7,
       8,
       80,
       108,
       2039,
       312,
       EightSliceProfiles({"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 9.50,
                           19.50, 39.25, 79.00, 14, 14, 28, 42, 56, 98}),
       {"p4de.24xlarge / 8", 5.1208}});
  gpus.push_back({"a30-24gb",
                  "NVIDIA A30 24GB",
                  4,
                  4,
                  24,
                  56,
                  933,
                  165,
                  {
                      {"1g.6gb", 14, 1, 1, 5.81, 14, 4, {0, 1, 2, 3}, false, false},
                      {"1g.6gb+me", 21, 1, 1, 5.81, 14, 1, {0, 1, 2, 3}, true, false},
                      {"2g.12gb", 5, 2, 2, 11.69, 28, 2, {0, 2}, false, false},
                      {"2g.12gb+me", 6, 2, 2, 11.69, 28, 1, {0, 2}, true, false},
                      {"4g.24gb", 0, 4, 4, 23.44, 56, 1, {0}, false, false},
                  },
                  {}});
  gpus.push_back(
      {"h100-80gb",
       "NVIDIA H100 80GB HBM3 (SXM5)",
       7,
       8,
       80,
       132,
       3350,
       989,
       EightSliceProfiles({"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 9.75,
                           19.62, 39.50, 79.25, 16, 26, 32, 60, 64, 132}),
       {"p5.48xlarge / 8", 12.2900}});
  gpus.push_back(
      {"h100-94gb",
       "NVIDIA H100 NVL 94GB",
       7,
       8,
       94,
       132,
       3900,
       835,
       EightSliceProfiles({"1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb", 10.62,
                           21.50, 46.12, 92.62, 16, 26, 32, 60, 64, 132}),
       {}});
  // H200: the guide gives names and most SM counts; GiB, the 1g.35gb SMs and the
  // 4g.71gb SMs follow the H100's ratios and are marked inferred.
  std::vector<MigProfile> h200 = EightSliceProfiles(
      {"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb", 16.50, 32.50, 69.75,
       139.75, 16, 26, 32, 60, 64, 132, /*inferred_double_1g=*/true, /*inferred_4g=*/true});
  gpus.push_back({"h200-141gb",
                  "NVIDIA H200 141GB (SXM5/NVL)",
                  7,
                  8,
                  141,
                  132,
                  4800,
                  989,
                  std::move(h200),
                  {}});
  // Without MIG: shared whole through MPS (iGniter, gpu-lets, GSLICE).
  gpus.push_back(
      {"v100-16gb", "NVIDIA V100 16GB (SXM2)", 0, 0, 16, 80, 900, 125, {}, {"p3.2xlarge", 3.06}});
  gpus.push_back({"t4-16gb", "NVIDIA T4 16GB", 0, 0, 16, 40, 320, 65, {}, {"g4dn.xlarge", 0.526}});
  gpus.push_back(
      {"a10g-24gb", "NVIDIA A10G 24GB", 0, 0, 24, 80, 600, 70, {}, {"g5.xlarge", 1.006}});
  return gpus;
}

const std::vector<GpuModel>& Catalog() {
  static const std::vector<GpuModel> catalog = BuildCatalog();
  return catalog;
}

}  // namespace

const MigProfile* GpuModel::FindProfile(std::string_view profile_name) const {
  int i = ProfileIndex(profile_name);
  return i < 0 ? nullptr : &profiles[i];
}

int GpuModel::ProfileIndex(std::string_view profile_name) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].name == profile_name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> GpuModel::PrimaryProfiles() const {
  std::vector<int> primary;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const MigProfile& p = profiles[i];
    if (p.media_extensions) continue;
    auto same_size = std::find_if(primary.begin(), primary.end(), [&](int j) {
      return profiles[j].compute_slices == p.compute_slices;
    });
    if (same_size == primary.end()) {
      primary.push_back(static_cast<int>(i));
    } else if (p.memory_slices < profiles[*same_size].memory_slices) {
      *same_size = static_cast<int>(i);
    }
  }
  std::sort(primary.begin(), primary.end(),
            [&](int a, int b) { return profiles[a].compute_slices < profiles[b].compute_slices; });
  return primary;
}

std::vector<int> GpuModel::NonMediaProfiles() const {
  std::vector<int> out;
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (!profiles[i].media_extensions) out.push_back(static_cast<int>(i));
  }
  return out;
}

int GpuModel::PrimaryProfileWithComputeSlices(int g) const {
  for (int i : PrimaryProfiles()) {
    if (profiles[i].compute_slices == g) return i;
  }
  return -1;
}

int GpuModel::MigSms() const {
  int most = 0;
  for (const MigProfile& p : profiles) most = std::max(most, p.sms);
  return HasMig() ? most : sms;
}

std::span<const GpuModel> AllGpus() { return Catalog(); }

std::vector<const GpuModel*> AllMigGpus() {
  std::vector<const GpuModel*> out;
  for (const GpuModel& gpu : Catalog()) {
    if (gpu.HasMig()) out.push_back(&gpu);
  }
  return out;
}

Result<const GpuModel*> FindGpu(std::string_view name) {
  const std::string key = AsciiLower(name);
  for (const GpuModel& gpu : Catalog()) {
    if (gpu.name == key) return &gpu;
  }
  return Status::NotFound("unknown GPU " + QuoteForMessage(name) + " (known: " + GpuNames() + ")");
}

Result<const GpuModel*> FindMigGpu(std::string_view name) {
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, FindGpu(name));
  if (gpu->HasMig()) return gpu;
  return Status::InvalidArgument(gpu->name +
                                 " has no MIG: share it whole through MPS with an MPS planner, "
                                 "e.g. --planner igniter --coeffs FILE (GPUs with MIG: " +
                                 GpuNames(/*mig_only=*/true) + ")");
}

std::string GpuNames(bool mig_only) {
  std::string names;
  for (const GpuModel& gpu : Catalog()) {
    if (mig_only && !gpu.HasMig()) continue;
    if (!names.empty()) names += ", ";
    names += gpu.name;
  }
  return names;
}

}  // namespace tessera
