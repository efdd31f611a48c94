// BuildDeployArtifacts (deploy_artifacts.h): the node plans, Triton model
// configurations, mig-parted's config and the Kubernetes manifests of a MIG
// deployment. Kubernetes objects are built as ordered JSON trees and written
// as block YAML by YamlText below (every string double-quoted in JSON's
// escapes, which YAML's double-quoted style reads alike), so output is
// deterministic and needs no YAML library.
#include "tessera/emit/deploy_artifacts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "emit/router_config.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr int kHttpPort = 8000;  // Triton's defaults: each pod has its own network
constexpr int kGrpcPort = 8001;
constexpr int kMetricsPort = 8002;

// FNV-1a, 32 bits: stable across runs and platforms.
uint32_t StableHash(std::string_view text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// ---- YAML ---------------------------------------------------------------------

std::string Quoted(const OrderedJson& j) {
  return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

// A key written plain when it cannot be read as anything but a string.
std::string YamlKey(const std::string& key) {
  const bool plain = !key.empty() && std::isalpha(static_cast<unsigned char>(key[0])) &&
                     std::all_of(key.begin(), key.end(),
                                 [](char c) {
                                   return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                                          c == '_' || c == '.' || c == '/';
                                 }) &&
                     key != "true" && key != "false" && key != "null" && key != "yes" &&
                     key != "no" && key != "on" && key != "off" && key != "y" && key != "n";
  return plain ? key : Quoted(key);
}

bool IsScalar(const OrderedJson& j) {
  return !j.is_structured() || j.empty();  // {} and [] are written inline
}

std::string Scalar(const OrderedJson& j) {
  if (j.is_object()) return "{}";
  if (j.is_array()) return "[]";
  return Quoted(j);  // strings quoted; numbers, booleans and null as JSON writes them
}

void WriteYaml(const OrderedJson& j, int indent, std::string& out);

// The entries of a mapping, each on its own line at `indent`.
void WriteMapping(const OrderedJson& j, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += pad + YamlKey(it.key()) + ":";
    if (IsScalar(it.value())) {
      out += " " + Scalar(it.value()) + "\n";
    } else {
      out += "\n";
      WriteYaml(it.value(), it.value().is_array() ? indent : indent + 2, out);
    }
  }
}

void WriteYaml(const OrderedJson& j, int indent, std::string& out) {
  if (j.is_object()) return WriteMapping(j, indent, out);
  const std::string pad(indent, ' ');
  for (const OrderedJson& item : j) {
    if (IsScalar(item)) {
      out += pad + "- " + Scalar(item) + "\n";
      continue;
    }
    // "- " then the item's first line; the rest indented two more.
    std::string nested;
    WriteYaml(item, indent + 2, nested);
    out += pad + "- " + nested.substr(static_cast<size_t>(indent + 2));
  }
}

std::string YamlText(const OrderedJson& j, std::string_view comment) {
  std::string out;
  if (!comment.empty()) out += std::string(comment);
  WriteYaml(j, 0, out);
  return out;
}

constexpr std::string_view kManifestHeader =
    "# Written by `tessera deploy` (docs/deployment.md); regenerate rather than edit.\n";

// ---- Checks -------------------------------------------------------------------

bool IsAbsolutePath(std::string_view p) {
  return !p.empty() && p.front() == '/' && std::none_of(p.begin(), p.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

Status CheckServiceDirectoryName(std::string_view name) {
  const bool bad =
      name.empty() || name == "." || name == ".." ||
      std::any_of(name.begin(), name.end(), [](char c) {
        return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
  if (!bad) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "service {}: cannot name a Triton model directory (empty, \".\", \"..\", or holds '/', "
      "'\\\\' or a control character)",
      QuoteForMessage(name)));
}

Status CheckOptions(const DeployArtifactOptions& o) {
  if (!IsDns1123Label(o.namespace_name)) {
    return Status::InvalidArgument(fmt::format(
        "namespace {} is not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', a letter or digit "
        "at each end)",
        QuoteForMessage(o.namespace_name)));
  }
  for (const auto& [what, image] :
       {std::pair<std::string_view, const std::string&>{"agent image", o.agent_image},
        {"triton image", o.triton_image},
        {"router image", o.router_image}}) {
    if (image.empty() || std::any_of(image.begin(), image.end(), [](char c) {
          return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
        })) {
      return Status::InvalidArgument(
          fmt::format("{} {} must be non-empty, without spaces or control characters", what,
                      QuoteForMessage(image)));
    }
  }
  for (const auto& [what, dir] : {std::pair<std::string_view, const std::string&>{
                                      "driver library directory", o.driver_lib_dir},
                                  {"state directory", o.state_dir},
                                  {"model repository", o.deploy.serving.model_repository},
                                  {"MPS root", o.deploy.serving.mps_root}}) {
    if (!IsAbsolutePath(dir)) {
      return Status::InvalidArgument(fmt::format(
          "{} {} must be an absolute path without control characters", what, QuoteForMessage(dir)));
    }
  }
  return Status::Ok();
}

// ---- Triton -------------------------------------------------------------------

// A protobuf text-format string literal.
std::string PbString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\{:03o}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// ---- Kubernetes -----------------------------------------------------------------

// A POSIX shell word: single-quoted, with ' written as '\''.
std::string ShellWord(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct K8sNames {
  std::map<std::string, std::string> service;  // service -> label
};

OrderedJson HostPathVolume(const std::string& name, const std::string& path,
                           const std::string& type) {
  return {{"name", name}, {"hostPath", {{"path", path}, {"type", type}}}};
}

// Where the agent's container sees the host's driver library folder: apart
// from the container's own libraries, which a mount over the same path
// (/usr/lib/x86_64-linux-gnu) would hide.
constexpr const char* kDriverLibMount = "/run/nvidia/driver-lib";

OrderedJson Mount(const std::string& name, const std::string& path, bool read_only) {
  OrderedJson m = {{"name", name}, {"mountPath", path}};
  if (read_only) m["readOnly"] = true;
  return m;
}

OrderedJson Labels(const std::string& component) {
  return {{"app.kubernetes.io/name", "tessera"}, {"app.kubernetes.io/component", component}};
}

std::string NamespaceYaml(const DeployArtifactOptions& o) {
  const OrderedJson ns = {
      {"apiVersion", "v1"},
      {"kind", "Namespace"},
      {"metadata", {{"name", o.namespace_name}, {"labels", Labels("namespace")}}}};
  return YamlText(ns, kManifestHeader);
}

std::string ConfigMapName(const NodePlan& plan) { return "tessera-nodeplan-" + plan.node; }

std::string NodePlanConfigMapYaml(const NodePlan& plan, const DeployArtifactOptions& o) {
  const OrderedJson cm = {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata",
                           {{"name", KubernetesName(ConfigMapName(plan))},
                            {"namespace", o.namespace_name},
                            {"labels", Labels("nodeplan")}}},
                          {"data", {{"nodeplan.json", FormatNodePlanJson(plan)}}}};
  return YamlText(cm, kManifestHeader);
}

std::string AgentYaml(const std::vector<NodePlan>& plans, const DeployArtifactOptions& o) {
  OrderedJson sources = OrderedJson::array();
  OrderedJson hostnames = OrderedJson::array();
  for (const NodePlan& plan : plans) {
    sources.push_back({{"configMap",
                        {{"name", KubernetesName(ConfigMapName(plan))},
                         {"items", OrderedJson::array({{{"key", "nodeplan.json"},
                                                        {"path", plan.node + ".json"}}})}}}});
    hostnames.push_back(plan.node);
  }
  const std::string& mps_root = o.deploy.serving.mps_root;
  OrderedJson labels = Labels("agent");
  const OrderedJson container = {
      {"name", "agent"},
      {"image", o.agent_image},
      {"args",
       {"agent", "--node", "$(NODE_NAME)", "--plan", "/etc/tessera/nodeplans/$(NODE_NAME).json",
        "--state-dir", o.state_dir, "--no-serving", "--nvml",
        std::string(kDriverLibMount) + "/libnvidia-ml.so.1"}},
      {"env",
       OrderedJson::array({{{"name", "NODE_NAME"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}})},
      {"securityContext", {{"privileged", true}}},
      {"volumeMounts",
       OrderedJson::array({Mount("nodeplans", "/etc/tessera/nodeplans", true),
                           Mount("state", o.state_dir, false), Mount("mps", mps_root, false),
                           Mount("dev", "/dev", false),
                           Mount("nvidia-caps", "/proc/driver/nvidia", true),
                           Mount("driver-lib", kDriverLibMount, true)})}};
  const OrderedJson ds = {
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata",
       {{"name", "tessera-agent"}, {"namespace", o.namespace_name}, {"labels", labels}}},
      {"spec",
       {{"selector", {{"matchLabels", labels}}},
        {"template",
         {{"metadata", {{"labels", labels}}},
          {"spec",
           {{"hostPID", false},
            {"hostIPC", true},
            {"affinity",
             {{"nodeAffinity",
               {{"requiredDuringSchedulingIgnoredDuringExecution",
                 {{"nodeSelectorTerms",
                   OrderedJson::array({{{"matchExpressions",
                                         OrderedJson::array({{{"key", "kubernetes.io/hostname"},
                                                              {"operator", "In"},
                                                              {"values", hostnames}}})}}})}}}}}}},
            {"containers", OrderedJson::array({container})},
            {"volumes", OrderedJson::array(
                            {{{"name", "nodeplans"}, {"projected", {{"sources", sources}}}},
                             HostPathVolume("state", o.state_dir, "DirectoryOrCreate"),
                             HostPathVolume("mps", mps_root, "DirectoryOrCreate"),
                             HostPathVolume("dev", "/dev", "Directory"),
                             HostPathVolume("nvidia-caps", "/proc/driver/nvidia", "Directory"),
                             HostPathVolume("driver-lib", o.driver_lib_dir, "Directory")})}}}}}}}};
  return YamlText(ds, kManifestHeader);
}

// The model's Service: port 8000 of the router's frontend for the service.
std::string ServiceYaml(const std::string& label, const DeployArtifactOptions& o,
                        const std::string& service, int router_port) {
  OrderedJson labels = Labels("serving");
  labels["tessera.io/service"] = label;
  const OrderedJson svc = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", KubernetesName("tessera-" + label)},
        {"namespace", o.namespace_name},
        {"labels", labels},
        {"annotations", {{"tessera.io/service-name", service}}}}},
      {"spec",
       {{"selector", Labels("router")},
        {"ports", OrderedJson::array(
                      {{{"name", "http"}, {"port", kHttpPort}, {"targetPort", router_port}}})}}}};
  return YamlText(svc, kManifestHeader);
}

// One serving process's own Service, the router's address for it.
std::string ProcessServiceYaml(const std::string& name, const OrderedJson& selector,
                               const DeployArtifactOptions& o) {
  const OrderedJson svc = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", name}, {"namespace", o.namespace_name}, {"labels", selector}}},
      {"spec",
       {{"selector", selector},
        {"ports",
         OrderedJson::array(
             {{{"name", "http"}, {"port", kHttpPort}, {"targetPort", kHttpPort}},
              {{"name", "metrics"}, {"port", kMetricsPort}, {"targetPort", kMetricsPort}}})}}}};
  return YamlText(svc, kManifestHeader);
}

constexpr std::string_view kRouterName = "tessera-router";
constexpr std::string_view kRouterConfigDir = "/usr/local/etc/haproxy";

std::string RouterConfigMapYaml(const std::string& config, const DeployArtifactOptions& o) {
  const OrderedJson cm = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       {{"name", kRouterName}, {"namespace", o.namespace_name}, {"labels", Labels("router")}}},
      {"data", {{"haproxy.cfg", config}}}};
  return YamlText(cm, kManifestHeader);
}

// The router's Deployment: one replica (its balance state is its own), the
// ConfigMap at HAProxy's default path, the stats socket in an emptyDir.
std::string RouterYaml(const std::string& config, const std::vector<RouterBackend>& backends,
                       const RouterSettings& settings, const DeployArtifactOptions& o) {
  OrderedJson ports =
      OrderedJson::array({{{"name", "metrics"}, {"containerPort", settings.metrics_port}}});
  for (const RouterBackend& b : backends) ports.push_back({{"containerPort", b.port}});
  const std::string socket_dir = settings.stats_socket.substr(0, settings.stats_socket.rfind('/'));
  // A new configuration rolls the pod.
  const OrderedJson annotations = {
      {"tessera.io/config-hash", fmt::format("{:08x}", StableHash(config))}};
  const OrderedJson container = {
      {"name", "haproxy"},
      {"image", o.router_image},
      {"args", {"haproxy", "-W", "-db", "-f", std::string(kRouterConfigDir) + "/haproxy.cfg"}},
      {"ports", ports},
      {"readinessProbe",
       {{"httpGet", {{"path", "/metrics"}, {"port", settings.metrics_port}}},
        {"periodSeconds", 5}}},
      {"volumeMounts", OrderedJson::array({Mount("config", std::string(kRouterConfigDir), true),
                                           Mount("runtime", socket_dir, false)})}};
  const OrderedJson deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", kRouterName}, {"namespace", o.namespace_name}, {"labels", Labels("router")}}},
      {"spec",
       {{"replicas", 1},
        {"selector", {{"matchLabels", Labels("router")}}},
        {"template",
         {{"metadata", {{"labels", Labels("router")}, {"annotations", annotations}}},
          {"spec",
           {{"containers", OrderedJson::array({container})},
            {"volumes", OrderedJson::array(
                            {{{"name", "config"}, {"configMap", {{"name", kRouterName}}}},
                             {{"name", "runtime"}, {"emptyDir", OrderedJson::object()}}})}}}}}}}};
  return YamlText(deployment, kManifestHeader);
}

// The router's metrics (HAProxy's Prometheus exporter) as a Service.
std::string RouterMetricsYaml(const RouterSettings& settings, const DeployArtifactOptions& o) {
  const OrderedJson svc = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", kRouterName}, {"namespace", o.namespace_name}, {"labels", Labels("router")}}},
      {"spec",
       {{"selector", Labels("router")},
        {"ports", OrderedJson::array({{{"name", "metrics"},
                                       {"port", settings.metrics_port},
                                       {"targetPort", settings.metrics_port}}})}}}};
  return YamlText(svc, kManifestHeader);
}

// The labels of one serving process's pods, which select it alone.
OrderedJson ProcessLabels(const NodePlan& plan, const NodeGpu& gpu, const NodeInstance& in,
                          const NodeProcess& proc, const std::string& label) {
  return {{"app.kubernetes.io/name", "tessera"},
          {"app.kubernetes.io/component", "serving"},
          {"tessera.io/service", label},
          {"tessera.io/node", plan.node},
          {"tessera.io/gpu", std::to_string(gpu.index)},
          {"tessera.io/start", std::to_string(in.instance.start)},
          {"tessera.io/process", std::to_string(proc.index)}};
}

// One serving process's Deployment; `name` is its DNS-1123 name.
Result<std::string> ServingYaml(const NodePlan& plan, const NodeGpu& gpu, const NodeInstance& in,
                                const NodeProcess& proc, const std::string& label,
                                const std::string& name, const DeployArtifactOptions& o) {
  // Triton's default ports inside the pod.
  NodeProcess in_pod = proc;
  in_pod.http_port = kHttpPort;
  in_pod.grpc_port = kGrpcPort;
  in_pod.metrics_port = kMetricsPort;
  TESSERA_ASSIGN_OR_RETURN(
      const std::vector<std::string> argv,
      ExpandCommand(plan.serving.command, plan.serving, in, in_pod, gpu.index));
  const std::string uuid_file = MigUuidPath(o.state_dir, gpu.index, in.instance.start);
  std::string script = fmt::format(
      "uuid_file={}\n"
      "until [ -s \"$uuid_file\" ]; do echo \"waiting for $uuid_file (tessera agent)\"; sleep 2; "
      "done\n"
      "export CUDA_VISIBLE_DEVICES=\"$(cat \"$uuid_file\")\"\n"
      "exec",
      ShellWord(uuid_file));
  for (const std::string& arg : argv) script += " " + ShellWord(arg);
  script += "\n";
  const OrderedJson labels = ProcessLabels(plan, gpu, in, proc, label);
  const OrderedJson annotations = {
      {"tessera.io/profile", in.instance.profile},
      {"tessera.io/start", std::to_string(in.instance.start)},
      {"tessera.io/cluster-gpu", std::to_string(gpu.cluster_index)},
      {"tessera.io/process-name", proc.name},
      {"tessera.io/node-ports",
       fmt::format("{},{},{}", proc.http_port, proc.grpc_port, proc.metrics_port)}};
  const std::string mig_dir = o.state_dir + "/mig";
  const OrderedJson container = {
      {"name", "triton"},
      {"image", o.triton_image},
      {"command", {"sh", "-c", script}},
      {"env",
       OrderedJson::array({{{"name", "NVIDIA_VISIBLE_DEVICES"}, {"value", "all"}},
                           {{"name", "CUDA_MPS_PIPE_DIRECTORY"}, {"value", in.pipe_directory}},
                           {{"name", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"},
                            {"value", std::to_string(proc.active_thread_percentage)}}})},
      {"ports", OrderedJson::array({{{"name", "http"}, {"containerPort", kHttpPort}},
                                    {{"name", "grpc"}, {"containerPort", kGrpcPort}},
                                    {{"name", "metrics"}, {"containerPort", kMetricsPort}}})},
      {"readinessProbe",
       {{"httpGet", {{"path", "/v2/health/ready"}, {"port", kHttpPort}}}, {"periodSeconds", 5}}},
      {"volumeMounts", OrderedJson::array({Mount("mps-pipe", in.pipe_directory, false),
                                           Mount("mig-uuids", mig_dir, true),
                                           Mount("models", plan.serving.model_repository, true)})}};
  const OrderedJson deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", name},
        {"namespace", o.namespace_name},
        {"labels", labels},
        {"annotations", annotations}}},
      {"spec",
       {{"replicas", 1},
        {"strategy", {{"type", "Recreate"}}},
        {"selector", {{"matchLabels", labels}}},
        {"template",
         {{"metadata", {{"labels", labels}, {"annotations", annotations}}},
          {"spec",
           {{"runtimeClassName", "nvidia"},
            {"hostIPC", true},
            {"nodeSelector", {{"kubernetes.io/hostname", plan.node}}},
            {"containers", OrderedJson::array({container})},
            {"volumes",
             OrderedJson::array(
                 {HostPathVolume("mps-pipe", in.pipe_directory, "DirectoryOrCreate"),
                  HostPathVolume("mig-uuids", mig_dir, "DirectoryOrCreate"),
                  HostPathVolume("models", plan.serving.model_repository, "Directory")})}}}}}}}};
  return YamlText(deployment, kManifestHeader);
}

// The Kubernetes name of a serving process's Deployment and Service.
std::string ProcessObjectName(const std::string& label, const std::string& node, int gpu, int start,
                              int process) {
  return KubernetesName(fmt::format("tessera-{}-{}-g{}-s{}-p{}", label, node, gpu, start, process));
}

}  // namespace

std::string KubernetesName(std::string_view name, size_t max_length) {
  max_length = std::clamp<size_t>(max_length, 16, 63);
  std::string out;
  for (char c : name) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
      out += lower;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  const std::string hash = fmt::format("{:08x}", StableHash(name));
  if (out.empty()) return "x-" + hash;
  if (out.size() <= max_length) return out;
  out.resize(max_length - hash.size() - 1);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out + "-" + hash;
}

std::string MigUuidPath(std::string_view state_dir, int gpu, int start) {
  return fmt::format("{}/mig/gpu{}-start{}.uuid", state_dir, gpu, start);
}

Result<const ServiceOutcome*> ServiceOfInstance(const Deployment& deployment,
                                                const Instance& instance) {
  for (const ServiceOutcome& s : deployment.services) {
    if (s.name == instance.service) return &s;
  }
  return Status::InvalidArgument(fmt::format("service {} of an instance is not in services",
                                             QuoteForMessage(instance.service)));
}

Result<int64_t> QueueDelayMicros(const Deployment& deployment, const Instance& instance) {
  TESSERA_ASSIGN_OR_RETURN(const ServiceOutcome* service, ServiceOfInstance(deployment, instance));
  const double delay_ms = QueueDelayMs(deployment.rule, instance.latency_ms, service->slo_ms);
  // Within [0, SLO], which input limits keep below an hour: no overflow.
  return static_cast<int64_t>(std::floor(delay_ms * 1000.0 + 1e-6));
}

std::string FormatTritonConfig(std::string_view service, int batch, int64_t queue_delay_us) {
  return fmt::format(
      "# Written by `tessera deploy` (docs/deployment.md). The model file goes to\n"
      "# <model repository>/<service>/1/model.onnx.\n"
      "name: {}\n"
      "backend: \"onnxruntime\"\n"
      "max_batch_size: {}\n"
      "dynamic_batching {{\n"
      "  preferred_batch_size: [ {} ]\n"
      "  max_queue_delay_microseconds: {}\n"
      "}}\n"
      "instance_group [\n"
      "  {{\n"
      "    count: 1\n"
      "    kind: KIND_GPU\n"
      "    gpus: [ 0 ]\n"
      "  }}\n"
      "]\n",
      PbString(service), batch, batch, queue_delay_us);
}

std::string FormatMigPartedYaml(const std::vector<NodePlan>& plans) {
  std::string out =
      "# Written by `tessera deploy` (docs/deployment.md).\n"
      "# One mig-parted config per node: nvidia-mig-parted apply -f mig-parted.yaml -c "
      "tessera-<node>.\n"
      "# mig-parted counts profiles and cannot pin placements: its apply destroys every\n"
      "# MIG instance of a GPU and lets the driver choose where each new one starts. Use\n"
      "# this file to turn MIG mode on and to check profile counts (mig-parted assert);\n"
      "# `tessera agent` creates the instances at the planned start slices.\n"
      "version: v1\n"
      "mig-configs:\n";
  for (const NodePlan& plan : plans) {
    out += fmt::format("  {}:\n", Quoted("tessera-" + plan.node));
    for (const NodeGpu& gpu : plan.gpus) {
      std::map<std::string, int> counts;
      for (const NodeInstance& in : gpu.instances) ++counts[in.instance.profile];
      out += fmt::format("    - devices: [{}]\n      mig-enabled: true\n", gpu.index);
      if (counts.empty()) {
        out += "      mig-devices: {}\n";
        continue;
      }
      out += "      mig-devices:\n";
      for (const auto& [profile, count] : counts) {
        out += fmt::format("        {}: {}\n", Quoted(profile), count);
      }
    }
  }
  return out;
}

Result<std::vector<DeployFile>> BuildTritonConfigs(const Deployment& deployment) {
  // Each service's batches and their queue delays.
  std::map<std::string, std::map<int, int64_t>> delays;  // service -> batch -> D
  for (const GpuAssignment& gpu : deployment.gpus) {
    for (const Instance& in : gpu.instances()) {
      TESSERA_ASSIGN_OR_RETURN(const int64_t d, QueueDelayMicros(deployment, in));
      auto [it, fresh] = delays[in.service].try_emplace(in.batch, d);
      if (!fresh) it->second = std::min(it->second, d);
    }
  }
  std::vector<DeployFile> files;
  for (const ServiceOutcome& service : deployment.services) {
    const auto found = delays.find(service.name);
    if (found == delays.end()) continue;
    const std::string& s = service.name;
    TESSERA_RETURN_IF_ERROR(CheckServiceDirectoryName(s));
    const std::map<int, int64_t>& batches = found->second;
    const auto& [largest, largest_delay] = *batches.rbegin();
    files.push_back(
        {"triton/" + s + "/config.pbtxt", FormatTritonConfig(s, largest, largest_delay)});
    for (const auto& [batch, delay] : batches) {
      files.push_back({fmt::format("triton/{}/configs/b{}.pbtxt", s, batch),
                       FormatTritonConfig(s, batch, delay)});
    }
  }
  return files;
}

Result<std::vector<DeployFile>> BuildDeployArtifacts(const Deployment& deployment,
                                                     const DeployArtifactOptions& options) {
  TESSERA_RETURN_IF_ERROR(CheckOptions(options));
  TESSERA_RETURN_IF_ERROR(CheckShippable(deployment.rule.router));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<NodePlan> plans,
                           BuildNodePlans(deployment, options.deploy));
  std::vector<DeployFile> files;
  for (const NodePlan& plan : plans) {
    files.push_back({"nodes/" + plan.node + ".json", FormatNodePlanJson(plan)});
  }

  TESSERA_ASSIGN_OR_RETURN(std::vector<DeployFile> triton, BuildTritonConfigs(deployment));
  std::set<std::string> served;
  for (const GpuAssignment& gpu : deployment.gpus) {
    for (const Instance& in : gpu.instances()) served.insert(in.service);
  }
  std::map<std::string, std::string> label_of;
  std::map<std::string, std::string> service_of_label;
  for (const ServiceOutcome& s : deployment.services) {
    if (!served.count(s.name)) continue;
    // "tessera-<label>" must stay a label too.
    const std::string label = KubernetesName(s.name, 55);
    const auto [it, fresh] = service_of_label.emplace(label, s.name);
    if (!fresh) {
      return Status::InvalidArgument(fmt::format(
          "services {} and {} map to one Kubernetes name {}; rename one",
          QuoteForMessage(it->second), QuoteForMessage(s.name), QuoteForMessage(label)));
    }
    label_of[s.name] = label;
  }
  files.insert(files.end(), std::make_move_iterator(triton.begin()),
               std::make_move_iterator(triton.end()));
  TESSERA_ASSIGN_OR_RETURN(
      std::vector<RouterBackend> backends,
      BuildRouterBackends(deployment, plans, options.deploy.gpu_map, options.router_base_port));
  files.push_back({"mig-parted.yaml", FormatMigPartedYaml(plans)});
  const RouterSettings host_router;
  files.push_back(
      {"router/haproxy.cfg", FormatHaproxyConfig(deployment.rule, backends, host_router)});
  // In the cluster each process is reached through its own Service.
  RouterSettings cluster_router;
  cluster_router.dns_resolvers = true;
  for (RouterBackend& b : backends) {
    for (RouterServer& server : b.servers) {
      server.address = fmt::format(
          "{}.{}.svc.cluster.local",
          ProcessObjectName(b.name, server.node, server.gpu, server.start, server.process),
          options.namespace_name);
      server.port = kHttpPort;
    }
  }
  const std::string cluster_config = FormatHaproxyConfig(deployment.rule, backends, cluster_router);
  files.push_back({"k8s/00-namespace.yaml", NamespaceYaml(options)});
  for (const NodePlan& plan : plans) {
    files.push_back(
        {fmt::format("k8s/10-nodeplan-{}.yaml", plan.node), NodePlanConfigMapYaml(plan, options)});
  }
  files.push_back({"k8s/20-agent-daemonset.yaml", AgentYaml(plans, options)});
  for (const RouterBackend& b : backends) {
    files.push_back({fmt::format("k8s/30-service-{}.yaml", b.name),
                     ServiceYaml(b.name, options, b.service, b.port)});
  }
  files.push_back({"k8s/35-router-config.yaml", RouterConfigMapYaml(cluster_config, options)});
  files.push_back(
      {"k8s/36-router.yaml", RouterYaml(cluster_config, backends, cluster_router, options)});
  files.push_back({"k8s/37-router-metrics.yaml", RouterMetricsYaml(cluster_router, options)});
  std::set<std::string> names;
  for (const NodePlan& plan : plans) {
    for (const NodeGpu& gpu : plan.gpus) {
      for (const NodeInstance& in : gpu.instances) {
        const std::string& label = label_of[in.instance.service];
        for (const NodeProcess& proc : in.processes) {
          const std::string name =
              ProcessObjectName(label, plan.node, gpu.index, in.instance.start, proc.index);
          if (!names.insert(name).second) {
            return Status::InvalidArgument(fmt::format(
                "two serving processes map to one Kubernetes name {}", QuoteForMessage(name)));
          }
          TESSERA_ASSIGN_OR_RETURN(std::string yaml,
                                   ServingYaml(plan, gpu, in, proc, label, name, options));
          files.push_back({fmt::format("k8s/40-serving-{}.yaml", name), std::move(yaml)});
          files.push_back(
              {fmt::format("k8s/45-process-{}.yaml", name),
               ProcessServiceYaml(name, ProcessLabels(plan, gpu, in, proc, label), options)});
        }
      }
    }
  }
  return files;
}

}  // namespace tessera
