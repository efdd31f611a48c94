// Scheduler configuration and trace manifests (kube_manifests.h).
#include "tessera/k8s/kube_manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "tessera/gpu_catalog.h"
#include "tessera/k8s/scheduler_extender.h"

namespace tessera {
namespace {

using nlohmann::json;

// A DNS-1123 name: lowercase letters, digits, '-' and '.', alphanumeric at
// both ends.
std::string KubeName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : (c == '.' ? '.' : '-');
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  out.erase(0, std::min(out.size(), out.find_first_not_of("-.")));
  return out.empty() ? "unnamed" : out;
}

std::string Milli(double cpu_milli) {
  return fmt::format("{}m", static_cast<long long>(cpu_milli));
}
std::string Mebi(double memory_mib) {
  return fmt::format("{}Mi", static_cast<long long>(memory_mib));
}

}  // namespace

std::vector<std::string> ManagedMigResources() {
  std::set<std::string> names;
  for (const GpuModel* gpu : AllMigGpus()) {
    for (const MigProfile& profile : gpu->profiles) {
      if (!profile.media_extensions) names.insert(std::string(kMigResourcePrefix) + profile.name);
    }
  }
  return {names.begin(), names.end()};
}

std::string SchedulerExtenderYaml(const SchedulerConfigOptions& options) {
  std::string yaml =
      "# Score every feasible node, so that the extender sees them all.\n"
      "percentageOfNodesToScore: 100\n"
      "extenders:\n";
  yaml += fmt::format(
      "- urlPrefix: \"{}\"\n"
      "  filterVerb: filter\n"
      "  prioritizeVerb: prioritize\n"
      "  bindVerb: bind\n"
      "  weight: {}\n"
      "  enableHTTPS: false\n"
      "  nodeCacheCapable: true\n"
      "  httpTimeout: {}s\n"
      "  ignorable: false\n"
      "  managedResources:\n",
      options.extender_url, options.weight, options.http_timeout_s);
  for (const std::string& name : ManagedMigResources()) {
    yaml += fmt::format("  - name: {}\n    ignoredByScheduler: true\n", name);
  }
  return yaml;
}

std::string SchedulerConfigYaml(const SchedulerConfigOptions& options) {
  std::string yaml =
      "# kube-scheduler with Tessera's scheduler extender (tessera k8s scheduler-config;\n"
      "# docs/kubernetes.md). Run: kube-scheduler --config THIS_FILE\n"
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n";
  if (!options.kubeconfig.empty()) {
    yaml += fmt::format("clientConnection:\n  kubeconfig: \"{}\"\n", options.kubeconfig);
  }
  yaml += fmt::format("leaderElection:\n  leaderElect: {}\n", options.leader_elect);
  return yaml + SchedulerExtenderYaml(options);
}

json TraceAsKubeObjects(const VmTrace& trace, const ManifestOptions& options) {
  json items = json::array();
  const std::string room = std::to_string(std::max<size_t>(110, trace.vms.size()));
  for (size_t h = 0; options.nodes && h < trace.hosts.size(); ++h) {
    const HostSpec& host = trace.hosts[h];
    const json resources = {
        {"cpu", Milli(host.cpu_milli)}, {"memory", Mebi(host.memory_mib)}, {"pods", room}};
    const std::string name = KubeName(host.name);
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", name},
                       {"labels",
                        {{std::string(kGpusLabel), std::to_string(host.gpus)},
                         {"kubernetes.io/hostname", name}}}}},
                     {"status",
                      {{"capacity", resources},
                       {"allocatable", resources},
                       {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }
  for (size_t v = 0; options.pods && v < trace.vms.size(); ++v) {
    const VmRequest& vm = trace.vms[v];
    const std::string resource =
        std::string(kMigResourcePrefix) + trace.gpu->profiles[vm.profile].name;
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", KubeName(vm.name)}, {"namespace", options.ns}}},
         {"spec",
          {{"terminationGracePeriodSeconds", 0},
           {"containers",
            json::array(
                {{{"name", "main"},
                  {"image", options.image},
                  {"resources",
                   {{"requests", {{"cpu", Milli(vm.cpu_milli)}, {"memory", Mebi(vm.memory_mib)}}},
                    {"limits", {{resource, "1"}}}}}}})}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

}  // namespace tessera
