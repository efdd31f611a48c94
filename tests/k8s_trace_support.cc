// The cluster tests' shared helpers (k8s_trace_support.h).
#include "k8s_trace_support.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "agent_fixture.h"
#include "online/alibaba_trace.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"

namespace tessera::testing {

namespace fs = std::filesystem;

void KubeControlPlaneTest::SetUp() {
  CliTest::SetUp();
  Result<std::unique_ptr<KubeTestCluster>> cluster =
      KubeTestCluster::Start(dir_ / "cluster", KubeBinDir());
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  cluster_ = std::move(*cluster);
  Result<std::unique_ptr<KubeClient>> client = KubeClient::Create(cluster_->config());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  client_ = std::move(*client);
}

std::string WriteMixedTrace(const fs::path& dir, int nodes, int gpus, int pods,
                            const std::vector<double>& weights, unsigned seed) {
  std::string node_csv = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int n = 0; n < nodes; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "node-%02d", n);
    node_csv += std::string(name) + ",128000,1048576," + std::to_string(gpus) + ",A100\n";
  }
  // U_k / max U of A100-80GB's profiles (compute x memory slices / 56), in
  // thousandths: the share that maps to each.
  const int share[] = {18, 36, 71, 214, 286, 1000};
  std::mt19937 rng(seed);
  std::discrete_distribution<int> draw(weights.begin(), weights.end());
  std::string pod_csv =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  for (int p = 0; p < pods; ++p) {
    char name[32];
    std::snprintf(name, sizeof name, "pod-%03d", p);
    const int milli = p == 0 ? 1000 : share[draw(rng)];
    pod_csv += std::string(name) + ",1000,4096,1," + std::to_string(milli) + ",,LS,Running," +
               std::to_string(10 * p) + "," + std::to_string(10 * p + 100000) + "," +
               std::to_string(10 * p) + "\n";
  }
  WriteTextFile(dir / "nodes.csv", node_csv);
  WriteTextFile(dir / "pods.csv", pod_csv);
  return "--nodes " + Quote((dir / "nodes.csv").string()) + " --pods " +
         Quote((dir / "pods.csv").string()) + " --gpu A100-80GB --lifetime none";
}

const GpuModel& A100_80() { return **FindMigGpu("A100-80GB"); }

ReplayOutcome ReplayInProcess(const std::string& nodes, const std::string& pods,
                              const GpuModel& gpu, const TraceShaping& shaping) {
  ReplayOutcome outcome;
  Result<VmTrace> loaded = LoadAlibabaTrace(nodes, pods, gpu);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return outcome;
  Result<VmTrace> trace = ShapeTrace(std::move(*loaded), shaping);
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  if (!trace.ok()) return outcome;
  PlacerOptions options;
  options.defragment = false;
  std::unique_ptr<OnlinePlacer> grmu = BuiltinPlacers().Create("grmu", options).value();
  ReplayOptions replay;
  replay.after_event = [&](const OnlineCluster& cluster) {
    outcome.active_gpus = cluster.active_gpus();
    for (const VmRequest& vm : trace->vms) {
      const VmLocation at = cluster.LocationOf(vm.id);
      if (at.gpu < 0) continue;
      const int host = cluster.HostOf(at.gpu);
      outcome.placed[vm.name] = {trace->hosts[host].name, at.gpu - cluster.FirstGpuOf(host),
                                 at.start};
    }
  };
  EXPECT_TRUE(tessera::Replay(*trace, *grmu, replay).ok());
  return outcome;
}

}  // namespace tessera::testing
