// Nvml: the few NVML calls the node agent and `tessera agent inventory` make,
// on a library loaded at run time with dlopen (libnvidia-ml.so.1 by default,
// or the project's fake, libtessera-fake-nvml.so). No CUDA header or library
// is needed to build: src/nvml/nvml_api.h declares the types and functions
// used, from NVML's documented API (docs.nvidia.com/deploy/nvml-api,
// "Multi Instance GPU Management").
//
// MIG vocabulary as NVML has it: a GPU instance (GI) holds memory slices
// [start, start + size) and compute slices; a compute instance (CI) runs on a
// GI; the CUDA device a process sees is a (GI, CI) pair, named by its MIG UUID
// ("MIG-..."). Profiles are named here by their ID, the number
// `nvidia-smi mig -cgi` takes and the catalog's MigProfile::id (not the NVML
// enum index).
//
// Contract: nothing throws. Every failure is a Status whose message names the
// NVML function, the GPU index and, where there is one, the profile ID,
// start or instance ID, then NVML's own error string and code name, e.g.
// "nvmlDeviceCreateGpuInstanceWithPlacement (GPU 0, profile 9, start 4):
// Insufficient Resources (NVML_ERROR_INSUFFICIENT_RESOURCES)". The code name
// is also kept (NvmlError) so callers can tell "in use" from "lost".
// Read-only calls (DeviceCount, ReadGpu) never change the machine; only the
// Create*/Destroy* calls do. The MIG mode is never changed by this class.
//
// Thread-safety: one Nvml per thread (NVML itself is thread-safe, but this
// class keeps no locks around its handle cache).
#ifndef TESSERA_NVML_H_
#define TESSERA_NVML_H_

#include <memory>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// The library `tessera agent` loads when --nvml is not given.
inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

// What a failed NVML call returned: its nvmlReturn_t and code name.
struct NvmlError {
  int code = 0;      // nvmlReturn_t, e.g. 23
  std::string name;  // "NVML_ERROR_INSUFFICIENT_RESOURCES"
};

// A GPU instance profile as the GPU reports it.
struct NvmlProfile {
  int nvml_profile = 0;   // NVML enum index (NVML_GPU_INSTANCE_PROFILE_*)
  int id = 0;             // the nvidia-smi profile ID (catalog MigProfile::id)
  std::string name;       // e.g. "3g.40gb" (NVML's v2 name without "MIG "), or
                          // "<slices>g.<GiB>gb" where the library has no v2 call
  int slice_count = 0;    // compute slices
  int memory_slices = 0;  // placement size
  int instance_count = 0;
  int multiprocessor_count = 0;
  long long memory_mib = 0;
  std::vector<int> starts;  // legal placements' start memory slices
};

struct NvmlComputeInstance {
  int id = 0;
  int profile_id = 0;   // the CI profile's ID
  int slice_count = 0;  // compute slices of the CI
  std::string uuid;     // the MIG device's UUID ("MIG-..."), "" if NVML gives none
};

struct NvmlGpuInstance {
  int id = 0;
  int profile_id = 0;  // nvidia-smi profile ID
  int start = 0;       // first memory slice
  int size = 0;        // memory slices
  std::vector<NvmlComputeInstance> compute_instances;
};

struct NvmlGpu {
  int index = 0;
  std::string name;                        // "NVIDIA A100-SXM4-80GB"
  std::string uuid;                        // "GPU-..."
  bool mig_enabled = false;                // current MIG mode
  bool mig_pending_enabled = false;        // pending MIG mode (after a reset)
  bool mig_supported = false;              // false: the GPU has no MIG at all
  std::vector<NvmlProfile> profiles;       // empty when MIG is off
  std::vector<NvmlGpuInstance> instances;  // sorted by start
};

class Nvml {
 public:
  // dlopen(`library`) with RTLD_NOW | RTLD_LOCAL, dlsym of every function
  // used, then nvmlInit_v2. NotFound naming the library and dlerror() when it
  // cannot be loaded (saying to install the NVIDIA driver or pass --nvml);
  // InvalidArgument naming a missing symbol; an nvmlInit_v2 failure as above.
  static Result<std::unique_ptr<Nvml>> Open(const std::string& library);
  // nvmlShutdown. The library stays loaded until the process ends (an
  // initialised NVML is not unloaded).
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  Result<int> DeviceCount();
  // Everything about one GPU: name, UUID, MIG mode, and, when MIG is on, its
  // profiles with their placements and its GPU instances with their compute
  // instances and MIG UUIDs. Read-only.
  Result<NvmlGpu> ReadGpu(int index);

  // nvmlDeviceCreateGpuInstanceWithPlacement: a GI of `profile_id` at
  // memory slice `start` (size from the profile). Returns it (no CI yet).
  Result<NvmlGpuInstance> CreateGpuInstance(int gpu, int profile_id, int start);
  // The full-size compute instance of GI `gi_id` (the CI profile whose slice
  // count equals the GI's, shared engines), as `nvidia-smi mig -cgi .. -C`
  // makes; returns it with its MIG UUID.
  Result<NvmlComputeInstance> CreateComputeInstance(int gpu, int gi_id);
  Status DestroyComputeInstance(int gpu, int gi_id, int ci_id);
  // NVML_ERROR_IN_USE while the GI still has compute instances.
  Status DestroyGpuInstance(int gpu, int gi_id);

  // The NVML error of the last failed call (code 0 after a success).
  const NvmlError& last_error() const { return last_error_; }

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  NvmlError last_error_;
};

// Every GPU of the machine, read with ReadGpu: what `tessera agent
// inventory` prints. Read-only.
Result<std::vector<NvmlGpu>> ReadInventory(Nvml& nvml);

// The GPU instance of `profile_id` at memory slice `start` of `gpu` with one
// compute instance of its full size (what `tessera agent mig create` and the
// DRA node plugin make for a claim): found when it is there already, made
// (GI, then CI) when not, completed when a GI without its CI is left from an
// interrupted call. Returned with that one compute instance. InvalidArgument
// when another profile's GPU instance starts there.
Result<NvmlGpuInstance> EnsureMigInstance(Nvml& nvml, int gpu, int profile_id, int start);
// Destroys the GPU instance at `start` of `gpu`, its compute instances
// first; OK when none starts there (already destroyed).
Status RemoveMigInstance(Nvml& nvml, int gpu, int start);

}  // namespace tessera

#endif  // TESSERA_NVML_H_
