// NodePlan (node_plan.h): building one plan per node from a MIG deployment,
// the serving command's placeholders, and the NodePlan JSON with its strict
// parser. nlohmann::json is used as in deployment_json.cc: no exceptions,
// every value's type checked before it is read, dumped with "replace".
#include "tessera/emit/node_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "plan/instance_json.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_numbers.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kFormatName = "tessera-nodeplan";
constexpr int kFormatVersion = 1;

constexpr std::array<std::string_view, 8> kTopKeys = {
    "format", "version", "node", "node_index", "gpus_per_node", "gpu", "serving", "gpus"};
constexpr std::array<std::string_view, 5> kServingKeys = {"model_repository", "base_port",
                                                          "mps_root", "command", "mps_command"};
constexpr std::array<std::string_view, 3> kGpuKeys = {"index", "cluster_index", "instances"};
// An instance's keys: the plan's (plan/instance_json.h), then the node's.
constexpr std::array<std::string_view, 5> kNodeInstanceKeys = {
    "profile_id", "memory_slices", "compute_slices", "mps", "processes"};
constexpr std::array<std::string_view, 13> kInstanceKeys = [] {
  std::array<std::string_view, 13> keys;
  auto end = std::copy(kInstanceJsonKeys.begin(), kInstanceJsonKeys.end(), keys.begin());
  std::copy(kNodeInstanceKeys.begin(), kNodeInstanceKeys.end(), end);
  return keys;
}();
constexpr std::array<std::string_view, 2> kMpsKeys = {"pipe_directory", "log_directory"};
constexpr std::array<std::string_view, 9> kProcessKeys = {
    "index",        "name",         "batch",  "active_thread_percentage", "http_port", "grpc_port",
    "metrics_port", "model_config", "command"};

// The place of a process in the ports rule (node_plan.h).
int64_t PortSlot(int local_gpu, int start, int process) {
  return (static_cast<int64_t>(local_gpu) * 8 + start) * kMaxProcessesPerInstance + process;
}

std::string ProcessName(const NodeInstance& in, int local_gpu, int p) {
  return fmt::format("{}-gpu{}-start{}-p{}", in.instance.service, local_gpu, in.instance.start, p);
}

// ---- Format -----------------------------------------------------------------

OrderedJson Strings(const std::vector<std::string>& values) {
  OrderedJson j = OrderedJson::array();
  for (const std::string& v : values) j.push_back(v);
  return j;
}

OrderedJson ProcessJson(const NodeProcess& p) {
  OrderedJson j;
  j["index"] = p.index;
  j["name"] = p.name;
  j["batch"] = p.batch;
  j["active_thread_percentage"] = p.active_thread_percentage;
  j["http_port"] = p.http_port;
  j["grpc_port"] = p.grpc_port;
  j["metrics_port"] = p.metrics_port;
  j["model_config"] = p.model_config;
  j["command"] = Strings(p.command);
  return j;
}

OrderedJson InstanceJson(const NodeInstance& in) {
  OrderedJson j;
  AddInstanceJson(in.instance, j);
  j["profile_id"] = in.profile_id;
  j["memory_slices"] = in.memory_slices;
  j["compute_slices"] = in.compute_slices;
  j["mps"] = {{"pipe_directory", in.pipe_directory}, {"log_directory", in.log_directory}};
  j["processes"] = OrderedJson::array();
  for (const NodeProcess& p : in.processes) j["processes"].push_back(ProcessJson(p));
  return j;
}

// ---- Parse ------------------------------------------------------------------

class NodePlanReader : public JsonReader {
 public:
  using JsonReader::JsonReader;

  Result<NodePlan> ParseDocument(const Json& root) const;

 private:
  Result<std::vector<std::string>> StringList(const Json& j, const std::string& path,
                                              std::string_view key) const;
  Result<ServingSettings> ParseServing(const Json& j, const std::string& path) const;
  Result<NodeGpu> ParseGpu(const Json& j, const std::string& path, const GpuModel& model,
                           int gpus_per_node) const;
  Result<NodeInstance> ParseInstance(const Json& j, const std::string& path,
                                     const GpuModel& model) const;
  Result<NodeProcess> ParseProcess(const Json& j, const std::string& path) const;
  Status CheckNode(const Json& root, const NodePlan& plan) const;
};

// A non-empty array of non-empty strings.
Result<std::vector<std::string>> NodePlanReader::StringList(const Json& j, const std::string& path,
                                                            std::string_view key) const {
  TESSERA_RETURN_IF_ERROR(Array(j, path, key));
  const Json& list = j[std::string(key)];
  const std::string at = JoinJsonPath(path, key);
  if (list.empty()) return Error(at, "must not be empty");
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", at, i);
    if (!list[i].is_string()) return Error(item, "expected a string, got " + DescribeJson(list[i]));
    if (list[i].get_ref<const std::string&>().empty()) return Error(item, "must not be empty");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

Result<ServingSettings> NodePlanReader::ParseServing(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kServingKeys));
  ServingSettings s;
  TESSERA_ASSIGN_OR_RETURN(s.model_repository, String(j, path, "model_repository", true));
  TESSERA_ASSIGN_OR_RETURN(s.base_port, IntIn(j, path, "base_port", limits::kPort));
  TESSERA_ASSIGN_OR_RETURN(s.mps_root, String(j, path, "mps_root", true));
  TESSERA_ASSIGN_OR_RETURN(s.command, StringList(j, path, "command"));
  TESSERA_ASSIGN_OR_RETURN(s.mps_command, StringList(j, path, "mps_command"));
  return s;
}

Result<NodeProcess> NodePlanReader::ParseProcess(const Json& j, const std::string& path) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kProcessKeys));
  NodeProcess p;
  TESSERA_ASSIGN_OR_RETURN(p.index, Int(j, path, "index", 0));
  TESSERA_ASSIGN_OR_RETURN(p.name, String(j, path, "name", true));
  TESSERA_ASSIGN_OR_RETURN(p.batch, IntIn(j, path, "batch", limits::kBatch));
  TESSERA_ASSIGN_OR_RETURN(p.active_thread_percentage,
                           IntIn(j, path, "active_thread_percentage", limits::kThreadPercentage));
  TESSERA_ASSIGN_OR_RETURN(p.http_port, IntIn(j, path, "http_port", limits::kPort));
  TESSERA_ASSIGN_OR_RETURN(p.grpc_port, IntIn(j, path, "grpc_port", limits::kPort));
  TESSERA_ASSIGN_OR_RETURN(p.metrics_port, IntIn(j, path, "metrics_port", limits::kPort));
  TESSERA_ASSIGN_OR_RETURN(p.model_config, String(j, path, "model_config", true));
  TESSERA_ASSIGN_OR_RETURN(p.command, StringList(j, path, "command"));
  return p;
}

Result<NodeInstance> NodePlanReader::ParseInstance(const Json& j, const std::string& path,
                                                   const GpuModel& model) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kInstanceKeys));
  NodeInstance in;
  TESSERA_ASSIGN_OR_RETURN(in.instance, ReadInstanceJson(*this, j, path));
  const MigProfile* profile = model.FindProfile(in.instance.profile);
  if (profile == nullptr) {
    return Error(
        JoinJsonPath(path, "profile"),
        fmt::format("{} is not a MIG profile of {}", DescribeJson(j["profile"]), model.name));
  }
  TESSERA_ASSIGN_OR_RETURN(in.profile_id, Int(j, path, "profile_id", 0));
  if (in.profile_id != profile->id) {
    return Error(JoinJsonPath(path, "profile_id"),
                 fmt::format("{} has ID {} on {}, got {}", profile->name, profile->id, model.name,
                             in.profile_id));
  }
  if (std::find(profile->starts.begin(), profile->starts.end(), in.instance.start) ==
      profile->starts.end()) {
    return Error(JoinJsonPath(path, "start"),
                 fmt::format("{} may not start at memory slice {} on {}", profile->name,
                             in.instance.start, model.name));
  }
  TESSERA_ASSIGN_OR_RETURN(in.memory_slices, Int(j, path, "memory_slices", 0));
  if (in.memory_slices != profile->memory_slices) {
    return Error(JoinJsonPath(path, "memory_slices"),
                 fmt::format("{} spans {} memory slices, got {}", profile->name,
                             profile->memory_slices, in.memory_slices));
  }
  TESSERA_ASSIGN_OR_RETURN(in.compute_slices, Int(j, path, "compute_slices", 0));
  if (in.compute_slices != profile->compute_slices) {
    return Error(JoinJsonPath(path, "compute_slices"),
                 fmt::format("{} has {} compute slices, got {}", profile->name,
                             profile->compute_slices, in.compute_slices));
  }
  const std::string mps = JoinJsonPath(path, "mps");
  TESSERA_RETURN_IF_ERROR(Keys(j["mps"], mps, kMpsKeys));
  TESSERA_ASSIGN_OR_RETURN(in.pipe_directory, String(j["mps"], mps, "pipe_directory", true));
  TESSERA_ASSIGN_OR_RETURN(in.log_directory, String(j["mps"], mps, "log_directory", true));
  TESSERA_RETURN_IF_ERROR(Array(j, path, "processes"));
  const Json& processes = j["processes"];
  if (processes.size() != static_cast<size_t>(in.instance.procs)) {
    return Error(JoinJsonPath(path, "processes"), fmt::format("lists {} process(es), procs is {}",
                                                              processes.size(), in.instance.procs));
  }
  for (size_t i = 0; i < processes.size(); ++i) {
    const std::string at = fmt::format("{}.processes[{}]", path, i);
    TESSERA_ASSIGN_OR_RETURN(NodeProcess p, ParseProcess(processes[i], at));
    if (p.index != static_cast<int>(i)) {
      return Error(JoinJsonPath(at, "index"), fmt::format("expected {}, got {}", i, p.index));
    }
    in.processes.push_back(std::move(p));
  }
  return in;
}

Result<NodeGpu> NodePlanReader::ParseGpu(const Json& j, const std::string& path,
                                         const GpuModel& model, int gpus_per_node) const {
  TESSERA_RETURN_IF_ERROR(Keys(j, path, kGpuKeys));
  NodeGpu gpu;
  const InputRange local{0, static_cast<double>(gpus_per_node - 1), false, true};
  TESSERA_ASSIGN_OR_RETURN(gpu.index, IntIn(j, path, "index", local));
  TESSERA_ASSIGN_OR_RETURN(gpu.cluster_index,
                           IntIn(j, path, "cluster_index", limits::kClusterGpuIndex));
  TESSERA_RETURN_IF_ERROR(Array(j, path, "instances"));
  const Json& instances = j["instances"];
  std::vector<int> owner(static_cast<size_t>(model.memory_slices), -1);
  for (size_t i = 0; i < instances.size(); ++i) {
    const std::string at = fmt::format("{}.instances[{}]", path, i);
    TESSERA_ASSIGN_OR_RETURN(NodeInstance in, ParseInstance(instances[i], at, model));
    for (int s = in.instance.start; s < in.instance.start + in.memory_slices; ++s) {
      if (s >= model.memory_slices) {
        return Error(JoinJsonPath(at, "start"),
                     fmt::format("{} at {} runs past memory slice {} of {}", in.instance.profile,
                                 in.instance.start, model.memory_slices - 1, model.name));
      }
      if (owner[s] >= 0) {
        return Error(JoinJsonPath(at, "start"),
                     fmt::format("{} at {} overlaps instances[{}] on memory slice {}",
                                 in.instance.profile, in.instance.start, owner[s], s));
      }
      owner[s] = static_cast<int>(i);
    }
    gpu.instances.push_back(std::move(in));
  }
  return gpu;
}

// Unique local GPU indices, process names and ports on the node.
Status NodePlanReader::CheckNode(const Json& root, const NodePlan& plan) const {
  std::map<int, size_t> gpu_at;
  std::map<std::string, std::string> name_at;
  std::map<int, std::string> port_at;
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    const auto [it, inserted] = gpu_at.emplace(plan.gpus[g].index, g);
    if (!inserted) {
      return Error(fmt::format("gpus[{}].index", g),
                   fmt::format("duplicate local GPU index {} (also gpus[{}])", plan.gpus[g].index,
                               it->second));
    }
    for (size_t i = 0; i < plan.gpus[g].instances.size(); ++i) {
      const NodeInstance& in = plan.gpus[g].instances[i];
      for (size_t p = 0; p < in.processes.size(); ++p) {
        const NodeProcess& proc = in.processes[p];
        const std::string at = fmt::format("gpus[{}].instances[{}].processes[{}]", g, i, p);
        const auto [n, fresh] = name_at.emplace(proc.name, at);
        if (!fresh) {
          return Error(
              JoinJsonPath(at, "name"),
              fmt::format("duplicate process name {} (also {})",
                          DescribeJson(root["gpus"][g]["instances"][i]["processes"][p]["name"]),
                          n->second));
        }
        const std::array<std::pair<std::string_view, int>, 3> ports = {
            {{"http_port", proc.http_port},
             {"grpc_port", proc.grpc_port},
             {"metrics_port", proc.metrics_port}}};
        for (const auto& [key, port] : ports) {
          const std::string field = JoinJsonPath(at, key);
          const auto [q, unused] = port_at.emplace(port, field);
          if (!unused) {
            return Error(field, fmt::format("port {} is used twice (also {})", port, q->second));
          }
        }
      }
    }
  }
  return Status::Ok();
}

Result<NodePlan> NodePlanReader::ParseDocument(const Json& root) const {
  TESSERA_RETURN_IF_ERROR(Keys(root, "", kTopKeys));
  NodePlan plan;
  TESSERA_ASSIGN_OR_RETURN(const std::string format, String(root, "", "format", true));
  if (format != kFormatName) {
    return Error("format",
                 fmt::format("expected \"{}\", got {}", kFormatName, DescribeJson(root["format"])));
  }
  TESSERA_ASSIGN_OR_RETURN(const int version, Int(root, "", "version", 0));
  if (version != kFormatVersion) {
    return Error("version", fmt::format("expected {}, got {}", kFormatVersion, version));
  }
  TESSERA_ASSIGN_OR_RETURN(plan.node, String(root, "", "node", true));
  if (!IsDns1123Label(plan.node)) {
    return Error("node", fmt::format("{} is not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', "
                                     "a letter or digit at each end)",
                                     DescribeJson(root["node"])));
  }
  TESSERA_ASSIGN_OR_RETURN(plan.node_index, IntIn(root, "", "node_index", limits::kNodeIndex));
  TESSERA_ASSIGN_OR_RETURN(plan.gpus_per_node,
                           IntIn(root, "", "gpus_per_node", limits::kGpusPerNode));
  TESSERA_ASSIGN_OR_RETURN(plan.gpu, String(root, "", "gpu", true));
  Result<const GpuModel*> model = FindMigGpu(plan.gpu);
  if (!model.ok()) return Error("gpu", model.status().message());
  TESSERA_ASSIGN_OR_RETURN(plan.serving, ParseServing(root["serving"], "serving"));
  TESSERA_RETURN_IF_ERROR(Array(root, "", "gpus"));
  for (size_t g = 0; g < root["gpus"].size(); ++g) {
    TESSERA_ASSIGN_OR_RETURN(NodeGpu gpu, ParseGpu(root["gpus"][g], fmt::format("gpus[{}]", g),
                                                   **model, plan.gpus_per_node));
    plan.gpus.push_back(std::move(gpu));
  }
  TESSERA_RETURN_IF_ERROR(CheckNode(root, plan));
  return plan;
}

}  // namespace

bool IsDns1123Label(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

std::string NodeName(const DeployOptions& options, int k) {
  if (k >= 0 && static_cast<size_t>(k) < options.node_names.size()) return options.node_names[k];
  return fmt::format("node-{}", k);
}

Result<std::vector<std::string>> ExpandCommand(const std::vector<std::string>& command,
                                               const ServingSettings& serving,
                                               const NodeInstance& instance,
                                               const NodeProcess& process, int local_gpu) {
  const std::map<std::string, std::string, std::less<>> values = {
      {"model_repository", serving.model_repository},
      {"model", instance.instance.service},
      {"model_config", process.model_config},
      {"batch", std::to_string(process.batch)},
      {"http_port", std::to_string(process.http_port)},
      {"grpc_port", std::to_string(process.grpc_port)},
      {"metrics_port", std::to_string(process.metrics_port)},
      {"service", instance.instance.service},
      {"gpu", std::to_string(local_gpu)},
      {"start", std::to_string(instance.instance.start)},
      {"process", std::to_string(process.index)},
      {"pipe_directory", instance.pipe_directory},
      {"log_directory", instance.log_directory},
      {"profile", instance.instance.profile},
      {"procs", std::to_string(instance.instance.procs)},
  };
  std::vector<std::string> out;
  out.reserve(command.size());
  for (const std::string& arg : command) {
    std::string expanded;
    size_t at = 0;
    while (at < arg.size()) {
      const size_t open = arg.find('{', at);
      if (open == std::string::npos) break;
      const size_t close = arg.find('}', open);
      if (close == std::string::npos) break;
      const std::string_view key(arg.data() + open + 1, close - open - 1);
      expanded.append(arg, at, open - at);
      const auto it = values.find(key);
      if (it == values.end()) {
        std::string known;
        for (const auto& [name, unused] : values)
          known += (known.empty() ? "{" : ", {") + name + "}";
        return Status::InvalidArgument(fmt::format(
            "serving command: unknown placeholder {} in {} (known: {})",
            QuoteForMessage(arg.substr(open, close - open + 1)), QuoteForMessage(arg), known));
      }
      expanded += it->second;
      at = close + 1;
    }
    expanded.append(arg, at, std::string::npos);
    out.push_back(std::move(expanded));
  }
  return out;
}

Result<NodeInstance> BuildNodeInstance(const ServingSettings& serving, const GpuModel& gpu,
                                       int local_gpu, const Instance& instance) {
  const MigProfile* profile = gpu.FindProfile(instance.profile);
  if (profile == nullptr) {
    return Status::InvalidArgument(fmt::format("profile {} is not a MIG profile of {}",
                                               QuoteForMessage(instance.profile), gpu.name));
  }
  if (std::find(profile->starts.begin(), profile->starts.end(), instance.start) ==
      profile->starts.end()) {
    return Status::InvalidArgument(fmt::format("{} may not start at memory slice {} on {}",
                                               profile->name, instance.start, gpu.name));
  }
  if (!limits::kProcs.Contains(instance.procs) || !limits::kBatch.Contains(instance.batch)) {
    return Status::InvalidArgument(fmt::format(
        "instance {} at {}: batch {} and procs {} must be in [1, 4096] and [1, {}]", profile->name,
        instance.start, instance.batch, instance.procs, kMaxProcessesPerInstance));
  }
  NodeInstance in;
  in.instance = instance;
  in.instance.profile = profile->name;  // the catalog's spelling
  in.profile_id = profile->id;
  in.memory_slices = profile->memory_slices;
  in.compute_slices = profile->compute_slices;
  const std::string dir =
      fmt::format("{}/gpu{}-start{}", serving.mps_root, local_gpu, in.instance.start);
  in.pipe_directory = dir + "/pipe";
  in.log_directory = dir + "/log";
  for (int p = 0; p < in.instance.procs; ++p) {
    NodeProcess proc;
    proc.index = p;
    proc.name = ProcessName(in, local_gpu, p);
    proc.batch = in.instance.batch;
    proc.active_thread_percentage = (100 + in.instance.procs - 1) / in.instance.procs;
    const int64_t http = serving.base_port + 3 * PortSlot(local_gpu, in.instance.start, p);
    if (http + 2 > 65535) {
      return Status::InvalidArgument(fmt::format(
          "base port {}: process {} of {} at {} on local GPU {} would get port {} > 65535; "
          "lower the base port or the GPUs per node",
          serving.base_port, p, in.instance.profile, in.instance.start, local_gpu, http + 2));
    }
    proc.http_port = static_cast<int>(http);
    proc.grpc_port = proc.http_port + 1;
    proc.metrics_port = proc.http_port + 2;
    proc.model_config = fmt::format("b{}", in.instance.batch);
    TESSERA_ASSIGN_OR_RETURN(proc.command,
                             ExpandCommand(serving.command, serving, in, proc, local_gpu));
    in.processes.push_back(std::move(proc));
  }
  return in;
}

Result<std::vector<NodePlan>> BuildNodePlans(const Deployment& deployment,
                                             const DeployOptions& options) {
  if (deployment.sharing == Sharing::kMps) {
    return Status::InvalidArgument(
        "field 'sharing': an MPS plan (GPUs shared whole) has no MIG instances to deploy; "
        "deploy needs a MIG plan");
  }
  if (!limits::kGpusPerNode.Contains(options.gpus_per_node)) {
    return Status::InvalidArgument("gpus per node " +
                                   OutOfRange(limits::kGpusPerNode, options.gpus_per_node));
  }
  for (const std::string& name : options.node_names) {
    if (!IsDns1123Label(name)) {
      return Status::InvalidArgument(
          fmt::format("node name {} is not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', a "
                      "letter or digit at each end)",
                      QuoteForMessage(name)));
    }
  }
  const int per_node = options.gpus_per_node;
  std::map<int, NodePlan> nodes;
  std::map<int, int> cluster_of;  // cluster index -> deployment GPU index
  for (const GpuAssignment& assignment : deployment.gpus) {
    if (assignment.instances().empty()) continue;
    int cluster = assignment.index;
    if (!options.gpu_map.empty()) {
      const auto it = options.gpu_map.find(assignment.index);
      if (it == options.gpu_map.end()) {
        return Status::InvalidArgument(
            fmt::format("GPU {} of the plan is not in the transition's gpu_map", assignment.index));
      }
      cluster = it->second;
    }
    if (cluster < 0) {
      return Status::InvalidArgument(fmt::format("GPU {}: negative cluster index", cluster));
    }
    const auto [seen, fresh] = cluster_of.emplace(cluster, assignment.index);
    if (!fresh) {
      return Status::InvalidArgument(
          fmt::format("GPUs {} and {} of the plan both map to cluster GPU {}", seen->second,
                      assignment.index, cluster));
    }
    TESSERA_ASSIGN_OR_RETURN(const GpuModel* model,
                             FindMigGpu(GpuModelName(deployment, assignment)));
    const int k = cluster / per_node;
    const int local = cluster % per_node;
    if (!options.node_names.empty() && static_cast<size_t>(k) >= options.node_names.size()) {
      return Status::InvalidArgument(fmt::format(
          "{} node name(s) given, but cluster GPU {} lies on node {} ({} GPUs per node)",
          options.node_names.size(), cluster, k, per_node));
    }
    auto [it, created] = nodes.try_emplace(k);
    NodePlan& plan = it->second;
    if (created) {
      plan.node = NodeName(options, k);
      plan.node_index = k;
      plan.gpus_per_node = per_node;
      plan.gpu = model->name;
      plan.serving = options.serving;
    } else if (plan.gpu != model->name) {
      return Status::InvalidArgument(
          fmt::format("node {} would hold GPUs of two models ({} and {}); a node has one GPU "
                      "model",
                      plan.node, plan.gpu, model->name));
    }
    NodeGpu gpu;
    gpu.index = local;
    gpu.cluster_index = cluster;
    std::vector<Instance> instances(assignment.instances().begin(), assignment.instances().end());
    std::sort(instances.begin(), instances.end(),
              [](const Instance& a, const Instance& b) { return a.start < b.start; });
    for (const Instance& instance : instances) {
      Result<NodeInstance> in = BuildNodeInstance(options.serving, *model, local, instance);
      if (!in.ok()) {
        return Status::InvalidArgument(
            fmt::format("GPU {}: {}", assignment.index, in.status().message()));
      }
      gpu.instances.push_back(std::move(*in));
    }
    plan.gpus.push_back(std::move(gpu));
  }
  std::vector<NodePlan> out;
  for (auto& [k, plan] : nodes) {
    std::sort(plan.gpus.begin(), plan.gpus.end(),
              [](const NodeGpu& a, const NodeGpu& b) { return a.index < b.index; });
    out.push_back(std::move(plan));
  }
  return out;
}

std::string FormatNodePlanJson(const NodePlan& plan) {
  OrderedJson j;
  j["format"] = kFormatName;
  j["version"] = kFormatVersion;
  j["node"] = plan.node;
  j["node_index"] = plan.node_index;
  j["gpus_per_node"] = plan.gpus_per_node;
  j["gpu"] = plan.gpu;
  OrderedJson serving;
  serving["model_repository"] = plan.serving.model_repository;
  serving["base_port"] = plan.serving.base_port;
  serving["mps_root"] = plan.serving.mps_root;
  serving["command"] = Strings(plan.serving.command);
  serving["mps_command"] = Strings(plan.serving.mps_command);
  j["serving"] = std::move(serving);
  j["gpus"] = OrderedJson::array();
  for (const NodeGpu& gpu : plan.gpus) {
    OrderedJson g;
    g["index"] = gpu.index;
    g["cluster_index"] = gpu.cluster_index;
    g["instances"] = OrderedJson::array();
    for (const NodeInstance& in : gpu.instances) g["instances"].push_back(InstanceJson(in));
    j["gpus"].push_back(std::move(g));
  }
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

Result<NodePlan> ParseNodePlanJson(std::string_view text, std::string_view source) {
  if (const std::string error = CheckJsonStructure(text); !error.empty()) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, error));
  }
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument(fmt::format("{}: invalid JSON", source));
  return NodePlanReader(source).ParseDocument(root);
}

}  // namespace tessera
