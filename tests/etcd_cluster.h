// EtcdTestCluster: a real etcd cluster of one or more members on loopback,
// from the etcd binary scripts/k8s-bins.sh builds: the store of the
// extender's Kubernetes tests and of the replicated control plane's tests.
// Each member listens on free 127.0.0.1 ports with its data in
// <work_dir>/etcd-<i> and its log in <work_dir>/logs/etcd-<i>.log; members
// can be killed and restarted (on their data) to test a store that loses
// members. --unsafe-no-fsync: a test's data need not survive a power cut.
//
// Thread-safety: none; one thread owns a cluster.
#ifndef TESSERA_TESTS_ETCD_CLUSTER_H_
#define TESSERA_TESTS_ETCD_CLUSTER_H_

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tessera/status.h"
#include "test_processes.h"

namespace tessera::testing {

// Where etcd, kube-apiserver and kube-scheduler are: the environment
// variable TESSERA_K8S_BIN_DIR when set, else the build's TESSERA_K8S_BIN_DIR
// (CMake's cache variable of that name, build/k8s/bin by default).
std::string KubeBinDir();

// NotFound naming the binary and scripts/k8s-bins.sh when `name` is not an
// executable in `bin_dir`.
Status RequireBinary(const std::string& bin_dir, const std::string& name);

class EtcdTestCluster {
 public:
  // Starts `members` members and waits until every one answers /health
  // (the cluster has a leader). NotFound when etcd is missing; IoError with
  // a member's log tail when one does not get ready.
  static Result<std::unique_ptr<EtcdTestCluster>> Start(const std::filesystem::path& work_dir,
                                                        const std::string& bin_dir, int members);
  EtcdTestCluster(const EtcdTestCluster&) = delete;
  EtcdTestCluster& operator=(const EtcdTestCluster&) = delete;

  int members() const { return static_cast<int>(clients_.size()); }
  const std::string& endpoint(int member) const { return clients_[member]; }
  // Every member's client URL, comma-separated.
  std::string endpoints() const;
  // SIGKILL to a member.
  Status Kill(int member);
  // Starts a killed member again on its data; waits for its /health when
  // the others hold a quorum with it (`wait`).
  Status Restart(int member, bool wait = true);
  bool Running(int member) const;
  std::string LogTail(int member) const;

 private:
  EtcdTestCluster(std::filesystem::path dir, std::string bin_dir);
  static std::string Name(int member) { return "etcd-" + std::to_string(member); }
  Status Launch(int member);
  Status WaitHealthy(int member);

  std::filesystem::path dir_;
  std::string bin_dir_;
  std::vector<std::string> clients_, peers_;
  TestProcesses children_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_ETCD_CLUSTER_H_
