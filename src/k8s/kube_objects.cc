// Reading Kubernetes objects (Node, Pod) into what the extender needs:
// KubeNodeFromObject, ParseKubeQuantity, PodSliceFromObject and
// PlacementFromPod (scheduler_extender.h).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "tessera/k8s/scheduler_extender.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;
// The first memory slice of a MIG instance (8 slices at most).
constexpr InputRange kStartSlice{0, 7, false, true};

// The string at `key` of object `parent`, or "" when absent; InvalidArgument
// naming `field` when present but not a string.
Result<std::string> OptionalString(const json& parent, const char* key, const std::string& field) {
  if (!parent.is_object() || !parent.contains(key) || parent[key].is_null()) return std::string();
  if (!parent[key].is_string()) return Status::InvalidArgument(field + ": must be a string");
  return parent[key].get<std::string>();
}

const json& Member(const json& parent, const char* key) {
  static const json kNull;
  if (!parent.is_object()) return kNull;
  const auto it = parent.find(key);
  return it == parent.end() ? kNull : *it;
}

// An integer label or annotation value within `range`.
Result<int> ParseWholeValue(const std::string& text, const InputRange& range,
                            const std::string& field) {
  const std::optional<double> value = ToDouble(text);
  if (!value || !range.Contains(*value)) {
    return Status::InvalidArgument(field + ": " + OutOfRange(range, QuoteForMessage(text)));
  }
  return static_cast<int>(*value);
}

// CPU (milli-cores) and memory (MiB) of a resource list ("cpu", "memory").
Status AddCpuMemory(const json& list, const std::string& field, double& cpu_milli,
                    double& memory_mib) {
  if (list.is_null()) return Status::Ok();
  if (!list.is_object()) return Status::InvalidArgument(field + ": must be an object");
  for (const auto& [name, value] : list.items()) {
    if (name != "cpu" && name != "memory") continue;
    if (!value.is_string() && !value.is_number()) {
      return Status::InvalidArgument(field + "." + name + ": must be a quantity");
    }
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    TESSERA_ASSIGN_OR_RETURN(const double amount, ParseKubeQuantity(text, field + "." + name));
    if (name == "cpu")
      cpu_milli += amount * 1000;
    else
      memory_mib += amount / kMiB;
  }
  return Status::Ok();
}

// The pod's CPU and memory requests, summed over its containers.
Status PodCpuMemory(const json& pod, double& cpu_milli, double& memory_mib) {
  const json& containers = Member(Member(pod, "spec"), "containers");
  if (!containers.is_array()) return Status::Ok();
  for (size_t c = 0; c < containers.size(); ++c) {
    const std::string field = "spec.containers[" + std::to_string(c) + "].resources.requests";
    if (Status s = AddCpuMemory(Member(Member(containers[c], "resources"), "requests"), field,
                                cpu_milli, memory_mib);
        !s.ok())
      return s;
  }
  return Status::Ok();
}

struct PodIdentity {
  std::string uid, ns, name;
};

Result<PodIdentity> IdentityOf(const json& pod) {
  if (!pod.is_object()) return Status::InvalidArgument("Pod: must be an object");
  const json& metadata = Member(pod, "metadata");
  PodIdentity id;
  TESSERA_ASSIGN_OR_RETURN(id.uid, OptionalString(metadata, "uid", "Pod.metadata.uid"));
  TESSERA_ASSIGN_OR_RETURN(id.ns, OptionalString(metadata, "namespace", "Pod.metadata.namespace"));
  TESSERA_ASSIGN_OR_RETURN(id.name, OptionalString(metadata, "name", "Pod.metadata.name"));
  if (id.name.empty()) return Status::InvalidArgument("Pod.metadata.name: missing");
  if (id.ns.empty()) id.ns = "default";
  return id;
}

}  // namespace

Result<double> ParseKubeQuantity(std::string_view text, std::string_view field) {
  const std::string where(field);
  // Suffixes of resource.Quantity: binary (Ki..Ei), decimal (k..E), milli.
  static const std::pair<std::string_view, double> kSuffixes[] = {
      {"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50},
      {"Ei", 0x1p60}, {"n", 1e-9},    {"u", 1e-6},    {"m", 1e-3},    {"k", 1e3},
      {"M", 1e6},     {"G", 1e9},     {"T", 1e12},    {"P", 1e15},    {"E", 1e18}};
  std::string_view number = text;
  double scale = 1;
  for (const auto& [suffix, factor] : kSuffixes) {
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.remove_suffix(suffix.size());
      scale = factor;
      break;
    }
  }
  const std::optional<double> value = ToDouble(number);
  if (!value || *value < 0 || !std::isfinite(*value * scale)) {
    return Status::InvalidArgument(
        where + ": not a Kubernetes quantity: " + QuoteForMessage(std::string(text)));
  }
  return *value * scale;
}

Result<std::optional<KubeNode>> KubeNodeFromObject(const json& node) {
  if (!node.is_object()) return Status::InvalidArgument("Node: must be an object");
  const json& metadata = Member(node, "metadata");
  KubeNode result;
  TESSERA_ASSIGN_OR_RETURN(result.name, OptionalString(metadata, "name", "Node.metadata.name"));
  if (result.name.empty()) return Status::InvalidArgument("Node.metadata.name: missing");
  const std::string label_field = "Node " + result.name + ": label " + std::string(kGpusLabel);
  const json& labels = Member(metadata, "labels");
  const std::string label_key(kGpusLabel);
  if (Member(labels, label_key.c_str()).is_null()) return std::optional<KubeNode>();
  TESSERA_ASSIGN_OR_RETURN(const std::string gpus,
                           OptionalString(labels, label_key.c_str(), label_field));
  TESSERA_ASSIGN_OR_RETURN(result.gpus, ParseWholeValue(gpus, limits::kGpusPerHost, label_field));
  // Allocatable, else capacity; a node that states neither limits nothing.
  const json& status = Member(node, "status");
  const json* resources = &Member(status, "allocatable");
  std::string field = "Node " + result.name + ": status.allocatable";
  if (resources->is_null()) {
    resources = &Member(status, "capacity");
    field = "Node " + result.name + ": status.capacity";
  }
  if (resources->is_null() || !resources->contains("cpu")) {
    result.cpu_milli = std::numeric_limits<double>::infinity();
  }
  if (resources->is_null() || !resources->contains("memory")) {
    result.memory_mib = std::numeric_limits<double>::infinity();
  }
  if (Status s = AddCpuMemory(*resources, field, result.cpu_milli, result.memory_mib); !s.ok())
    return s;
  return std::optional<KubeNode>(std::move(result));
}

Result<std::optional<PodSlice>> PodSliceFromObject(const json& pod) {
  TESSERA_ASSIGN_OR_RETURN(const PodIdentity id, IdentityOf(pod));
  PodSlice slice{id.uid, id.ns, id.name, "", 0, 0};
  const std::string who = "pod " + id.ns + "/" + id.name;
  double count = 0;
  const json& containers = Member(Member(pod, "spec"), "containers");
  if (!containers.is_null() && !containers.is_array()) {
    return Status::InvalidArgument(who + ": spec.containers must be an array");
  }
  for (size_t c = 0; containers.is_array() && c < containers.size(); ++c) {
    const json& resources = Member(containers[c], "resources");
    // Extended resources, each by its limit (which is its request) or, when
    // it has none, by its request.
    std::map<std::string, const json*> asked;
    for (const char* list_name : {"requests", "limits"}) {
      const json& list = Member(resources, list_name);
      if (!list.is_object()) continue;
      for (auto it = list.begin(); it != list.end(); ++it) {
        if (it.key().starts_with(kMigResourcePrefix)) asked[it.key()] = &it.value();
      }
    }
    for (const auto& [name, value] : asked) {
      const std::string field =
          who + ": spec.containers[" + std::to_string(c) + "].resources." + name;
      const std::string profile = name.substr(kMigResourcePrefix.size());
      if (!slice.profile.empty() && slice.profile != profile) {
        return Status::InvalidArgument(who + ": asks for two MIG profiles (" + slice.profile +
                                       " and " + profile + "); a pod gets one slice");
      }
      slice.profile = profile;
      const std::string text = value->is_string() ? value->get<std::string>() : value->dump();
      TESSERA_ASSIGN_OR_RETURN(const double amount, ParseKubeQuantity(text, field));
      count += amount;
    }
  }
  if (slice.profile.empty()) return std::optional<PodSlice>();
  if (count != 1) {
    return Status::InvalidArgument(who + ": asks for " + fmt::format("{:g}", count) + " " +
                                   std::string(kMigResourcePrefix) + slice.profile +
                                   " slices; a pod gets exactly one");
  }
  if (Status s = PodCpuMemory(pod, slice.cpu_milli, slice.memory_mib); !s.ok()) {
    return s.WithContext(who);
  }
  return std::optional<PodSlice>(std::move(slice));
}

Result<std::optional<PodPlacement>> PlacementFromPod(const json& pod) {
  TESSERA_ASSIGN_OR_RETURN(const PodIdentity id, IdentityOf(pod));
  const std::string who = "pod " + id.ns + "/" + id.name;
  const json& annotations = Member(Member(pod, "metadata"), "annotations");
  const std::string gpu_key(kGpuAnnotation), start_key(kStartAnnotation),
      profile_key(kProfileAnnotation);
  TESSERA_ASSIGN_OR_RETURN(const std::string gpu,
                           OptionalString(annotations, gpu_key.c_str(), who + ": " + gpu_key));
  TESSERA_ASSIGN_OR_RETURN(const std::string start,
                           OptionalString(annotations, start_key.c_str(), who + ": " + start_key));
  TESSERA_ASSIGN_OR_RETURN(
      const std::string profile,
      OptionalString(annotations, profile_key.c_str(), who + ": " + profile_key));
  if (gpu.empty() && start.empty() && profile.empty()) return std::optional<PodPlacement>();
  if (gpu.empty() || start.empty() || profile.empty()) {
    return Status::InvalidArgument(who + ": Tessera's annotations are partial (" + gpu_key + ", " +
                                   start_key + " and " + profile_key + " go together)");
  }
  TESSERA_ASSIGN_OR_RETURN(const std::string node, OptionalString(Member(pod, "spec"), "nodeName",
                                                                  who + ": spec.nodeName"));
  TESSERA_ASSIGN_OR_RETURN(const std::string phase,
                           OptionalString(Member(pod, "status"), "phase", who + ": status.phase"));
  if (node.empty() || phase == "Succeeded" || phase == "Failed") {
    return std::optional<PodPlacement>();
  }
  PodPlacement placement{id.uid, id.ns, id.name, node, 0, 0, profile, 0, 0};
  TESSERA_ASSIGN_OR_RETURN(placement.gpu,
                           ParseWholeValue(gpu, limits::kGpusPerHost, who + ": " + gpu_key));
  TESSERA_ASSIGN_OR_RETURN(placement.start,
                           ParseWholeValue(start, kStartSlice, who + ": " + start_key));
  if (Status s = PodCpuMemory(pod, placement.cpu_milli, placement.memory_mib); !s.ok()) {
    return s.WithContext(who);
  }
  return std::optional<PodPlacement>(std::move(placement));
}

}  // namespace tessera
