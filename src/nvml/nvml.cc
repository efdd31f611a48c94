// The NVML loader: include/tessera/nvml/nvml.h on a library opened with dlopen.
// Every NVML function is resolved once, in Open; each public call then walks
// NVML as mig-parted does (profile enums, skipping the ones the GPU lacks)
// and turns each failure into a Status naming the function, the GPU and the
// instance, NVML's own error string and the code name.
#include "tessera/nvml/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nvml/nvml_api.h"

namespace tessera {

namespace {

// The library and its functions (Nvml::Api is this, under the header's name).
struct NvmlFunctions {
  void* library = nullptr;
  std::string path;
  decltype(&nvmlInit_v2) Init = nullptr;
  decltype(&nvmlShutdown) Shutdown = nullptr;
  decltype(&nvmlErrorString) ErrorString = nullptr;
  decltype(&nvmlDeviceGetCount_v2) DeviceGetCount = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) DeviceGetHandleByIndex = nullptr;
  decltype(&nvmlDeviceGetName) DeviceGetName = nullptr;
  decltype(&nvmlDeviceGetUUID) DeviceGetUUID = nullptr;
  decltype(&nvmlDeviceGetMigMode) DeviceGetMigMode = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceProfileInfo) DeviceGetGpuInstanceProfileInfo = nullptr;
  // Optional: drivers before R510 lack it; names then come from the info.
  decltype(&nvmlDeviceGetGpuInstanceProfileInfoV) DeviceGetGpuInstanceProfileInfoV = nullptr;
  decltype(&nvmlDeviceGetGpuInstancePossiblePlacements_v2) DeviceGetGpuInstancePossiblePlacements =
      nullptr;
  decltype(&nvmlDeviceGetGpuInstances) DeviceGetGpuInstances = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceById) DeviceGetGpuInstanceById = nullptr;
  decltype(&nvmlGpuInstanceGetInfo) GpuInstanceGetInfo = nullptr;
  decltype(&nvmlDeviceCreateGpuInstanceWithPlacement) DeviceCreateGpuInstanceWithPlacement =
      nullptr;
  decltype(&nvmlGpuInstanceDestroy) GpuInstanceDestroy = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstanceProfileInfo) GpuInstanceGetComputeInstanceProfileInfo =
      nullptr;
  decltype(&nvmlGpuInstanceCreateComputeInstance) GpuInstanceCreateComputeInstance = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstances) GpuInstanceGetComputeInstances = nullptr;
  decltype(&nvmlComputeInstanceGetInfo_v2) ComputeInstanceGetInfo = nullptr;
  decltype(&nvmlComputeInstanceDestroy) ComputeInstanceDestroy = nullptr;
  decltype(&nvmlDeviceGetMaxMigDeviceCount) DeviceGetMaxMigDeviceCount = nullptr;
  decltype(&nvmlDeviceGetMigDeviceHandleByIndex) DeviceGetMigDeviceHandleByIndex = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceId) DeviceGetGpuInstanceId = nullptr;
  decltype(&nvmlDeviceGetComputeInstanceId) DeviceGetComputeInstanceId = nullptr;
};

// The nvmlReturn_t enumerator name of `code`.
std::string CodeName(int code) {
  const nvml_api::ReturnCodeName* entry = nvml_api::FindReturnCode(code);
  return entry ? std::string(entry->name) : "NVML return code " + std::to_string(code);
}

// What the walks skip: a profile enum the GPU or the driver does not know.
bool IsAbsentProfile(nvmlReturn_t r) {
  return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT;
}

// "(GPU 0, profile 9, start 4)"-style context.
std::string Where(int gpu, const std::string& more = "") {
  return "(GPU " + std::to_string(gpu) + (more.empty() ? "" : ", " + more) + ")";
}

// A NUL-terminated C buffer as a string.
std::string FromBuffer(const char* buffer, size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

}  // namespace

struct Nvml::Api : NvmlFunctions {};

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  if (api_ && api_->library) {
    // The library stays loaded until the process ends: a library that was
    // initialised may keep state that unloading it would strand (the
    // driver's is not meant to be unloaded, and the fake's per-process
    // handles would be lost), and loading it again finds it mapped.
    if (api_->Shutdown) api_->Shutdown();
  }
}

Result<std::unique_ptr<Nvml>> Nvml::Open(const std::string& library) {
  auto api = std::make_unique<Api>();
  api->path = library;
  dlerror();
  api->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    const char* why = dlerror();
    return Status::NotFound("cannot load the NVML library " + library + ": " +
                            (why ? why : "dlopen failed") +
                            " (install the NVIDIA driver, or pass --nvml with the path of "
                            "libnvidia-ml.so.1 or of libtessera-fake-nvml.so)");
  }
  std::string missing;
  auto resolve = [&](auto& fn, const char* name, bool required = true) {
    void* symbol = dlsym(api->library, name);
    if (!symbol && required && missing.empty()) missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol);
  };
  resolve(api->Init, "nvmlInit_v2");
  resolve(api->Shutdown, "nvmlShutdown");
  resolve(api->ErrorString, "nvmlErrorString");
  resolve(api->DeviceGetCount, "nvmlDeviceGetCount_v2");
  resolve(api->DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2");
  resolve(api->DeviceGetName, "nvmlDeviceGetName");
  resolve(api->DeviceGetUUID, "nvmlDeviceGetUUID");
  resolve(api->DeviceGetMigMode, "nvmlDeviceGetMigMode");
  resolve(api->DeviceGetGpuInstanceProfileInfo, "nvmlDeviceGetGpuInstanceProfileInfo");
  resolve(api->DeviceGetGpuInstanceProfileInfoV, "nvmlDeviceGetGpuInstanceProfileInfoV",
          /*required=*/false);
  resolve(api->DeviceGetGpuInstancePossiblePlacements,
          "nvmlDeviceGetGpuInstancePossiblePlacements_v2");
  resolve(api->DeviceGetGpuInstances, "nvmlDeviceGetGpuInstances");
  resolve(api->DeviceGetGpuInstanceById, "nvmlDeviceGetGpuInstanceById");
  resolve(api->GpuInstanceGetInfo, "nvmlGpuInstanceGetInfo");
  resolve(api->DeviceCreateGpuInstanceWithPlacement, "nvmlDeviceCreateGpuInstanceWithPlacement");
  resolve(api->GpuInstanceDestroy, "nvmlGpuInstanceDestroy");
  resolve(api->GpuInstanceGetComputeInstanceProfileInfo,
          "nvmlGpuInstanceGetComputeInstanceProfileInfo");
  resolve(api->GpuInstanceCreateComputeInstance, "nvmlGpuInstanceCreateComputeInstance");
  resolve(api->GpuInstanceGetComputeInstances, "nvmlGpuInstanceGetComputeInstances");
  resolve(api->ComputeInstanceGetInfo, "nvmlComputeInstanceGetInfo_v2");
  resolve(api->ComputeInstanceDestroy, "nvmlComputeInstanceDestroy");
  resolve(api->DeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount");
  resolve(api->DeviceGetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex");
  resolve(api->DeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId");
  resolve(api->DeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId");
  if (!missing.empty()) {
    dlclose(api->library);
    return Status::InvalidArgument(library + " does not define " + missing +
                                   ": not an NVML library, or one older than R470");
  }
  const nvmlReturn_t r = api->Init();
  if (r != NVML_SUCCESS) {
    const char* text = api->ErrorString(r);
    Status status =
        Status::IoError("nvmlInit_v2 (" + library + "): " + (text ? std::string(text) : "?") +
                        " (" + CodeName(r) + ")");
    return status;  // loaded, so kept: see ~Nvml
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

namespace {

// The Status of a failed NVML call (see nvml.h): NotFound for
// NVML_ERROR_NOT_FOUND, InvalidArgument for what the request itself got
// wrong (an argument, an unsupported call, no room, in use), IoError for the
// rest (the driver or the GPU failed).
Status NvmlStatus(const std::string& message, nvmlReturn_t r) {
  switch (r) {
    case NVML_ERROR_NOT_FOUND:
      return Status::NotFound(message);
    case NVML_ERROR_INVALID_ARGUMENT:
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_NO_PERMISSION:
      return Status::InvalidArgument(message);
    default:
      return Status::IoError(message);
  }
}

}  // namespace

// Calls an NVML function; on failure records last_error_ and returns the
// Status from the enclosing function. `where` is the "(GPU 0, ...)" context.
#define TESSERA_NVML_CALL(name, where, call)                                        \
  do {                                                                              \
    const nvmlReturn_t tessera_nvml_r_ = (call);                                    \
    if (tessera_nvml_r_ != NVML_SUCCESS) return Fail(name, where, tessera_nvml_r_); \
  } while (false)

namespace {

// The walks the public calls share; each failure goes through Fail, which
// records the caller's last_error.
class NvmlCalls {
 public:
  NvmlCalls(NvmlFunctions& api, NvmlError& last_error) : api_(api), last_error_(last_error) {}

  Status Fail(const char* function, const std::string& where, nvmlReturn_t r) {
    last_error_ = {static_cast<int>(r), CodeName(r)};
    const char* text = api_.ErrorString(r);
    return NvmlStatus(std::string(function) + " " + where + ": " + (text ? text : "?") + " (" +
                          last_error_.name + ")",
                      r);
  }

  Result<nvmlDevice_t> Device(int gpu) {
    nvmlDevice_t device = nullptr;
    if (gpu < 0) return Status::InvalidArgument("GPU index " + std::to_string(gpu) + " < 0");
    TESSERA_NVML_CALL("nvmlDeviceGetHandleByIndex_v2", Where(gpu),
                      api_.DeviceGetHandleByIndex(static_cast<unsigned>(gpu), &device));
    return device;
  }

  // The GPU instance profiles the GPU has, by walking the NVML enum.
  Result<std::vector<NvmlProfile>> Profiles(int gpu, nvmlDevice_t device, bool with_names) {
    std::vector<NvmlProfile> profiles;
    for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; ++p) {
      nvmlGpuInstanceProfileInfo_t info;
      std::memset(&info, 0, sizeof(info));
      const nvmlReturn_t r = api_.DeviceGetGpuInstanceProfileInfo(device, p, &info);
      if (IsAbsentProfile(r)) continue;
      if (r != NVML_SUCCESS) {
        return Fail("nvmlDeviceGetGpuInstanceProfileInfo", Where(gpu, "enum " + std::to_string(p)),
                    r);
      }
      NvmlProfile profile;
      profile.nvml_profile = static_cast<int>(p);
      profile.id = static_cast<int>(info.id);
      profile.slice_count = static_cast<int>(info.sliceCount);
      profile.instance_count = static_cast<int>(info.instanceCount);
      profile.multiprocessor_count = static_cast<int>(info.multiprocessorCount);
      profile.memory_mib = static_cast<long long>(info.memorySizeMB);
      profile.name = std::to_string(info.sliceCount) + "g." +
                     std::to_string((info.memorySizeMB + 1023) / 1024) + "gb";
      if (with_names && api_.DeviceGetGpuInstanceProfileInfoV) {
        nvmlGpuInstanceProfileInfo_v2_t v2;
        std::memset(&v2, 0, sizeof(v2));
        v2.version = nvmlGpuInstanceProfileInfo_v2;
        if (api_.DeviceGetGpuInstanceProfileInfoV(device, p, &v2) == NVML_SUCCESS) {
          std::string name = FromBuffer(v2.name, sizeof(v2.name));
          if (name.rfind("MIG ", 0) == 0) name = name.substr(4);
          if (!name.empty()) profile.name = name;
        }
      }
      profiles.push_back(std::move(profile));
    }
    return profiles;
  }

  Status Placements(int gpu, nvmlDevice_t device, NvmlProfile& profile) {
    const std::string where = Where(gpu, "profile " + std::to_string(profile.id));
    unsigned count = 0;
    TESSERA_NVML_CALL("nvmlDeviceGetGpuInstancePossiblePlacements_v2", where,
                      api_.DeviceGetGpuInstancePossiblePlacements(
                          device, static_cast<unsigned>(profile.id), nullptr, &count));
    std::vector<nvmlGpuInstancePlacement_t> placements(std::max(count, 1u));
    TESSERA_NVML_CALL("nvmlDeviceGetGpuInstancePossiblePlacements_v2", where,
                      api_.DeviceGetGpuInstancePossiblePlacements(
                          device, static_cast<unsigned>(profile.id), placements.data(), &count));
    placements.resize(std::min<size_t>(count, placements.size()));
    for (const nvmlGpuInstancePlacement_t& placement : placements) {
      profile.starts.push_back(static_cast<int>(placement.start));
      profile.memory_slices = static_cast<int>(placement.size);
    }
    return Status::Ok();
  }

  // The compute instances of `gi`, without UUIDs.
  Result<std::vector<NvmlComputeInstance>> ComputeInstances(int gpu, int gi_id,
                                                            nvmlGpuInstance_t gi) {
    std::vector<NvmlComputeInstance> out;
    const std::string where = Where(gpu, "GPU instance " + std::to_string(gi_id));
    for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; ++p) {
      nvmlComputeInstanceProfileInfo_t info;
      std::memset(&info, 0, sizeof(info));
      const nvmlReturn_t r = api_.GpuInstanceGetComputeInstanceProfileInfo(
          gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
      if (IsAbsentProfile(r)) continue;
      if (r != NVML_SUCCESS) return Fail("nvmlGpuInstanceGetComputeInstanceProfileInfo", where, r);
      std::vector<nvmlComputeInstance_t> cis(std::max(info.instanceCount, 1u) + 8);
      unsigned count = 0;
      TESSERA_NVML_CALL("nvmlGpuInstanceGetComputeInstances", where,
                        api_.GpuInstanceGetComputeInstances(gi, info.id, cis.data(), &count));
      for (unsigned i = 0; i < count && i < cis.size(); ++i) {
        nvmlComputeInstanceInfo_t ci_info;
        std::memset(&ci_info, 0, sizeof(ci_info));
        TESSERA_NVML_CALL("nvmlComputeInstanceGetInfo_v2", where,
                          api_.ComputeInstanceGetInfo(cis[i], &ci_info));
        out.push_back({static_cast<int>(ci_info.id), static_cast<int>(ci_info.profileId),
                       static_cast<int>(info.sliceCount), ""});
      }
    }
    std::sort(
        out.begin(), out.end(),
        [](const NvmlComputeInstance& a, const NvmlComputeInstance& b) { return a.id < b.id; });
    return out;
  }

  // MIG UUID of every (GI id, CI id) of the GPU.
  Result<std::map<std::pair<int, int>, std::string>> MigUuids(int gpu, nvmlDevice_t device) {
    std::map<std::pair<int, int>, std::string> uuids;
    unsigned max_count = 0;
    TESSERA_NVML_CALL("nvmlDeviceGetMaxMigDeviceCount", Where(gpu),
                      api_.DeviceGetMaxMigDeviceCount(device, &max_count));
    for (unsigned i = 0; i < max_count; ++i) {
      const std::string where = Where(gpu, "MIG device " + std::to_string(i));
      nvmlDevice_t mig = nullptr;
      const nvmlReturn_t r = api_.DeviceGetMigDeviceHandleByIndex(device, i, &mig);
      if (r == NVML_ERROR_NOT_FOUND) continue;
      if (r != NVML_SUCCESS) return Fail("nvmlDeviceGetMigDeviceHandleByIndex", where, r);
      unsigned gi = 0, ci = 0;
      TESSERA_NVML_CALL("nvmlDeviceGetGpuInstanceId", where, api_.DeviceGetGpuInstanceId(mig, &gi));
      TESSERA_NVML_CALL("nvmlDeviceGetComputeInstanceId", where,
                        api_.DeviceGetComputeInstanceId(mig, &ci));
      char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      TESSERA_NVML_CALL("nvmlDeviceGetUUID", where, api_.DeviceGetUUID(mig, uuid, sizeof(uuid)));
      uuids[{static_cast<int>(gi), static_cast<int>(ci)}] = FromBuffer(uuid, sizeof(uuid));
    }
    return uuids;
  }

  Result<NvmlGpuInstance> GpuInstanceOf(int gpu, nvmlGpuInstance_t gi, const std::string& where) {
    nvmlGpuInstanceInfo_t info;
    std::memset(&info, 0, sizeof(info));
    TESSERA_NVML_CALL("nvmlGpuInstanceGetInfo", where, api_.GpuInstanceGetInfo(gi, &info));
    NvmlGpuInstance instance;
    instance.id = static_cast<int>(info.id);
    instance.profile_id = static_cast<int>(info.profileId);
    instance.start = static_cast<int>(info.placement.start);
    instance.size = static_cast<int>(info.placement.size);
    (void)gpu;
    return instance;
  }

  Result<nvmlGpuInstance_t> GpuInstanceById(int gpu, nvmlDevice_t device, int gi_id) {
    nvmlGpuInstance_t gi = nullptr;
    TESSERA_NVML_CALL("nvmlDeviceGetGpuInstanceById",
                      Where(gpu, "GPU instance " + std::to_string(gi_id)),
                      api_.DeviceGetGpuInstanceById(device, static_cast<unsigned>(gi_id), &gi));
    return gi;
  }

  NvmlFunctions& api_;
  NvmlError& last_error_;
};

}  // namespace

#undef TESSERA_NVML_CALL

Result<int> Nvml::DeviceCount() {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  unsigned count = 0;
  const nvmlReturn_t r = api_->DeviceGetCount(&count);
  if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetCount_v2", "(" + api_->path + ")", r);
  return static_cast<int>(count);
}

Result<NvmlGpu> Nvml::ReadGpu(int index) {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  TESSERA_ASSIGN_OR_RETURN(nvmlDevice_t device, calls.Device(index));
  NvmlGpu gpu;
  gpu.index = index;
  const std::string where = Where(index);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  nvmlReturn_t r = api_->DeviceGetName(device, name, sizeof(name));
  if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetName", where, r);
  gpu.name = FromBuffer(name, sizeof(name));
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  r = api_->DeviceGetUUID(device, uuid, sizeof(uuid));
  if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetUUID", where, r);
  gpu.uuid = FromBuffer(uuid, sizeof(uuid));
  unsigned current = 0, pending = 0;
  r = api_->DeviceGetMigMode(device, &current, &pending);
  if (r == NVML_ERROR_NOT_SUPPORTED) return gpu;  // no MIG at all
  if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetMigMode", where, r);
  gpu.mig_supported = true;
  gpu.mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
  gpu.mig_pending_enabled = pending == NVML_DEVICE_MIG_ENABLE;
  if (!gpu.mig_enabled) return gpu;

  TESSERA_ASSIGN_OR_RETURN(gpu.profiles, calls.Profiles(index, device, /*with_names=*/true));
  for (NvmlProfile& profile : gpu.profiles) {
    TESSERA_RETURN_IF_ERROR(calls.Placements(index, device, profile));
  }
  TESSERA_ASSIGN_OR_RETURN(auto uuids, calls.MigUuids(index, device));
  for (const NvmlProfile& profile : gpu.profiles) {
    const std::string profile_where = Where(index, "profile " + std::to_string(profile.id));
    std::vector<nvmlGpuInstance_t> gis(std::max(profile.instance_count, 1) + 8);
    unsigned count = 0;
    r = api_->DeviceGetGpuInstances(device, static_cast<unsigned>(profile.id), gis.data(), &count);
    if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetGpuInstances", profile_where, r);
    for (unsigned i = 0; i < count && i < gis.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(NvmlGpuInstance instance,
                               calls.GpuInstanceOf(index, gis[i], profile_where));
      TESSERA_ASSIGN_OR_RETURN(instance.compute_instances,
                               calls.ComputeInstances(index, instance.id, gis[i]));
      for (NvmlComputeInstance& ci : instance.compute_instances) {
        if (auto it = uuids.find({instance.id, ci.id}); it != uuids.end()) ci.uuid = it->second;
      }
      gpu.instances.push_back(std::move(instance));
    }
  }
  std::sort(gpu.instances.begin(), gpu.instances.end(),
            [](const NvmlGpuInstance& a, const NvmlGpuInstance& b) {
              return a.start != b.start ? a.start < b.start : a.id < b.id;
            });
  return gpu;
}

Result<NvmlGpuInstance> Nvml::CreateGpuInstance(int gpu, int profile_id, int start) {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  TESSERA_ASSIGN_OR_RETURN(nvmlDevice_t device, calls.Device(gpu));
  const std::string where =
      Where(gpu, "profile " + std::to_string(profile_id) + ", start " + std::to_string(start));
  // Find the profile's size. With MIG off every enum answers NOT_SUPPORTED:
  // that is reported as NVML's answer, not as an unknown profile.
  std::optional<nvmlGpuInstanceProfileInfo_t> found;
  for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT && !found; ++p) {
    nvmlGpuInstanceProfileInfo_t info;
    std::memset(&info, 0, sizeof(info));
    const nvmlReturn_t r = api_->DeviceGetGpuInstanceProfileInfo(device, p, &info);
    if (IsAbsentProfile(r)) continue;
    if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetGpuInstanceProfileInfo", where, r);
    if (static_cast<int>(info.id) == profile_id) found = info;
  }
  if (!found) {
    unsigned current = 0, pending = 0;
    const nvmlReturn_t r = api_->DeviceGetMigMode(device, &current, &pending);
    if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceGetMigMode", where, r);
    if (current != NVML_DEVICE_MIG_ENABLE) {
      return calls.Fail("nvmlDeviceGetGpuInstanceProfileInfo", where, NVML_ERROR_NOT_SUPPORTED);
    }
    return Status::InvalidArgument("GPU " + std::to_string(gpu) +
                                   " has no GPU instance profile with ID " +
                                   std::to_string(profile_id));
  }
  unsigned count = 0;
  nvmlReturn_t r = api_->DeviceGetGpuInstancePossiblePlacements(
      device, static_cast<unsigned>(profile_id), nullptr, &count);
  if (r != NVML_SUCCESS)
    return calls.Fail("nvmlDeviceGetGpuInstancePossiblePlacements_v2", where, r);
  std::vector<nvmlGpuInstancePlacement_t> placements(std::max(count, 1u));
  r = api_->DeviceGetGpuInstancePossiblePlacements(device, static_cast<unsigned>(profile_id),
                                                   placements.data(), &count);
  if (r != NVML_SUCCESS)
    return calls.Fail("nvmlDeviceGetGpuInstancePossiblePlacements_v2", where, r);
  // The size is the profile's; a start NVML does not list is passed on as
  // given, so that the driver itself refuses it.
  nvmlGpuInstancePlacement_t placement = {static_cast<unsigned>(start),
                                          count > 0 ? placements[0].size : 0};
  if (start < 0) return Status::InvalidArgument("start " + std::to_string(start) + " < 0 " + where);
  nvmlGpuInstance_t gi = nullptr;
  r = api_->DeviceCreateGpuInstanceWithPlacement(device, static_cast<unsigned>(profile_id),
                                                 &placement, &gi);
  if (r != NVML_SUCCESS) return calls.Fail("nvmlDeviceCreateGpuInstanceWithPlacement", where, r);
  return calls.GpuInstanceOf(gpu, gi, where);
}

Result<NvmlComputeInstance> Nvml::CreateComputeInstance(int gpu, int gi_id) {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  TESSERA_ASSIGN_OR_RETURN(nvmlDevice_t device, calls.Device(gpu));
  const std::string where = Where(gpu, "GPU instance " + std::to_string(gi_id));
  TESSERA_ASSIGN_OR_RETURN(nvmlGpuInstance_t gi, calls.GpuInstanceById(gpu, device, gi_id));
  TESSERA_ASSIGN_OR_RETURN(NvmlGpuInstance instance, calls.GpuInstanceOf(gpu, gi, where));
  TESSERA_ASSIGN_OR_RETURN(std::vector<NvmlProfile> profiles,
                           calls.Profiles(gpu, device, /*with_names=*/false));
  int slices = 0;
  for (const NvmlProfile& profile : profiles) {
    if (profile.id == instance.profile_id) slices = profile.slice_count;
  }
  if (slices == 0) {
    return Status::Internal("GPU " + std::to_string(gpu) + " GPU instance " +
                            std::to_string(gi_id) + " has profile " +
                            std::to_string(instance.profile_id) + ", which NVML does not list");
  }
  std::optional<nvmlComputeInstanceProfileInfo_t> full;
  for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT && !full; ++p) {
    nvmlComputeInstanceProfileInfo_t info;
    std::memset(&info, 0, sizeof(info));
    const nvmlReturn_t r = api_->GpuInstanceGetComputeInstanceProfileInfo(
        gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
    if (IsAbsentProfile(r)) continue;
    if (r != NVML_SUCCESS)
      return calls.Fail("nvmlGpuInstanceGetComputeInstanceProfileInfo", where, r);
    if (static_cast<int>(info.sliceCount) == slices) full = info;
  }
  if (!full) {
    return Status::NotFound("GPU " + std::to_string(gpu) + " GPU instance " +
                            std::to_string(gi_id) + ": NVML lists no compute instance profile of " +
                            std::to_string(slices) + " slices");
  }
  nvmlComputeInstance_t ci = nullptr;
  nvmlReturn_t r = api_->GpuInstanceCreateComputeInstance(gi, full->id, &ci);
  if (r != NVML_SUCCESS) return calls.Fail("nvmlGpuInstanceCreateComputeInstance", where, r);
  nvmlComputeInstanceInfo_t info;
  std::memset(&info, 0, sizeof(info));
  r = api_->ComputeInstanceGetInfo(ci, &info);
  if (r != NVML_SUCCESS) return calls.Fail("nvmlComputeInstanceGetInfo_v2", where, r);
  NvmlComputeInstance out{static_cast<int>(info.id), static_cast<int>(info.profileId), slices, ""};
  TESSERA_ASSIGN_OR_RETURN(auto uuids, calls.MigUuids(gpu, device));
  if (auto it = uuids.find({gi_id, out.id}); it != uuids.end()) out.uuid = it->second;
  return out;
}

Status Nvml::DestroyComputeInstance(int gpu, int gi_id, int ci_id) {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  TESSERA_ASSIGN_OR_RETURN(nvmlDevice_t device, calls.Device(gpu));
  const std::string where = Where(
      gpu, "GPU instance " + std::to_string(gi_id) + ", compute instance " + std::to_string(ci_id));
  TESSERA_ASSIGN_OR_RETURN(nvmlGpuInstance_t gi, calls.GpuInstanceById(gpu, device, gi_id));
  for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; ++p) {
    nvmlComputeInstanceProfileInfo_t info;
    std::memset(&info, 0, sizeof(info));
    nvmlReturn_t r = api_->GpuInstanceGetComputeInstanceProfileInfo(
        gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
    if (IsAbsentProfile(r)) continue;
    if (r != NVML_SUCCESS)
      return calls.Fail("nvmlGpuInstanceGetComputeInstanceProfileInfo", where, r);
    std::vector<nvmlComputeInstance_t> cis(std::max(info.instanceCount, 1u) + 8);
    unsigned count = 0;
    r = api_->GpuInstanceGetComputeInstances(gi, info.id, cis.data(), &count);
    if (r != NVML_SUCCESS) return calls.Fail("nvmlGpuInstanceGetComputeInstances", where, r);
    for (unsigned i = 0; i < count && i < cis.size(); ++i) {
      nvmlComputeInstanceInfo_t ci_info;
      std::memset(&ci_info, 0, sizeof(ci_info));
      r = api_->ComputeInstanceGetInfo(cis[i], &ci_info);
      if (r != NVML_SUCCESS) return calls.Fail("nvmlComputeInstanceGetInfo_v2", where, r);
      if (static_cast<int>(ci_info.id) != ci_id) continue;
      r = api_->ComputeInstanceDestroy(cis[i]);
      if (r != NVML_SUCCESS) return calls.Fail("nvmlComputeInstanceDestroy", where, r);
      return Status::Ok();
    }
  }
  return Status::NotFound("GPU " + std::to_string(gpu) + " GPU instance " + std::to_string(gi_id) +
                          " has no compute instance " + std::to_string(ci_id));
}

Status Nvml::DestroyGpuInstance(int gpu, int gi_id) {
  last_error_ = {};
  NvmlCalls calls(*api_, last_error_);
  TESSERA_ASSIGN_OR_RETURN(nvmlDevice_t device, calls.Device(gpu));
  TESSERA_ASSIGN_OR_RETURN(nvmlGpuInstance_t gi, calls.GpuInstanceById(gpu, device, gi_id));
  const nvmlReturn_t r = api_->GpuInstanceDestroy(gi);
  if (r != NVML_SUCCESS) {
    return calls.Fail("nvmlGpuInstanceDestroy", Where(gpu, "GPU instance " + std::to_string(gi_id)),
                      r);
  }
  return Status::Ok();
}

Result<std::vector<NvmlGpu>> ReadInventory(Nvml& nvml) {
  TESSERA_ASSIGN_OR_RETURN(int count, nvml.DeviceCount());
  std::vector<NvmlGpu> gpus;
  for (int i = 0; i < count; ++i) {
    TESSERA_ASSIGN_OR_RETURN(NvmlGpu gpu, nvml.ReadGpu(i));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

namespace {

// The GPU instance starting at `start` of `gpu`, read now; nullopt when none.
Result<std::optional<NvmlGpuInstance>> InstanceAt(Nvml& nvml, int gpu, int start) {
  TESSERA_ASSIGN_OR_RETURN(NvmlGpu read, nvml.ReadGpu(gpu));
  for (NvmlGpuInstance& gi : read.instances) {
    if (gi.start == start) return std::optional<NvmlGpuInstance>(std::move(gi));
  }
  return std::optional<NvmlGpuInstance>();
}

}  // namespace

Result<NvmlGpuInstance> EnsureMigInstance(Nvml& nvml, int gpu, int profile_id, int start) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<NvmlGpuInstance> gi, InstanceAt(nvml, gpu, start));
  if (gi && gi->profile_id != profile_id) {
    return Status::InvalidArgument(
        fmt::format("GPU {}: start {} holds GPU instance {} of profile {}, not profile {}", gpu,
                    start, gi->id, gi->profile_id, profile_id));
  }
  if (!gi) {
    TESSERA_ASSIGN_OR_RETURN(NvmlGpuInstance made, nvml.CreateGpuInstance(gpu, profile_id, start));
    gi = std::move(made);
  }
  if (gi->compute_instances.empty()) {
    TESSERA_ASSIGN_OR_RETURN(NvmlComputeInstance ci, nvml.CreateComputeInstance(gpu, gi->id));
    gi->compute_instances = {ci};
  }
  gi->compute_instances.resize(1);
  return *gi;
}

Status RemoveMigInstance(Nvml& nvml, int gpu, int start) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<NvmlGpuInstance> gi, InstanceAt(nvml, gpu, start));
  if (!gi) return Status::Ok();
  for (const NvmlComputeInstance& ci : gi->compute_instances) {
    TESSERA_RETURN_IF_ERROR(nvml.DestroyComputeInstance(gpu, gi->id, ci.id));
  }
  return nvml.DestroyGpuInstance(gpu, gi->id);
}

}  // namespace tessera
