// libtessera-fake-nvml.so: the NVML functions of src/nvml/nvml_api.h on a
// pretend machine, so that the loader, the agent and their tests run without
// a GPU. docs/nvml.md ("The fake NVML") is the full description.
//
// * State: the JSON file at $TESSERA_FAKE_NVML_STATE (fake_state.h), shared
//   by every process. Each call takes an exclusive flock on "<state>.lock",
//   reads the file and, if it changes the machine, writes it atomically
//   (temp file + rename) before unlocking. If the file is missing and
//   $TESSERA_FAKE_NVML_DEVICES is set, nvmlInit_v2 creates it (MIG on, no
//   instances); with neither, nvmlInit_v2 returns DRIVER_NOT_LOADED. A
//   malformed file makes every call return UNKNOWN (nothing printed).
// * Handles: small objects interned per process naming (GPU index), (GPU,
//   GI id), (GPU, GI id, CI id) or a MIG device (GPU, GI id, CI id); every
//   call re-reads the state, so a handle stays valid while another process
//   changes the machine, and one whose instance is gone gets NOT_FOUND.
// * MIG off: every MIG call but nvmlDeviceGetMigMode/SetMigMode returns
//   NOT_SUPPORTED. The creation rules are fake_state.h's. nvmlGpuInstanceDestroy
//   with compute instances -> IN_USE. nvmlDeviceSetMigMode sets the current
//   and pending mode at once (Hopper-like, no reset), IN_USE while the GPU
//   has GPU instances.
// * nvmlInit_v2 is reference-counted; other calls before it UNINITIALIZED.
//   It re-reads the environment every time (the latest settings win) and
//   restarts the per-function call counts when the count goes from 0 to 1.
// * $TESSERA_FAKE_NVML_FAIL="<function>:<n>[+][:<ERROR>],..." fails the nth
//   call of the function (every later one too with "+"), with UNKNOWN by
//   default. $TESSERA_FAKE_NVML_LATENCY_MS="<ms>" or "<function>:<ms>,..."
//   sleeps inside the lock. A malformed setting: one line on stderr, and
//   nvmlInit_v2 returns UNKNOWN.
//
// Thread-safety: a process-wide mutex serializes the calls, as the flock
// serializes processes.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "nvml/fake/fake_state.h"
#include "nvml/nvml_api.h"

namespace tessera::fake_nvml {
namespace {

enum class Kind { kDevice, kGpuInstance, kComputeInstance, kMigDevice };

struct Handle {
  Kind kind;
  int gpu;
  int gi;
  int ci;
};

struct Process {
  std::mutex mutex;
  int init_count = 0;
  FakeSettings settings;
  std::map<std::string, long> calls;
  std::map<std::tuple<Kind, int, int, int>, std::unique_ptr<Handle>> handles;
  std::set<const void*> known;
};

Process& TheProcess() {
  static Process* process = new Process();  // never destroyed: handles outlive exit order
  return *process;
}

Handle* Intern(Process& p, Kind kind, int gpu, int gi = -1, int ci = -1) {
  auto& slot = p.handles[{kind, gpu, gi, ci}];
  if (!slot) {
    slot = std::make_unique<Handle>(Handle{kind, gpu, gi, ci});
    p.known.insert(slot.get());
  }
  return slot.get();
}

const Handle* Lookup(Process& p, const void* raw) {
  return p.known.count(raw) ? static_cast<const Handle*>(raw) : nullptr;
}

nvmlDevice_t AsDevice(Handle* h) { return reinterpret_cast<nvmlDevice_t>(h); }
nvmlGpuInstance_t AsGi(Handle* h) { return reinterpret_cast<nvmlGpuInstance_t>(h); }
nvmlComputeInstance_t AsCi(Handle* h) { return reinterpret_cast<nvmlComputeInstance_t>(h); }

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WriteAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  return std::rename(temp.c_str(), path.c_str()) == 0;
}

// The exclusive flock on "<state>.lock", released on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& state_path) {
    fd_ = open((state_path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the flock
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Counts the call, sleeps the configured latency, and returns the injected
// failure if one applies (NVML_SUCCESS otherwise). REQUIRES: p.mutex held.
nvmlReturn_t Inject(Process& p, const char* function) {
  const long n = ++p.calls[function];
  long ms = p.settings.latency_all_ms;
  if (auto it = p.settings.latency.find(function); it != p.settings.latency.end()) ms = it->second;
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  for (const FailRule& rule : p.settings.fail) {
    if (rule.function == function && (n == rule.nth || (rule.onward && n > rule.nth))) {
      return rule.code;
    }
  }
  return NVML_SUCCESS;
}

// One NVML call on the machine: `body(process, machine, changed)`.
template <typename Body>
nvmlReturn_t Call(const char* function, Body&& body) {
  Process& p = TheProcess();
  std::lock_guard<std::mutex> guard(p.mutex);
  if (p.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  FileLock lock(p.settings.state_path);
  if (!lock.ok()) return NVML_ERROR_UNKNOWN;
  if (nvmlReturn_t injected = Inject(p, function); injected != NVML_SUCCESS) return injected;
  const std::optional<std::string> text = ReadFile(p.settings.state_path);
  if (!text) return NVML_ERROR_UNKNOWN;
  std::optional<FakeMachine> machine = ParseMachine(*text);
  if (!machine) return NVML_ERROR_UNKNOWN;
  bool changed = false;
  const nvmlReturn_t r = body(p, *machine, changed);
  if (changed && !WriteAtomically(p.settings.state_path, SerializeMachine(*machine))) {
    return NVML_ERROR_UNKNOWN;
  }
  return r;
}

// The GPU a physical-device handle names, or nullptr.
FakeGpu* GpuOf(Process& p, FakeMachine& m, nvmlDevice_t device, nvmlReturn_t* r,
               bool allow_mig_device = false) {
  const Handle* h = Lookup(p, device);
  if (!h || (h->kind != Kind::kDevice && !(allow_mig_device && h->kind == Kind::kMigDevice)) ||
      h->gpu >= static_cast<int>(m.gpus.size())) {
    *r = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  return &m.gpus[h->gpu];
}

// The GPU instance a handle names (NOT_FOUND once destroyed).
FakeGpuInstance* GiOf(Process& p, FakeMachine& m, const void* raw, FakeGpu** gpu, nvmlReturn_t* r) {
  const Handle* h = Lookup(p, raw);
  if (!h || h->kind != Kind::kGpuInstance || h->gpu >= static_cast<int>(m.gpus.size())) {
    *r = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  *gpu = &m.gpus[h->gpu];
  if ((*gpu)->mig_mode != NVML_DEVICE_MIG_ENABLE) {
    *r = NVML_ERROR_NOT_SUPPORTED;
    return nullptr;
  }
  FakeGpuInstance* gi = (*gpu)->FindGpuInstance(h->gi);
  if (!gi) *r = NVML_ERROR_NOT_FOUND;
  return gi;
}

FakeComputeInstance* CiIn(FakeGpuInstance& gi, int id) {
  for (FakeComputeInstance& ci : gi.compute_instances) {
    if (ci.id == id) return &ci;
  }
  return nullptr;
}

// The MIG devices of a GPU: every compute instance, by (GI id, CI id).
std::vector<std::pair<int, int>> MigDevices(const FakeGpu& gpu) {
  std::vector<std::pair<int, int>> out;
  for (const FakeGpuInstance& gi : gpu.gpu_instances) {
    for (const FakeComputeInstance& ci : gi.compute_instances) out.push_back({gi.id, ci.id});
  }
  std::sort(out.begin(), out.end());
  return out;
}

nvmlReturn_t CopyString(const std::string& value, char* buffer, unsigned length) {
  if (!buffer) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

std::string DeviceName(const GpuModel& model) {
  return model.display_name.rfind("NVIDIA ", 0) == 0 ? model.display_name
                                                     : "NVIDIA " + model.display_name;
}

unsigned long long MemoryMb(const MigProfile& profile);

// The fields nvmlGpuInstanceProfileInfo_t and its v2 share, from the catalog
// (copy engines = compute slices; media engines only on "+me" profiles).
template <typename Info>
void FillProfileInfo(const MigProfile& profile, Info* info) {
  info->id = static_cast<unsigned>(profile.id);
  info->isP2pSupported = 0;
  info->sliceCount = static_cast<unsigned>(profile.compute_slices);
  info->instanceCount = static_cast<unsigned>(profile.max_instances);
  info->multiprocessorCount = static_cast<unsigned>(profile.sms);
  info->copyEngineCount = static_cast<unsigned>(profile.compute_slices);
  info->decoderCount = profile.media_extensions ? 1u : 0u;
  info->encoderCount = 0;
  info->jpegCount = profile.media_extensions ? 1u : 0u;
  info->ofaCount = profile.media_extensions ? 1u : 0u;
  info->memorySizeMB = MemoryMb(profile);
}

unsigned long long MemoryMb(const MigProfile& profile) {
  return static_cast<unsigned long long>(profile.memory_gib * 1024.0 + 0.5);
}

// nvmlInit_v2's reading of the environment; prints one line when malformed.
std::optional<FakeSettings> ReadSettings() {
  FakeSettings settings;
  if (const char* state = std::getenv("TESSERA_FAKE_NVML_STATE")) settings.state_path = state;
  if (const char* devices = std::getenv("TESSERA_FAKE_NVML_DEVICES")) {
    settings.devices = devices;
    settings.has_devices = true;
  }
  Status status;
  if (const char* fail = std::getenv("TESSERA_FAKE_NVML_FAIL"); fail && *fail) {
    status = ParseFailSetting(fail, &settings.fail);
  }
  if (const char* latency = std::getenv("TESSERA_FAKE_NVML_LATENCY_MS");
      status.ok() && latency && *latency) {
    status = ParseLatencySetting(latency, &settings);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "libtessera-fake-nvml: %s\n", status.message().c_str());
    return std::nullopt;
  }
  return settings;
}

}  // namespace
}  // namespace tessera::fake_nvml

using namespace tessera::fake_nvml;  // NOLINT: the C functions below implement it
using tessera::GpuModel;
using tessera::MigProfile;

#define TESSERA_FAKE_EXPORT extern "C" __attribute__((visibility("default")))
// Every export catches everything: nothing may unwind into a C caller.
#define TESSERA_FAKE_GUARD(body) \
  try {                          \
    body                         \
  } catch (...) {                \
    return NVML_ERROR_UNKNOWN;   \
  }

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void){TESSERA_FAKE_GUARD({
  std::optional<FakeSettings> settings = ReadSettings();
  if (!settings) return NVML_ERROR_UNKNOWN;
  Process& p = TheProcess();
  std::lock_guard<std::mutex> guard(p.mutex);
  if (p.init_count == 0) p.calls.clear();
  std::swap(p.settings, *settings);
  const FakeSettings previous = *settings;  // restored unless this init succeeds
  auto fail = [&](nvmlReturn_t r) {
    if (p.init_count > 0) p.settings = previous;
    return r;
  };
  if (p.settings.state_path.empty()) return fail(NVML_ERROR_DRIVER_NOT_LOADED);
  const bool exists = access(p.settings.state_path.c_str(), F_OK) == 0;
  if (!exists && !p.settings.has_devices) return fail(NVML_ERROR_DRIVER_NOT_LOADED);
  FileLock lock(p.settings.state_path);
  if (!lock.ok()) return fail(NVML_ERROR_UNKNOWN);
  if (nvmlReturn_t injected = Inject(p, "nvmlInit_v2"); injected != NVML_SUCCESS) {
    return fail(injected);
  }
  if (access(p.settings.state_path.c_str(), F_OK) != 0) {
    if (!p.settings.has_devices) return fail(NVML_ERROR_DRIVER_NOT_LOADED);
    auto machine = MachineFromDevices(p.settings.devices);
    if (!machine.ok()) {
      std::fprintf(stderr, "libtessera-fake-nvml: TESSERA_FAKE_NVML_DEVICES: %s\n",
                   machine.status().message().c_str());
      return fail(NVML_ERROR_UNKNOWN);
    }
    if (!WriteAtomically(p.settings.state_path, SerializeMachine(*machine))) {
      return fail(NVML_ERROR_UNKNOWN);
    }
  } else {
    const auto text = ReadFile(p.settings.state_path);
    if (!text || !ParseMachine(*text)) return fail(NVML_ERROR_UNKNOWN);
  }
  ++p.init_count;
  return NVML_SUCCESS;
})}

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlShutdown(void){TESSERA_FAKE_GUARD({
  Process& p = TheProcess();
  std::lock_guard<std::mutex> guard(p.mutex);
  if (p.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --p.init_count;
  return NVML_SUCCESS;
})}

TESSERA_FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  const tessera::nvml_api::ReturnCodeName* entry = tessera::nvml_api::FindReturnCode(result);
  // The table's texts are string literals, so NUL-terminated.
  return entry ? entry->text.data() : "Unknown Error";
}

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount){
    TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process&, FakeMachine& m, bool&) {
        if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
        *deviceCount = static_cast<unsigned>(m.gpus.size());
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        if (!device || index >= m.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
        *device = AsDevice(Intern(p, Kind::kDevice, static_cast<int>(index)));
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = GpuOf(p, m, device, &r, /*allow_mig_device=*/true);
        if (!gpu) return r;
        const Handle* h = Lookup(p, device);
        std::string text = DeviceName(*gpu->model);
        if (h->kind == Kind::kMigDevice) {
          FakeGpuInstance* gi = gpu->FindGpuInstance(h->gi);
          if (!gi || !CiIn(*gi, h->ci)) return NVML_ERROR_NOT_FOUND;
          text += " MIG " + ProfileById(*gpu->model, gi->profile_id)->name;
        }
        return CopyString(text, name, length);
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = GpuOf(p, m, device, &r, /*allow_mig_device=*/true);
        if (!gpu) return r;
        const Handle* h = Lookup(p, device);
        if (h->kind == Kind::kDevice) return CopyString(gpu->uuid, uuid, length);
        FakeGpuInstance* gi = gpu->FindGpuInstance(h->gi);
        FakeComputeInstance* ci = gi ? CiIn(*gi, h->ci) : nullptr;
        if (!ci) return NVML_ERROR_NOT_FOUND;
        return CopyString(ci->uuid, uuid, length);
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode,
                         nvmlReturn_t* activationStatus){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool& changed) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = GpuOf(p, m, device, &r);
        if (!gpu) return r;
        if (!activationStatus ||
            (mode != NVML_DEVICE_MIG_ENABLE && mode != NVML_DEVICE_MIG_DISABLE)) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (!gpu->gpu_instances.empty()) return NVML_ERROR_IN_USE;
        gpu->mig_mode = gpu->pending_mig_mode = static_cast<int>(mode);
        *activationStatus = NVML_SUCCESS;
        changed = true;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode,
                         unsigned int* pendingMode) {
  TESSERA_FAKE_GUARD({
    return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
      nvmlReturn_t r = NVML_SUCCESS;
      FakeGpu* gpu = GpuOf(p, m, device, &r);
      if (!gpu) return r;
      if (!currentMode || !pendingMode) return NVML_ERROR_INVALID_ARGUMENT;
      *currentMode = static_cast<unsigned>(gpu->mig_mode);
      *pendingMode = static_cast<unsigned>(gpu->pending_mig_mode);
      return NVML_SUCCESS;
    });
  })
}

namespace {

// The MIG-on physical GPU of `device` (NOT_SUPPORTED with MIG off).
FakeGpu* MigGpuOf(Process& p, FakeMachine& m, nvmlDevice_t device, nvmlReturn_t* r) {
  FakeGpu* gpu = GpuOf(p, m, device, r);
  if (gpu && gpu->mig_mode != NVML_DEVICE_MIG_ENABLE) {
    *r = NVML_ERROR_NOT_SUPPORTED;
    return nullptr;
  }
  return gpu;
}

const MigProfile* ProfileForEnum(const FakeGpu& gpu, unsigned profile, nvmlReturn_t* r) {
  if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT) {
    *r = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  const MigProfile* found = ProfileByEnum(*gpu.model, profile);
  if (!found) *r = NVML_ERROR_NOT_SUPPORTED;
  return found;
}

}  // namespace

TESSERA_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                    nvmlGpuInstanceProfileInfo_t* info){TESSERA_FAKE_GUARD({
  return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
    nvmlReturn_t r = NVML_SUCCESS;
    FakeGpu* gpu = MigGpuOf(p, m, device, &r);
    if (!gpu) return r;
    const MigProfile* found = ProfileForEnum(*gpu, profile, &r);
    if (!found) return r;
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    FillProfileInfo(*found, info);
    return NVML_SUCCESS;
  });
})}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                         nvmlGpuInstanceProfileInfo_v2_t* info){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        const MigProfile* found = ProfileForEnum(*gpu, profile, &r);
        if (!found) return r;
        if (!info) return NVML_ERROR_INVALID_ARGUMENT;
        if (info->version != nvmlGpuInstanceProfileInfo_v2) {
          return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        }
        FillProfileInfo(*found, info);
        std::memset(info->name, 0, sizeof(info->name));
        std::snprintf(info->name, sizeof(info->name), "MIG %s", found->name.c_str());
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                  nvmlGpuInstancePlacement_t* placements,
                                                  unsigned int* count){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        const MigProfile* profile = ProfileById(*gpu->model, static_cast<int>(profileId));
        if (!profile || !count) return NVML_ERROR_INVALID_ARGUMENT;
        *count = static_cast<unsigned>(profile->starts.size());
        if (placements) {
          for (size_t i = 0; i < profile->starts.size(); ++i) {
            placements[i] = {static_cast<unsigned>(profile->starts[i]),
                             static_cast<unsigned>(profile->memory_slices)};
          }
        }
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                             const nvmlGpuInstancePlacement_t* placement,
                                             nvmlGpuInstance_t* gpuInstance){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool& changed) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        if (!placement || !gpuInstance) return NVML_ERROR_INVALID_ARGUMENT;
        int id = 0;
        r = CreateGpuInstance(*gpu, profileId, *placement, &id);
        if (r != NVML_SUCCESS) return r;
        *gpuInstance = AsGi(Intern(p, Kind::kGpuInstance, Lookup(p, device)->gpu, id));
        changed = true;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool& changed) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = nullptr;
        FakeGpuInstance* gi = GiOf(p, m, gpuInstance, &gpu, &r);
        if (!gi) return r;
        if (!gi->compute_instances.empty()) return NVML_ERROR_IN_USE;
        const int id = gi->id;
        std::erase_if(gpu->gpu_instances, [&](const FakeGpuInstance& g) { return g.id == id; });
        changed = true;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                              nvmlGpuInstance_t* gpuInstances,
                              unsigned int* count){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        if (!ProfileById(*gpu->model, static_cast<int>(profileId)) || !gpuInstances || !count) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        unsigned n = 0;
        for (const FakeGpuInstance& gi : gpu->gpu_instances) {
          if (gi.profile_id != static_cast<int>(profileId)) continue;
          gpuInstances[n++] = AsGi(Intern(p, Kind::kGpuInstance, Lookup(p, device)->gpu, gi.id));
        }
        *count = n;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                 nvmlGpuInstance_t* gpuInstance){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        if (!gpuInstance) return NVML_ERROR_INVALID_ARGUMENT;
        if (!gpu->FindGpuInstance(static_cast<int>(id))) return NVML_ERROR_NOT_FOUND;
        *gpuInstance =
            AsGi(Intern(p, Kind::kGpuInstance, Lookup(p, device)->gpu, static_cast<int>(id)));
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance,
                           nvmlGpuInstanceInfo_t* info){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = nullptr;
        FakeGpuInstance* gi = GiOf(p, m, gpuInstance, &gpu, &r);
        if (!gi) return r;
        if (!info) return NVML_ERROR_INVALID_ARGUMENT;
        info->device = AsDevice(Intern(p, Kind::kDevice, Lookup(p, gpuInstance)->gpu));
        info->id = static_cast<unsigned>(gi->id);
        info->profileId = static_cast<unsigned>(gi->profile_id);
        info->placement = {static_cast<unsigned>(gi->start), static_cast<unsigned>(gi->size)};
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,
    nvmlComputeInstanceProfileInfo_t* info){TESSERA_FAKE_GUARD({
  return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
    nvmlReturn_t r = NVML_SUCCESS;
    FakeGpu* gpu = nullptr;
    FakeGpuInstance* gi = GiOf(p, m, gpuInstance, &gpu, &r);
    if (!gi) return r;
    if (!info || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
        engProfile >= NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    const MigProfile* gi_profile = ProfileById(*gpu->model, gi->profile_id);
    if (static_cast<int>(profile) != ComputeInstanceProfileEnum(gi_profile->compute_slices)) {
      return NVML_ERROR_NOT_SUPPORTED;
    }
    *info = {};
    info->id = profile;
    info->sliceCount = static_cast<unsigned>(gi_profile->compute_slices);
    info->instanceCount = 1;
    info->multiprocessorCount = static_cast<unsigned>(gi_profile->sms);
    info->sharedCopyEngineCount = static_cast<unsigned>(gi_profile->compute_slices);
    return NVML_SUCCESS;
  });
})}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                         nvmlComputeInstance_t* computeInstance) {
  TESSERA_FAKE_GUARD({
    return Call(__func__, [&](Process& p, FakeMachine& m, bool& changed) {
      nvmlReturn_t r = NVML_SUCCESS;
      FakeGpu* gpu = nullptr;
      FakeGpuInstance* gi = GiOf(p, m, gpuInstance, &gpu, &r);
      if (!gi) return r;
      if (!computeInstance) return NVML_ERROR_INVALID_ARGUMENT;
      int id = 0;
      r = CreateComputeInstance(*gpu, *gi, profileId, &id);
      if (r != NVML_SUCCESS) return r;
      const Handle* h = Lookup(p, gpuInstance);
      *computeInstance = AsCi(Intern(p, Kind::kComputeInstance, h->gpu, h->gi, id));
      changed = true;
      return NVML_SUCCESS;
    });
  })
}

namespace {

// The compute instance a handle names (NOT_FOUND once it or its GI is gone).
FakeComputeInstance* CiOf(Process& p, FakeMachine& m, const void* raw, FakeGpu** gpu,
                          FakeGpuInstance** gi, nvmlReturn_t* r) {
  const Handle* h = Lookup(p, raw);
  if (!h || h->kind != Kind::kComputeInstance || h->gpu >= static_cast<int>(m.gpus.size())) {
    *r = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  *gpu = &m.gpus[h->gpu];
  if ((*gpu)->mig_mode != NVML_DEVICE_MIG_ENABLE) {
    *r = NVML_ERROR_NOT_SUPPORTED;
    return nullptr;
  }
  *gi = (*gpu)->FindGpuInstance(h->gi);
  FakeComputeInstance* ci = *gi ? CiIn(**gi, h->ci) : nullptr;
  if (!ci) *r = NVML_ERROR_NOT_FOUND;
  return ci;
}

}  // namespace

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance){
    TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool& changed) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = nullptr;
        FakeGpuInstance* gi = nullptr;
        FakeComputeInstance* ci = CiOf(p, m, computeInstance, &gpu, &gi, &r);
        if (!ci) return r;
        const int id = ci->id;
        std::erase_if(gi->compute_instances,
                      [&](const FakeComputeInstance& c) { return c.id == id; });
        changed = true;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                       nvmlComputeInstance_t* computeInstances,
                                       unsigned int* count){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = nullptr;
        FakeGpuInstance* gi = GiOf(p, m, gpuInstance, &gpu, &r);
        if (!gi) return r;
        if (!computeInstances || !count || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        const Handle* h = Lookup(p, gpuInstance);
        unsigned n = 0;
        for (const FakeComputeInstance& ci : gi->compute_instances) {
          if (ci.profile_id != static_cast<int>(profileId)) continue;
          computeInstances[n++] = AsCi(Intern(p, Kind::kComputeInstance, h->gpu, h->gi, ci.id));
        }
        *count = n;
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
                                  nvmlComputeInstanceInfo_t* info){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = nullptr;
        FakeGpuInstance* gi = nullptr;
        FakeComputeInstance* ci = CiOf(p, m, computeInstance, &gpu, &gi, &r);
        if (!ci) return r;
        if (!info) return NVML_ERROR_INVALID_ARGUMENT;
        const Handle* h = Lookup(p, computeInstance);
        info->device = AsDevice(Intern(p, Kind::kDevice, h->gpu));
        info->gpuInstance = AsGi(Intern(p, Kind::kGpuInstance, h->gpu, h->gi));
        info->id = static_cast<unsigned>(ci->id);
        info->profileId = static_cast<unsigned>(ci->profile_id);
        const MigProfile* profile = ProfileById(*gpu->model, gi->profile_id);
        info->placement = {0, static_cast<unsigned>(profile->compute_slices)};
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count){TESSERA_FAKE_GUARD({
      return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
        nvmlReturn_t r = NVML_SUCCESS;
        FakeGpu* gpu = MigGpuOf(p, m, device, &r);
        if (!gpu) return r;
        if (!count) return NVML_ERROR_INVALID_ARGUMENT;
        *count = static_cast<unsigned>(gpu->model->compute_slices);
        return NVML_SUCCESS;
      });
    })}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                        nvmlDevice_t* migDevice) {
  TESSERA_FAKE_GUARD({
    return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
      nvmlReturn_t r = NVML_SUCCESS;
      FakeGpu* gpu = MigGpuOf(p, m, device, &r);
      if (!gpu) return r;
      if (!migDevice || index >= static_cast<unsigned>(gpu->model->compute_slices)) {
        return NVML_ERROR_INVALID_ARGUMENT;
      }
      const auto devices = MigDevices(*gpu);
      if (index >= devices.size()) return NVML_ERROR_NOT_FOUND;
      *migDevice = AsDevice(Intern(p, Kind::kMigDevice, Lookup(p, device)->gpu,
                                   devices[index].first, devices[index].second));
      return NVML_SUCCESS;
    });
  })
}

namespace {

// A live MIG device's (GI id, CI id); NOT_SUPPORTED for a physical GPU.
nvmlReturn_t MigDeviceIds(Process& p, FakeMachine& m, nvmlDevice_t device, int* gi, int* ci) {
  const Handle* h = Lookup(p, device);
  if (!h || h->gpu >= static_cast<int>(m.gpus.size())) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->kind == Kind::kDevice) return NVML_ERROR_NOT_SUPPORTED;
  if (h->kind != Kind::kMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
  FakeGpuInstance* instance = m.gpus[h->gpu].FindGpuInstance(h->gi);
  if (!instance || !CiIn(*instance, h->ci)) return NVML_ERROR_NOT_FOUND;
  *gi = h->gi;
  *ci = h->ci;
  return NVML_SUCCESS;
}

}  // namespace

TESSERA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
                                                            unsigned int* id){TESSERA_FAKE_GUARD({
  return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
    int gi = 0, ci = 0;
    const nvmlReturn_t r = MigDeviceIds(p, m, device, &gi, &ci);
    if (r != NVML_SUCCESS) return r;
    if (!id) return NVML_ERROR_INVALID_ARGUMENT;
    *id = static_cast<unsigned>(gi);
    return NVML_SUCCESS;
  });
})}

TESSERA_FAKE_EXPORT nvmlReturn_t
    nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  TESSERA_FAKE_GUARD({
    return Call(__func__, [&](Process& p, FakeMachine& m, bool&) {
      int gi = 0, ci = 0;
      const nvmlReturn_t r = MigDeviceIds(p, m, device, &gi, &ci);
      if (r != NVML_SUCCESS) return r;
      if (!id) return NVML_ERROR_INVALID_ARGUMENT;
      *id = static_cast<unsigned>(ci);
      return NVML_SUCCESS;
    });
  })
}
