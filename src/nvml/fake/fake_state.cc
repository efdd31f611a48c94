#include "nvml/fake/fake_state.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "tessera/util/text_io.h"

namespace tessera::fake_nvml {
namespace {

using nlohmann::json;

// A whole decimal number in [lo, hi], or nullopt.
std::optional<long> ToLong(std::string_view s, long lo, long hi) {
  long value = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (s.empty() || ec != std::errc() || ptr != end || value < lo || value > hi) return std::nullopt;
  return value;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(sep, from);
    out.push_back(Trim(s.substr(from, at == std::string_view::npos ? s.npos : at - from)));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

bool IsInt(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number_integer();
}

}  // namespace

FakeGpuInstance* FakeGpu::FindGpuInstance(int id) {
  for (FakeGpuInstance& gi : gpu_instances) {
    if (gi.id == id) return &gi;
  }
  return nullptr;
}

std::string UuidShaped(std::string_view seed) {
  auto fnv = [&](std::uint64_t basis) {
    std::uint64_t h = basis;
    for (unsigned char c : seed) h = (h ^ c) * 1099511628211ULL;
    return h;
  };
  const std::uint64_t a = fnv(14695981039346656037ULL), b = fnv(0x9e3779b97f4a7c15ULL);
  char text[40];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return text;
}

unsigned GpuInstanceProfileEnum(const MigProfile& p) {
  switch (p.compute_slices) {
    case 1:
      if (p.media_extensions) return NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1;
      return p.memory_slices >= 2 ? NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2
                                  : NVML_GPU_INSTANCE_PROFILE_1_SLICE;
    case 2:
      return p.media_extensions ? NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1
                                : NVML_GPU_INSTANCE_PROFILE_2_SLICE;
    case 3:
      return NVML_GPU_INSTANCE_PROFILE_3_SLICE;
    case 4:
      return NVML_GPU_INSTANCE_PROFILE_4_SLICE;
    case 7:
      return NVML_GPU_INSTANCE_PROFILE_7_SLICE;
    default:
      return NVML_GPU_INSTANCE_PROFILE_COUNT;  // none
  }
}

const MigProfile* ProfileByEnum(const GpuModel& gpu, unsigned profile_enum) {
  for (const MigProfile& p : gpu.profiles) {
    if (GpuInstanceProfileEnum(p) == profile_enum) return &p;
  }
  return nullptr;
}

const MigProfile* ProfileById(const GpuModel& gpu, int id) {
  for (const MigProfile& p : gpu.profiles) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

int ComputeInstanceProfileEnum(int slices) {
  switch (slices) {
    case 1:
      return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
    case 2:
      return NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE;
    case 3:
      return NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE;
    case 4:
      return NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE;
    case 7:
      return NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE;
    default:
      return -1;
  }
}

std::optional<FakeMachine> ParseMachine(std::string_view text) {
  const json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object() || !root.contains("gpus") ||
      !root.at("gpus").is_array()) {
    return std::nullopt;
  }
  FakeMachine machine;
  for (const json& g : root.at("gpus")) {
    if (!g.is_object() || !g.contains("model") || !g.at("model").is_string() ||
        !g.contains("uuid") || !g.at("uuid").is_string() || !IsInt(g, "mig_mode") ||
        !IsInt(g, "pending_mig_mode") || !g.contains("gpu_instances") ||
        !g.at("gpu_instances").is_array()) {
      return std::nullopt;
    }
    auto model = FindMigGpu(g.at("model").get<std::string>());
    if (!model.ok()) return std::nullopt;
    FakeGpu gpu;
    gpu.model = *model;
    gpu.uuid = g.at("uuid").get<std::string>();
    gpu.mig_mode = g.at("mig_mode").get<int>();
    gpu.pending_mig_mode = g.at("pending_mig_mode").get<int>();
    if ((gpu.mig_mode != 0 && gpu.mig_mode != 1) ||
        (gpu.pending_mig_mode != 0 && gpu.pending_mig_mode != 1)) {
      return std::nullopt;
    }
    std::set<int> gi_ids;
    for (const json& i : g.at("gpu_instances")) {
      if (!IsInt(i, "id") || !IsInt(i, "profile_id") || !IsInt(i, "start") || !IsInt(i, "size") ||
          !i.contains("compute_instances") || !i.at("compute_instances").is_array()) {
        return std::nullopt;
      }
      FakeGpuInstance gi{i.at("id").get<int>(),
                         i.at("profile_id").get<int>(),
                         i.at("start").get<int>(),
                         i.at("size").get<int>(),
                         {}};
      if (gi.id < 1 || !gi_ids.insert(gi.id).second || !ProfileById(*gpu.model, gi.profile_id)) {
        return std::nullopt;
      }
      std::set<int> ci_ids;
      for (const json& c : i.at("compute_instances")) {
        if (!IsInt(c, "id") || !IsInt(c, "profile_id") || !c.contains("uuid") ||
            !c.at("uuid").is_string()) {
          return std::nullopt;
        }
        FakeComputeInstance ci{c.at("id").get<int>(), c.at("profile_id").get<int>(),
                               c.at("uuid").get<std::string>()};
        if (ci.id < 0 || !ci_ids.insert(ci.id).second) return std::nullopt;
        gi.compute_instances.push_back(std::move(ci));
      }
      gpu.gpu_instances.push_back(std::move(gi));
    }
    machine.gpus.push_back(std::move(gpu));
  }
  return machine;
}

std::string SerializeMachine(const FakeMachine& machine) {
  json gpus = json::array();
  for (const FakeGpu& gpu : machine.gpus) {
    json gis = json::array();
    for (const FakeGpuInstance& gi : gpu.gpu_instances) {
      json cis = json::array();
      for (const FakeComputeInstance& ci : gi.compute_instances) {
        cis.push_back({{"id", ci.id}, {"profile_id", ci.profile_id}, {"uuid", ci.uuid}});
      }
      gis.push_back({{"id", gi.id},
                     {"profile_id", gi.profile_id},
                     {"start", gi.start},
                     {"size", gi.size},
                     {"compute_instances", std::move(cis)}});
    }
    gpus.push_back({{"model", gpu.model->name},
                    {"uuid", gpu.uuid},
                    {"mig_mode", gpu.mig_mode},
                    {"pending_mig_mode", gpu.pending_mig_mode},
                    {"gpu_instances", std::move(gis)}});
  }
  return json{{"gpus", std::move(gpus)}}.dump(1) + "\n";
}

Result<FakeMachine> MachineFromDevices(std::string_view devices) {
  FakeMachine machine;
  for (std::string_view item : Split(devices, ',')) {
    std::string_view name = item;
    int mode = NVML_DEVICE_MIG_ENABLE;
    if (const size_t colon = name.find(':'); colon != name.npos) {
      if (name.substr(colon + 1) != "mig-off") {
        return Status::InvalidArgument("'" + EscapeForMessage(item) +
                                       "': the only suffix is ':mig-off'");
      }
      mode = NVML_DEVICE_MIG_DISABLE;
      name = name.substr(0, colon);
    }
    long count = 1;
    if (const size_t star = name.find('*'); star != name.npos) {
      auto n = ToLong(name.substr(star + 1), 1, 64);
      if (!n) {
        return Status::InvalidArgument("'" + EscapeForMessage(item) +
                                       "': the count after '*' must be 1 to 64");
      }
      count = *n;
      name = name.substr(0, star);
    }
    auto model = FindMigGpu(name);
    if (!model.ok()) return Status::InvalidArgument(model.status().message());
    for (long i = 0; i < count; ++i) {
      FakeGpu gpu;
      gpu.model = *model;
      const size_t index = machine.gpus.size();
      gpu.uuid =
          "GPU-" + UuidShaped("tessera-fake-gpu/" + std::to_string(index) + "/" + gpu.model->name);
      gpu.mig_mode = gpu.pending_mig_mode = mode;
      machine.gpus.push_back(std::move(gpu));
    }
  }
  return machine;
}

nvmlReturn_t CreateGpuInstance(FakeGpu& gpu, unsigned profile_id,
                               const nvmlGpuInstancePlacement_t& placement, int* id) {
  const MigProfile* profile = ProfileById(*gpu.model, static_cast<int>(profile_id));
  if (!profile || static_cast<int>(placement.size) != profile->memory_slices ||
      std::find(profile->starts.begin(), profile->starts.end(),
                static_cast<int>(placement.start)) == profile->starts.end()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const int start = static_cast<int>(placement.start);
  const int end = start + profile->memory_slices;
  int same_profile = 0, media = 0, compute = profile->compute_slices;
  for (const FakeGpuInstance& gi : gpu.gpu_instances) {
    if (gi.start < end && start < gi.start + gi.size) return NVML_ERROR_INSUFFICIENT_RESOURCES;
    const MigProfile* other = ProfileById(*gpu.model, gi.profile_id);
    if (gi.profile_id == profile->id) ++same_profile;
    if (other && other->media_extensions) ++media;
    if (other) compute += other->compute_slices;
  }
  if (same_profile >= profile->max_instances) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  if (profile->media_extensions && media > 0) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  if (compute > gpu.model->compute_slices) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  int new_id = 1;
  while (gpu.FindGpuInstance(new_id)) ++new_id;
  gpu.gpu_instances.push_back({new_id, profile->id, start, profile->memory_slices, {}});
  *id = new_id;
  return NVML_SUCCESS;
}

nvmlReturn_t CreateComputeInstance(FakeGpu& gpu, FakeGpuInstance& gi, unsigned ci_profile,
                                   int* id) {
  const MigProfile* profile = ProfileById(*gpu.model, gi.profile_id);
  if (!profile ||
      static_cast<int>(ci_profile) != ComputeInstanceProfileEnum(profile->compute_slices)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!gi.compute_instances.empty()) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  int new_id = 0;
  auto taken = [&](int candidate) {
    return std::any_of(gi.compute_instances.begin(), gi.compute_instances.end(),
                       [&](const FakeComputeInstance& ci) { return ci.id == candidate; });
  };
  while (taken(new_id)) ++new_id;
  gi.compute_instances.push_back(
      {new_id, static_cast<int>(ci_profile),
       "MIG-" + UuidShaped(gpu.uuid + "/" + std::to_string(gi.id) + "/" + std::to_string(new_id))});
  *id = new_id;
  return NVML_SUCCESS;
}

const std::vector<std::string_view>& ExportedFunctions() {
  static const std::vector<std::string_view> names = {
      "nvmlInit_v2",
      "nvmlShutdown",
      "nvmlErrorString",
      "nvmlDeviceGetCount_v2",
      "nvmlDeviceGetHandleByIndex_v2",
      "nvmlDeviceGetName",
      "nvmlDeviceGetUUID",
      "nvmlDeviceSetMigMode",
      "nvmlDeviceGetMigMode",
      "nvmlDeviceGetGpuInstanceProfileInfo",
      "nvmlDeviceGetGpuInstanceProfileInfoV",
      "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
      "nvmlDeviceCreateGpuInstanceWithPlacement",
      "nvmlGpuInstanceDestroy",
      "nvmlDeviceGetGpuInstances",
      "nvmlDeviceGetGpuInstanceById",
      "nvmlGpuInstanceGetInfo",
      "nvmlGpuInstanceGetComputeInstanceProfileInfo",
      "nvmlGpuInstanceCreateComputeInstance",
      "nvmlComputeInstanceDestroy",
      "nvmlGpuInstanceGetComputeInstances",
      "nvmlComputeInstanceGetInfo_v2",
      "nvmlDeviceGetMaxMigDeviceCount",
      "nvmlDeviceGetMigDeviceHandleByIndex",
      "nvmlDeviceGetGpuInstanceId",
      "nvmlDeviceGetComputeInstanceId",
  };
  return names;
}

namespace {

Status CheckFunction(std::string_view variable, std::string_view function) {
  const auto& names = ExportedFunctions();
  if (std::find(names.begin(), names.end(), function) != names.end()) return Status::Ok();
  return Status::InvalidArgument(std::string(variable) + ": unknown function '" +
                                 EscapeForMessage(function) + "' (the fake exports nvmlInit_v2, " +
                                 "nvmlDeviceCreateGpuInstanceWithPlacement, ...)");
}

}  // namespace

Status ParseFailSetting(std::string_view value, std::vector<FailRule>* rules) {
  constexpr std::string_view kVar = "TESSERA_FAKE_NVML_FAIL";
  for (std::string_view item : Split(value, ',')) {
    const std::vector<std::string_view> parts = Split(item, ':');
    const std::string quoted = "'" + EscapeForMessage(item) + "'";
    if (parts.size() < 2 || parts.size() > 3) {
      return Status::InvalidArgument(std::string(kVar) + ": " + quoted +
                                     " is not <function>:<n>[+][:<ERROR>]");
    }
    TESSERA_RETURN_IF_ERROR(CheckFunction(kVar, parts[0]));
    FailRule rule;
    rule.function = std::string(parts[0]);
    std::string_view n = parts[1];
    if (!n.empty() && n.back() == '+') {
      rule.onward = true;
      n.remove_suffix(1);
    }
    auto nth = ToLong(n, 1, 1000000000);
    if (!nth) {
      return Status::InvalidArgument(std::string(kVar) + ": " + quoted +
                                     ": the call number must be a whole number >= 1");
    }
    rule.nth = *nth;
    if (parts.size() == 3) {
      std::string name(parts[2]);
      if (name.rfind("NVML_ERROR_", 0) != 0) name = "NVML_ERROR_" + name;
      const nvml_api::ReturnCodeName* found = nullptr;
      for (const nvml_api::ReturnCodeName& entry : nvml_api::kReturnCodes) {
        if (entry.name == name) found = &entry;
      }
      if (!found) {
        return Status::InvalidArgument(std::string(kVar) + ": " + quoted + ": unknown error '" +
                                       EscapeForMessage(parts[2]) +
                                       "' (e.g. INSUFFICIENT_RESOURCES, NVML_ERROR_GPU_IS_LOST)");
      }
      rule.code = static_cast<nvmlReturn_t>(found->code);
    }
    rules->push_back(std::move(rule));
  }
  return Status::Ok();
}

Status ParseLatencySetting(std::string_view value, FakeSettings* settings) {
  constexpr std::string_view kVar = "TESSERA_FAKE_NVML_LATENCY_MS";
  constexpr long kMaxMs = 600000;
  if (auto all = ToLong(Trim(value), 0, kMaxMs)) {
    settings->latency_all_ms = *all;
    return Status::Ok();
  }
  for (std::string_view item : Split(value, ',')) {
    const std::vector<std::string_view> parts = Split(item, ':');
    const std::string quoted = "'" + EscapeForMessage(item) + "'";
    if (parts.size() != 2) {
      return Status::InvalidArgument(std::string(kVar) + ": " + quoted +
                                     " is not <ms> or <function>:<ms>");
    }
    TESSERA_RETURN_IF_ERROR(CheckFunction(kVar, parts[0]));
    auto ms = ToLong(parts[1], 0, kMaxMs);
    if (!ms) {
      return Status::InvalidArgument(std::string(kVar) + ": " + quoted +
                                     ": milliseconds must be a whole number 0 to 600000");
    }
    settings->latency[std::string(parts[0])] = *ms;
  }
  return Status::Ok();
}

}  // namespace tessera::fake_nvml
