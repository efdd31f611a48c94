// What the Kubernetes cluster tests (the scheduler extender's and the DRA
// driver's) share: polling, an Alibaba-format trace of mixed A100-80GB
// profiles, and where `tessera replay`'s GRMU (no migrations, the same code
// in-process) puts each pod of a trace, to compare with what the cluster
// did.
#ifndef TESSERA_TESTS_K8S_TRACE_SUPPORT_H_
#define TESSERA_TESTS_K8S_TRACE_SUPPORT_H_

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent_fixture.h"
#include "k8s_cluster.h"
#include "tessera/gpu_catalog.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/online/vm_trace.h"

namespace tessera::testing {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Calls `done` every `poll_ms` until it is true or `timeout_s` passes.
template <typename F>
bool Eventually(F done, double timeout_s, int poll_ms = 100) {
  const auto start = Clock::now();
  while (SecondsSince(start) < timeout_s) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return done();
}

// A test with a real control plane (KubeTestCluster: etcd and
// kube-apiserver, started in SetUp) and an admin client of it; the test
// starts the scheduler and the rest.
class KubeControlPlaneTest : public CliTest {
 protected:
  void SetUp() override;

  std::unique_ptr<KubeTestCluster> cluster_;
  std::unique_ptr<KubeClient> client_;
};

// A trace in the Alibaba format: `nodes` nodes of `gpus` GPUs and `pods`
// pods whose GPU shares map (GRMU Eq. 30) onto A100-80GB's profiles in the
// proportions `weights` (1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb,
// 7g.80gb), from a seeded draw; pod 0 asks for a whole GPU, so that shares
// are normalised by 1000. Writes dir/nodes.csv and dir/pods.csv; returns
// the `tessera replay` / `tessera k8s manifests` flags that read them.
std::string WriteMixedTrace(const std::filesystem::path& dir, int nodes, int gpus, int pods,
                            const std::vector<double>& weights, unsigned seed);

const GpuModel& A100_80();

// Where the replay (GRMU without migrations, the same code in-process) puts
// each VM of a shaped Alibaba-format trace: VM name -> (host, local GPU,
// start), only the accepted ones; and its GPUs in use at the end.
struct ReplayOutcome {
  std::map<std::string, std::tuple<std::string, int, int>> placed;
  int active_gpus = 0;
};

ReplayOutcome ReplayInProcess(const std::string& nodes, const std::string& pods,
                              const GpuModel& gpu, const TraceShaping& shaping);

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_K8S_TRACE_SUPPORT_H_
