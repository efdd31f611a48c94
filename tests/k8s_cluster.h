// KubeTestCluster: a real Kubernetes control plane on loopback for the
// scheduler extender's tests: etcd, kube-apiserver and, on request,
// kube-scheduler, the binaries scripts/k8s-bins.sh builds (no kubelet and no
// controller manager: pods are scheduled, never run).
//
// Start() writes into its work directory a CA, the API server's serving
// certificate (127.0.0.1 and localhost), a service-account key pair, a static
// token file with one admin token (user "admin", group system:masters) and a
// kubeconfig holding the CA and that token; then starts etcd and the API
// server on free 127.0.0.1 ports and waits until both are ready. Nothing
// listens outside 127.0.0.1. As no controller manager runs, the API server's
// admission plugins ServiceAccount and TaintNodesByCondition are off: pods
// need no service account, and a node created with a Ready condition in its
// status is schedulable at once (no not-ready taint).
//
// Each process runs in its own process group with stdout and stderr in
// <work_dir>/logs/<name>.log; a start that fails returns a Status with the
// last 20 lines of that log. The destructor sends SIGTERM to every group,
// waits up to 5 s, sends SIGKILL and reaps. The processes get SIGKILL when
// the thread that started them ends (PR_SET_PDEATHSIG), so a test process
// that dies leaves nothing behind.
//
// Thread-safety: none; one thread owns a cluster.
#ifndef TESSERA_TESTS_K8S_CLUSTER_H_
#define TESSERA_TESTS_K8S_CLUSTER_H_

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "etcd_cluster.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/status.h"
#include "test_processes.h"

namespace tessera::testing {

class KubeTestCluster {
 public:
  // Creates `work_dir` when missing. NotFound naming the binary and
  // scripts/k8s-bins.sh when one of the three is not in `bin_dir`; IoError
  // with the process's log tail when etcd or the API server exits or is not
  // ready in time.
  static Result<std::unique_ptr<KubeTestCluster>> Start(const std::filesystem::path& work_dir,
                                                        const std::string& bin_dir);
  ~KubeTestCluster();
  KubeTestCluster(const KubeTestCluster&) = delete;
  KubeTestCluster& operator=(const KubeTestCluster&) = delete;

  // A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) that
  // connects with this cluster's kubeconfig, without leader election,
  // followed by `extra_yaml` (top-level keys such as `extenders:` and
  // `profiles:`).
  std::string SchedulerConfig(const std::string& extra_yaml = "") const;
  // Writes `config_yaml` to <work_dir>/scheduler.yaml and starts
  // kube-scheduler with it, serving its health checks on a free 127.0.0.1
  // port; returns when its /readyz answers 200 (its informers have synced).
  // InvalidArgument when a scheduler is already running; IoError with its
  // log tail when it exits (a bad configuration) or is not ready in time
  // (then it is stopped).
  Status StartScheduler(const std::string& config_yaml);
  // Stops the scheduler as the destructor does. InvalidArgument when none
  // was started.
  Status StopScheduler();

  const std::string& server() const { return server_; }  // "https://127.0.0.1:PORT"
  std::string ca_file() const { return (dir_ / "ca.crt").string(); }
  const std::string& token() const { return token_; }
  std::string kubeconfig() const { return (dir_ / "kubeconfig").string(); }
  // What KubeClient::Create needs to reach the API server as the admin.
  KubeConfig config() const;

 private:
  KubeTestCluster(std::filesystem::path dir, std::string bin_dir);

  std::string Binary(const std::string& name) const {
    return (std::filesystem::path(bin_dir_) / name).string();
  }
  Status WriteCredentials();
  Status StartEtcd();
  Status StartApiServer();
  // The kubeconfig of the admin: the server, the CA and the token.
  Status WriteKubeconfig() const;

  std::filesystem::path dir_;
  std::string bin_dir_;
  std::string token_;
  std::string server_;
  std::unique_ptr<EtcdTestCluster> etcd_;
  TestProcesses children_;  // declared after etcd_: stopped before it
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_K8S_CLUSTER_H_
