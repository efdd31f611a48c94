// `tessera deploy`: the files that make a MIG plan real (deploy_artifacts.h):
// one NodePlan per node for `tessera agent`, Triton model configurations,
// mig-parted's config and Kubernetes manifests, written under --out.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/deployment_format.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/emit/node_plan.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct DeployFlags {
  ProblemInputs input;  // --scenario (and its profiles) to validate the plan against
  std::string deployment;
  std::string out;
  std::string transition;
  std::string format = "text";
  bool force = false;
  DeployArtifactOptions options;
};

// Flags the library would reject, named as flags.
Status CheckFlags(const DeployFlags& flags) {
  const DeployArtifactOptions& o = flags.options;
  for (const std::string& name : o.deploy.node_names) {
    if (!IsDns1123Label(name)) {
      return Status::InvalidArgument(fmt::format(
          "--nodes: {} is not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', a letter or digit "
          "at each end)",
          QuoteForMessage(name)));
    }
  }
  if (std::set<std::string>(o.deploy.node_names.begin(), o.deploy.node_names.end()).size() !=
      o.deploy.node_names.size()) {
    return Status::InvalidArgument("--nodes: a node name is given twice");
  }
  if (!IsDns1123Label(o.namespace_name)) {
    return Status::InvalidArgument(
        fmt::format("--namespace: {} is not a DNS-1123 label (1 to 63 of a-z, 0-9 and '-', a "
                    "letter or digit at each end)",
                    QuoteForMessage(o.namespace_name)));
  }
  const auto bad_word = [](const std::string& s) {
    return s.empty() || std::any_of(s.begin(), s.end(), [](char c) {
             return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
           });
  };
  if (bad_word(o.agent_image)) {
    return Status::InvalidArgument(
        "--agent-image: must be non-empty, without spaces or control "
        "characters, got " +
        QuoteForMessage(o.agent_image));
  }
  if (bad_word(o.router_image)) {
    return Status::InvalidArgument(
        "--router-image: must be non-empty, without spaces or control characters, got " +
        QuoteForMessage(o.router_image));
  }
  if (bad_word(o.triton_image)) {
    return Status::InvalidArgument(
        "--triton-image: must be non-empty, without spaces or "
        "control characters, got " +
        QuoteForMessage(o.triton_image));
  }
  const std::vector<std::pair<std::string, std::string>> dirs = {
      {"--model-repository", o.deploy.serving.model_repository},
      {"--mps-root", o.deploy.serving.mps_root},
      {"--driver-lib-dir", o.driver_lib_dir}};
  for (const auto& [flag, dir] : dirs) {
    if (dir.empty() || dir.front() != '/' || std::any_of(dir.begin(), dir.end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        })) {
      return Status::InvalidArgument(
          fmt::format("{}: must be an absolute path without control characters, got {}", flag,
                      QuoteForMessage(dir)));
    }
  }
  return Status::Ok();
}

// Ok when `dir` is missing, or holds only what deploy writes (folders and
// regular files at the paths of `files`), or --force. A symbolic link inside
// is refused even with --force: writing through it would leave `dir`.
Status CheckOutDir(const std::string& dir, const std::vector<DeployFile>& files, bool force) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) return Status::Ok();
  if (!fs::is_directory(st)) {
    return Status::InvalidArgument("--out: " + QuoteForMessage(dir) + " is not a directory");
  }
  std::set<std::string> ours;
  for (const DeployFile& f : files) {
    fs::path p = f.path;
    ours.insert(p.string());
    for (p = p.parent_path(); !p.empty(); p = p.parent_path()) ours.insert(p.string());
  }
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir, ec).string();
    if (it->is_symlink(ec)) {
      return Status::InvalidArgument(
          fmt::format("--out: {} holds a symbolic link, {}; deploy writes only into plain folders",
                      QuoteForMessage(dir), QuoteForMessage(rel)));
    }
    if (force || ours.count(rel)) continue;
    return Status::InvalidArgument(fmt::format(
        "--out: {} holds {}, which deploy does not write; choose an empty or new folder, or "
        "pass --force to write beside it",
        QuoteForMessage(dir), QuoteForMessage(rel)));
  }
  if (ec)
    return Status::IoError("--out: cannot list " + QuoteForMessage(dir) + ": " + ec.message());
  return Status::Ok();
}

Status WriteFiles(const std::string& dir, const std::vector<DeployFile>& files) {
  for (const DeployFile& f : files) {
    const fs::path path = fs::path(dir) / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      return Status::IoError(fmt::format("--out: cannot create {}: {}",
                                         QuoteForMessage(path.parent_path().string()),
                                         ec.message()));
    }
    TESSERA_RETURN_IF_ERROR(WriteOutput(path.string(), f.content));
  }
  return Status::Ok();
}

std::string Summary(const std::string& dir, const std::vector<NodePlan>& plans,
                    const std::vector<DeployFile>& files) {
  std::string out =
      fmt::format("{:<24} {:>5} {:>10} {:>10}\n", "node", "GPUs", "instances", "processes");
  int gpus = 0, instances = 0, processes = 0;
  for (const NodePlan& plan : plans) {
    int node_instances = 0, node_processes = 0;
    for (const NodeGpu& gpu : plan.gpus) {
      node_instances += static_cast<int>(gpu.instances.size());
      for (const NodeInstance& in : gpu.instances) node_processes += in.instance.procs;
    }
    out += fmt::format("{:<24} {:>5} {:>10} {:>10}\n", plan.node, plan.gpus.size(), node_instances,
                       node_processes);
    gpus += static_cast<int>(plan.gpus.size());
    instances += node_instances;
    processes += node_processes;
  }
  out += fmt::format("{:<24} {:>5} {:>10} {:>10}\n", "total", gpus, instances, processes);
  std::map<std::string, int> kinds;
  for (const DeployFile& f : files) {
    const size_t slash = f.path.find('/');
    ++kinds[slash == std::string::npos ? f.path : f.path.substr(0, slash + 1)];
  }
  std::string listing;
  for (const auto& [kind, count] : kinds) {
    listing += fmt::format("{}{} {}", listing.empty() ? "" : ", ", count, kind);
  }
  out += fmt::format("wrote {} file(s) under {}: {}\n", files.size(), dir, listing);
  return out;
}

int Run(DeployFlags flags) {
  if (Status s = CheckFlags(flags); !s.ok()) return ReportError(s);
  Result<std::string> text = ReadTextFile(flags.deployment);
  if (!text.ok()) return ReportError(text.status());
  Result<Deployment> deployment = ParseDeploymentJson(*text, flags.deployment);
  if (!deployment.ok()) return ReportError(deployment.status());
  if (deployment->sharing == Sharing::kMps) {
    return ReportError(Status::InvalidArgument(
        flags.deployment +
        ": field 'sharing': an MPS plan (GPUs shared whole) has no MIG instances to deploy; "
        "deploy needs a MIG plan"));
  }
  if (!flags.input.scenario.empty()) {
    Result<Problem> problem = CheckPlanServes(flags.input, flags.deployment, *deployment,
                                              "deploy (MIG plans)", CliNotes());
    if (!problem.ok()) return ReportError(problem.status());
    for (ServiceOutcome& s : deployment->services) {
      for (const Service& spec : problem->scenario().services) {
        if (spec.name != s.name) continue;
        s.rate_rps = spec.rate_rps;
        s.slo_ms = spec.slo_ms;
      }
    }
  } else if (Status s = CheckInputsApply(flags.input, false, "deploy (MIG plans)"); !s.ok()) {
    return ReportError(s);
  }
  if (!flags.transition.empty()) {
    Result<std::string> t_text = ReadTextFile(flags.transition);
    if (!t_text.ok()) return ReportError(t_text.status());
    Result<Transition> t = ParseTransitionJson(*t_text, flags.transition);
    if (!t.ok()) return ReportError(t.status());
    flags.options.deploy.gpu_map = t->gpu_map;
  }
  Result<std::vector<NodePlan>> plans = BuildNodePlans(*deployment, flags.options.deploy);
  Result<std::vector<DeployFile>> files = plans.ok()
                                              ? BuildDeployArtifacts(*deployment, flags.options)
                                              : Result<std::vector<DeployFile>>(plans.status());
  if (!files.ok()) {
    const std::string where = flags.transition.empty()
                                  ? flags.deployment
                                  : flags.deployment + " with " + flags.transition;
    return ReportError(Status::InvalidArgument(where + ": " + files.status().message()));
  }
  if (Status s = CheckOutDir(flags.out, *files, flags.force); !s.ok()) return ReportError(s);
  if (Status s = WriteFiles(flags.out, *files); !s.ok()) return ReportError(s);
  if (flags.format == "json") {
    nlohmann::ordered_json j;
    j["out"] = flags.out;
    j["files"] = nlohmann::ordered_json::array();
    for (const DeployFile& f : *files) j["files"].push_back(f.path);
    std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else {
    std::cout << EscapeMessage(Summary(flags.out, *plans, *files));
  }
  return kExitOk;
}

constexpr const char* kDeployFooter =
    "Writes what makes a MIG plan real, under --out (docs/deployment.md):\n"
    "  nodes/<node>.json          the node plan `tessera agent` reconciles its node to:\n"
    "                             MIG instances at their planned starts, one MPS daemon\n"
    "                             per instance, its serving processes and their ports\n"
    "  triton/<service>/config.pbtxt, triton/<service>/configs/b<batch>.pbtxt\n"
    "                             Triton model configurations, one per batch in use\n"
    "                             (each process loads its own with --model-config-name);\n"
    "                             put the model at <repository>/<service>/1/model.onnx\n"
    "  mig-parted.yaml            one mig-parted config per node (tessera-<node>): MIG\n"
    "                             mode and profile counts only, since mig-parted cannot\n"
    "                             pin placements\n"
    "  router/haproxy.cfg         the router (HAProxy 2.6): one frontend and backend per\n"
    "                             service, one server per serving process at its node and\n"
    "                             port, balanced by the plan's router (leastconn, the\n"
    "                             default, with weights; first, maxconn = 2 batches;\n"
    "                             weighted; equal);\n"
    "                             a plan made with --router jsq is refused (docs/routing.md)\n"
    "  k8s/                       Namespace, one ConfigMap per node plan, the agent's\n"
    "                             DaemonSet, the router (ConfigMap, Deployment, metrics\n"
    "                             Service), one Service per model (at the router), and per\n"
    "                             serving process a Deployment and a Service (apply with\n"
    "                             kubectl apply -f k8s/)\n\n"
    "Nodes: cluster GPU i lies on node i / N as its local GPU i % N (N = --gpus-per-node);\n"
    "node k is the k-th name of --nodes, else node-<k>. With --transition, the plan is\n"
    "the transition's target and its gpu_map places its GPUs on the cluster first.\n\n"
    "Ports: process p of the instance starting at memory slice s of local GPU g gets\n"
    "http = base + 3k, grpc = http + 1, metrics = http + 2, k = (8g + s) x 48 + p: unique\n"
    "on a node and fixed by the place alone. In Kubernetes each pod uses Triton's own\n"
    "8000-8002 instead.\n\n"
    "--out is created if missing; a folder holding other files than deploy's is refused\n"
    "unless --force (nothing is ever deleted). With --scenario, the plan is first checked\n"
    "with the validator and the queue delays use the scenario's rates and SLOs.\n\n"
    "Exit codes: 0 written, 2 bad input (the error names the file, field or flag).\n\n"
    "Examples:\n"
    "  tessera plan --scenario examples/scenarios/s3.yaml --format json -o plan.json\n"
    "  tessera deploy --deployment plan.json --scenario examples/scenarios/s3.yaml --out deploy\n"
    "  tessera deploy --deployment B.json --transition T.json --nodes gpu-a,gpu-b --out deploy\n"
    "  tessera deploy --deployment plan.json --out deploy --gpus-per-node 4 --format json";

}  // namespace

void AddDeployCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "deploy",
      "Write node plans, Triton configs, mig-parted config and Kubernetes manifests for a plan");
  cmd->footer(kDeployFooter);
  auto flags = std::make_shared<DeployFlags>();
  AddInputFlags(*cmd, flags->input);
  DeployArtifactOptions& o = flags->options;
  cmd->add_option("--deployment", flags->deployment, "Deployment JSON of a MIG plan")->required();
  cmd->add_option("--out", flags->out, "Folder to write into (created if missing)")->required();
  cmd->add_option("--gpus-per-node", o.deploy.gpus_per_node, "GPUs per node (default 8)")
      ->check(Within(limits::kGpusPerNode));
  cmd->add_option("--nodes", o.deploy.node_names,
                  "Node names, comma-separated, node 0 first (default node-0, node-1, ...)")
      ->delimiter(',');
  cmd->add_option("--model-repository", o.deploy.serving.model_repository,
                  "Triton model repository on each node (default /models)");
  cmd->add_option("--base-port", o.deploy.serving.base_port,
                  "First port of a node's serving processes (default 20000)")
      ->check(Within(limits::kPort));
  cmd->add_option("--mps-root", o.deploy.serving.mps_root,
                  "Folder of the MPS pipe and log folders (default /run/tessera/mps)");
  cmd->add_option("--namespace", o.namespace_name, "Kubernetes namespace (default tessera)");
  cmd->add_option("--agent-image", o.agent_image,
                  "Image of the node agent (default tessera:0.1.0)");
  cmd->add_option("--triton-image", o.triton_image,
                  "Image of the serving processes (default nvcr.io/nvidia/tritonserver:24.08-py3)");
  cmd->add_option("--router-image", o.router_image,
                  "Image of the router, HAProxy 2.6 (default haproxy:2.6)");
  cmd->add_option("--router-base-port", o.router_base_port,
                  "The router's port for the first service; the next services' follow in plan "
                  "order (default 9000; 8404 is its metrics port)")
      ->check(Within(limits::kPort));
  cmd->add_option("--driver-lib-dir", o.driver_lib_dir,
                  "Host folder of libnvidia-ml.so.1 (default /usr/lib/x86_64-linux-gnu)");
  cmd->add_option("--transition", flags->transition,
                  "Transition JSON whose target is --deployment: apply its gpu_map");
  cmd->add_option("--format", flags->format,
                  "Print a summary table (text, default) or the written files (json)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--force", flags->force,
                "Write into a folder that holds other files too (nothing is deleted)");
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace tessera::cli
