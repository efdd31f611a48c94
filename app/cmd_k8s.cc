// `tessera k8s`: what running the scheduler extender on Kubernetes needs
// (docs/kubernetes.md): the KubeSchedulerConfiguration that points
// kube-scheduler at `tessera serve --kubeconfig`, and a trace's nodes and
// pods as Kubernetes objects, to submit the sequence `tessera replay` replays.
#include <memory>
#include <string>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/k8s/kube_manifests.h"
#include "tessera/util/text_io.h"
#include "trace_flags.h"

namespace tessera::cli {
namespace {

struct SchedulerConfigFlags {
  SchedulerConfigOptions options;
  bool no_leader_election = false;
  std::string output;
};

struct ManifestFlags {
  TraceRequest trace;
  ManifestOptions options;
  std::string only;  // "", "nodes" or "pods"
  std::string output;
};

int RunSchedulerConfig(SchedulerConfigFlags flags) {
  if (!flags.options.extender_url.starts_with("http://") &&
      !flags.options.extender_url.starts_with("https://")) {
    return ReportError(
        Status::InvalidArgument("--extender-url: must start with http:// or "
                                "https://, got " +
                                QuoteForMessage(flags.options.extender_url)));
  }
  flags.options.leader_elect = !flags.no_leader_election;
  if (Status s = WriteOutput(flags.output, SchedulerConfigYaml(flags.options)); !s.ok())
    return ReportError(s);
  return kExitOk;
}

int RunManifests(ManifestFlags flags) {
  Result<VmTrace> trace = LoadShapedTrace(flags.trace);
  if (!trace.ok()) return ReportError(trace.status());
  flags.options.nodes = flags.only != "pods";
  flags.options.pods = flags.only != "nodes";
  const std::string json = TraceAsKubeObjects(*trace, flags.options).dump(1) + "\n";
  if (Status s = WriteOutput(flags.output, json); !s.ok()) return ReportError(s);
  PrintMessage("tessera: " + std::to_string(flags.options.nodes ? trace->hosts.size() : 0) +
               " nodes and " + std::to_string(flags.options.pods ? trace->vms.size() : 0) +
               " pods (trace order)\n");
  return kExitOk;
}

constexpr const char* kK8sHelp =
    "Kubernetes helpers for the scheduler extender of `tessera serve --kubeconfig`\n"
    "(docs/kubernetes.md). Pods ask for one MIG slice with the extended resource\n"
    "tessera.io/mig-<profile> (limit 1); nodes carry the label tessera.io/gpus=<count>.\n\n"
    "Examples:\n"
    "  tessera k8s scheduler-config --extender-url http://127.0.0.1:8080/scheduler \\\n"
    "      --kubeconfig /etc/kubernetes/scheduler.conf -o tessera-scheduler.yaml\n"
    "  D=/path/to/data/alibaba-gpu-2023/csv   # docs/data-sources.md\n"
    "  tessera k8s manifests --nodes $D/openb_node_list_gpu_node.csv \\\n"
    "      --pods $D/openb_pod_list_default.csv --gpu A100-80GB --hosts 20 --lifetime none \\\n"
    "      -o trace.json   # kubectl create -f trace.json";

}  // namespace

void AddK8sCommand(CLI::App& app, int& exit_code) {
  CLI::App* k8s = app.add_subcommand(
      "k8s", "Kubernetes: the scheduler configuration for the extender, traces as objects");
  k8s->footer(kK8sHelp);
  k8s->require_subcommand(1);

  auto config = std::make_shared<SchedulerConfigFlags>();
  CLI::App* cfg = k8s->add_subcommand(
      "scheduler-config", "Print the KubeSchedulerConfiguration that uses Tessera's extender");
  cfg->add_option("--extender-url", config->options.extender_url,
                  "URL prefix of the extender's verbs: tessera serve's address + /scheduler")
      ->capture_default_str();
  cfg->add_option("--kubeconfig", config->options.kubeconfig,
                  "kube-scheduler's kubeconfig (clientConnection.kubeconfig)");
  cfg->add_option("--weight", config->options.weight,
                  "Extender weight; its node gets weight x 100 points over the others")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cfg->add_option("--http-timeout", config->options.http_timeout_s,
                  "Seconds kube-scheduler waits for each extender call")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  cfg->add_flag("--no-leader-election", config->no_leader_election,
                "leaderElect: false (a single scheduler, e.g. for tests)");
  cfg->add_option("-o,--output", config->output, "Write to FILE (default stdout)");
  cfg->callback([config, &exit_code] { exit_code = RunSchedulerConfig(*config); });

  auto manifests = std::make_shared<ManifestFlags>();
  CLI::App* man = k8s->add_subcommand(
      "manifests", "Write a trace's nodes and pods as a Kubernetes List (JSON), in trace order");
  AddTraceFlags(*man, manifests->trace);
  man->add_option("--namespace", manifests->options.ns, "Namespace of the pods")
      ->capture_default_str();
  man->add_option("--image", manifests->options.image, "Container image of the pods")
      ->capture_default_str();
  man->add_option("--only", manifests->only, "Write only the nodes or only the pods")
      ->check(CLI::IsMember({"nodes", "pods"}));
  man->add_option("-o,--output", manifests->output, "Write to FILE (default stdout)");
  man->callback([manifests, &exit_code] { exit_code = RunManifests(*manifests); });
}

}  // namespace tessera::cli
