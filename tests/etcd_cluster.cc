#include "etcd_cluster.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace tessera::testing {
namespace {

constexpr double kEtcdReadyS = 60;

}  // namespace

std::string KubeBinDir() {
  const char* dir = std::getenv("TESSERA_K8S_BIN_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(TESSERA_K8S_BIN_DIR);
}

Status RequireBinary(const std::string& bin_dir, const std::string& name) {
  const std::filesystem::path binary = std::filesystem::path(bin_dir) / name;
  if (::access(binary.c_str(), X_OK) == 0) return Status::Ok();
  return Status::NotFound(fmt::format(
      "{} is missing: no executable {}; build etcd, kube-apiserver and kube-scheduler with "
      "scripts/k8s-bins.sh (make test runs it first; the tests look in TESSERA_K8S_BIN_DIR)",
      name, binary.string()));
}

EtcdTestCluster::EtcdTestCluster(std::filesystem::path dir, std::string bin_dir)
    : dir_(std::move(dir)), bin_dir_(std::move(bin_dir)), children_(dir_ / "logs") {}

Result<std::unique_ptr<EtcdTestCluster>> EtcdTestCluster::Start(
    const std::filesystem::path& work_dir, const std::string& bin_dir, int members) {
  TESSERA_RETURN_IF_ERROR(RequireBinary(bin_dir, "etcd"));
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::absolute(work_dir, error);
  if (!error) std::filesystem::create_directories(dir / "logs", error);
  if (error) {
    return Status::IoError(fmt::format("cannot create {}: {}", work_dir.string(), error.message()));
  }
  std::unique_ptr<EtcdTestCluster> cluster(new EtcdTestCluster(dir, bin_dir));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(2 * members));
  for (int i = 0; i < members; ++i) {
    cluster->clients_.push_back(fmt::format("http://127.0.0.1:{}", ports[2 * i]));
    cluster->peers_.push_back(fmt::format("http://127.0.0.1:{}", ports[2 * i + 1]));
  }
  for (int i = 0; i < members; ++i) TESSERA_RETURN_IF_ERROR(cluster->Launch(i));
  for (int i = 0; i < members; ++i) TESSERA_RETURN_IF_ERROR(cluster->WaitHealthy(i));
  return cluster;
}

std::string EtcdTestCluster::endpoints() const {
  std::string out;
  for (const std::string& url : clients_) out += (out.empty() ? "" : ",") + url;
  return out;
}

Status EtcdTestCluster::Launch(int member) {
  std::string initial;
  for (size_t i = 0; i < peers_.size(); ++i) {
    initial += fmt::format("{}{}={}", i == 0 ? "" : ",", Name(static_cast<int>(i)), peers_[i]);
  }
  const std::string& client = clients_[member];
  const std::string& peer = peers_[member];
  std::vector<std::string> argv = {
      (std::filesystem::path(bin_dir_) / "etcd").string(), "--name=" + Name(member),
      "--data-dir=" + (dir_ / Name(member)).string(), "--listen-client-urls=" + client,
      "--advertise-client-urls=" + client, "--listen-peer-urls=" + peer,
      "--initial-advertise-peer-urls=" + peer, "--initial-cluster=" + initial,
      "--initial-cluster-state=new", "--initial-cluster-token=tessera-test",
      // A test's data: no need to survive a power cut.
      "--unsafe-no-fsync=true"};
  if (peers_.size() == 1) {
    // A lone member elects itself after one election timeout (1 s by
    // default) and never again: a short one starts it 10 times faster.
    argv.push_back("--heartbeat-interval=10");
    argv.push_back("--election-timeout=100");
  }
  return children_.Launch(Name(member), argv);
}

Status EtcdTestCluster::WaitHealthy(int member) {
  httplib::Client probe(clients_[member]);
  SetProbeTimeouts(probe);
  return children_.WaitReady(Name(member), kEtcdReadyS,
                             [&] { return ProbeHttp(probe, "/health"); });
}

Status EtcdTestCluster::Kill(int member) { return children_.Signal(Name(member), SIGKILL); }

Status EtcdTestCluster::Restart(int member, bool wait) {
  TESSERA_RETURN_IF_ERROR(Launch(member));
  return wait ? WaitHealthy(member) : Status::Ok();
}

bool EtcdTestCluster::Running(int member) const { return children_.Running(Name(member)); }

std::string EtcdTestCluster::LogTail(int member) const { return children_.LogTail(Name(member)); }

}  // namespace tessera::testing
