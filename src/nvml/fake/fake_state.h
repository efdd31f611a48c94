// The machine libtessera-fake-nvml.so pretends to drive: its GPUs, their MIG
// mode and their GPU and compute instances, kept in a JSON state file that
// every process using the fake shares (docs/nvml.md, "The fake NVML"), and
// the MIG rules of the real driver, taken from the GPU catalog.
//
// State file (TESSERA_FAKE_NVML_STATE):
//   {"gpus": [{"model": "a100-80gb", "uuid": "GPU-...", "mig_mode": 1,
//              "pending_mig_mode": 1,
//              "gpu_instances": [{"id": 1, "profile_id": 9, "start": 4, "size": 4,
//                                 "compute_instances": [{"id": 0, "profile_id": 2,
//                                                        "uuid": "MIG-..."}]}]}]}
// "model" is a catalog GPU with MIG; "profile_id" of a GPU instance is the
// catalog MigProfile::id (the nvidia-smi ID), of a compute instance the NVML
// compute-instance profile enum. Anything else (a missing field, an unknown
// model or profile, a wrong type) makes the file malformed.
//
// Rules (CreateGpuInstance, CreateComputeInstance): see the functions.
//
// Thread-safety: values and free functions; the caller serializes access to
// the file (fake_nvml.cc holds a process mutex and an flock).
#ifndef TESSERA_NVML_FAKE_FAKE_STATE_H_
#define TESSERA_NVML_FAKE_FAKE_STATE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/nvml_api.h"
#include "tessera/gpu_catalog.h"
#include "tessera/status.h"

namespace tessera::fake_nvml {

struct FakeComputeInstance {
  int id = 0;
  int profile_id = 0;  // NVML compute-instance profile enum (= its ID here)
  std::string uuid;    // "MIG-..."
};

struct FakeGpuInstance {
  int id = 0;
  int profile_id = 0;  // catalog MigProfile::id
  int start = 0;
  int size = 0;
  std::vector<FakeComputeInstance> compute_instances;
};

struct FakeGpu {
  const GpuModel* model = nullptr;  // a catalog GPU with MIG
  std::string uuid;
  int mig_mode = NVML_DEVICE_MIG_ENABLE;
  int pending_mig_mode = NVML_DEVICE_MIG_ENABLE;
  std::vector<FakeGpuInstance> gpu_instances;

  FakeGpuInstance* FindGpuInstance(int id);
};

struct FakeMachine {
  std::vector<FakeGpu> gpus;
};

// The machine of a state file's text; nullopt when it is malformed.
std::optional<FakeMachine> ParseMachine(std::string_view text);
std::string SerializeMachine(const FakeMachine& machine);

// The machine TESSERA_FAKE_NVML_DEVICES describes: comma-separated catalog
// names, each optionally "*<count>" (1-64) and/or ":mig-off", e.g.
// "a100-80gb,h100-80gb*2:mig-off". MIG on unless ":mig-off"; no instances.
// InvalidArgument naming the bad item.
Result<FakeMachine> MachineFromDevices(std::string_view devices);

// "8-4-4-4-12" lower-case hex derived deterministically from `seed`.
std::string UuidShaped(std::string_view seed);

// NVML's GPU instance profile enum for a catalog profile (see docs/nvml.md).
unsigned GpuInstanceProfileEnum(const MigProfile& profile);
// The catalog profile with NVML enum `profile_enum` / ID `id`, or nullptr.
const MigProfile* ProfileByEnum(const GpuModel& gpu, unsigned profile_enum);
const MigProfile* ProfileById(const GpuModel& gpu, int id);
// NVML's compute instance profile enum for `slices` compute slices
// (1, 2, 3, 4, 7), or -1.
int ComputeInstanceProfileEnum(int slices);

// Creates a GPU instance of profile ID `profile_id` at `placement` under the
// driver's rules: an unknown profile, a placement size other than the
// profile's or a start the profile does not allow -> INVALID_ARGUMENT; a
// memory range overlapping an existing GI, more than the profile's
// instanceCount, a second media-extension ("+me") GI, or more compute
// slices than the GPU has -> INSUFFICIENT_RESOURCES. The new GI gets the
// smallest free positive ID. REQUIRES: MIG on.
nvmlReturn_t CreateGpuInstance(FakeGpu& gpu, unsigned profile_id,
                               const nvmlGpuInstancePlacement_t& placement, int* id);

// Creates the compute instance of CI profile `ci_profile` on `gi`: only the
// full-size profile is supported (INVALID_ARGUMENT otherwise), and a GI
// holds one (INSUFFICIENT_RESOURCES for a second). ID: smallest free from 0.
nvmlReturn_t CreateComputeInstance(FakeGpu& gpu, FakeGpuInstance& gi, unsigned ci_profile, int* id);

// What the environment asks of the fake (read at every nvmlInit_v2).
struct FailRule {
  std::string function;
  long nth = 0;         // 1-based call count of `function` in this process
  bool onward = false;  // "+": the nth and every later call
  nvmlReturn_t code = NVML_ERROR_UNKNOWN;
};

struct FakeSettings {
  std::string state_path;  // TESSERA_FAKE_NVML_STATE ("" when unset)
  std::string devices;     // TESSERA_FAKE_NVML_DEVICES
  bool has_devices = false;
  std::vector<FailRule> fail;           // TESSERA_FAKE_NVML_FAIL
  long latency_all_ms = 0;              // TESSERA_FAKE_NVML_LATENCY_MS="<ms>"
  std::map<std::string, long> latency;  // or "<function>:<ms>,..."
};

// The names of the NVML functions the fake exports.
const std::vector<std::string_view>& ExportedFunctions();

// Parses TESSERA_FAKE_NVML_FAIL / _LATENCY_MS values. InvalidArgument with
// "<VARIABLE>: <what is wrong>" on a malformed setting.
Status ParseFailSetting(std::string_view value, std::vector<FailRule>* rules);
Status ParseLatencySetting(std::string_view value, FakeSettings* settings);

}  // namespace tessera::fake_nvml

#endif  // TESSERA_NVML_FAKE_FAKE_STATE_H_
