#include "k8s_cluster.h"

#include <fmt/format.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

namespace tessera::testing {
namespace {

constexpr const char* kBinaries[] = {"etcd", "kube-apiserver", "kube-scheduler"};
constexpr const char* kOpenssl = "/usr/bin/openssl";
// The API server was ready in 4-5 s on a shared 2-core machine; the limits
// leave room for a machine busy with ctest's other tests.
constexpr double kApiServerReadyS = 120;
constexpr double kSchedulerReadyS = 60;

std::string RandomToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", random());
  return token;
}

// A YAML double-quoted scalar of `text` (JSON's string syntax is YAML's).
std::string YamlQuoted(const std::string& text) { return nlohmann::json(text).dump(); }

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path.string());
  return Status::Ok();
}

}  // namespace

KubeTestCluster::KubeTestCluster(std::filesystem::path dir, std::string bin_dir)
    : dir_(std::move(dir)),
      bin_dir_(std::move(bin_dir)),
      token_(RandomToken()),
      children_(dir_ / "logs") {}

// children_ (the API server, the scheduler) stop before etcd_: the API
// server stops cleanly only while etcd runs.
KubeTestCluster::~KubeTestCluster() = default;

Result<std::unique_ptr<KubeTestCluster>> KubeTestCluster::Start(
    const std::filesystem::path& work_dir, const std::string& bin_dir) {
  for (const char* name : kBinaries) TESSERA_RETURN_IF_ERROR(RequireBinary(bin_dir, name));
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::absolute(work_dir, error);
  if (!error) std::filesystem::create_directories(dir / "logs", error);
  if (error) {
    return Status::IoError(fmt::format("cannot create {}: {}", work_dir.string(), error.message()));
  }
  std::unique_ptr<KubeTestCluster> cluster(new KubeTestCluster(dir, bin_dir));
  TESSERA_RETURN_IF_ERROR(cluster->WriteCredentials());
  TESSERA_RETURN_IF_ERROR(cluster->StartEtcd());
  TESSERA_RETURN_IF_ERROR(cluster->StartApiServer());
  TESSERA_RETURN_IF_ERROR(cluster->WriteKubeconfig());
  return cluster;
}

KubeConfig KubeTestCluster::config() const {
  KubeConfig config;
  config.server = server_;
  config.ca_file = ca_file();
  config.token = token_;
  return config;
}

Status KubeTestCluster::WriteCredentials() {
  const auto path = [this](const char* name) { return (dir_ / name).string(); };
  TESSERA_RETURN_IF_ERROR(children_.Run(
      "openssl", {kOpenssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=tessera-test-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign", "-keyout", path("ca.key"), "-out",
                  path("ca.crt")}));
  TESSERA_RETURN_IF_ERROR(children_.Run(
      "openssl", {kOpenssl, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
                  "-keyout", path("apiserver.key"), "-out", path("apiserver.csr")}));
  TESSERA_RETURN_IF_ERROR(WriteFile(dir_ / "apiserver.ext",
                                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                    "extendedKeyUsage=serverAuth\n"));
  TESSERA_RETURN_IF_ERROR(children_.Run(
      "openssl", {kOpenssl, "x509", "-req", "-in", path("apiserver.csr"), "-CA", path("ca.crt"),
                  "-CAkey", path("ca.key"), "-set_serial", "2", "-days", "2", "-extfile",
                  path("apiserver.ext"), "-out", path("apiserver.crt")}));
  TESSERA_RETURN_IF_ERROR(
      children_.Run("openssl", {kOpenssl, "genpkey", "-algorithm", "RSA", "-pkeyopt",
                                "rsa_keygen_bits:2048", "-out", path("sa.key")}));
  TESSERA_RETURN_IF_ERROR(children_.Run(
      "openssl", {kOpenssl, "pkey", "-in", path("sa.key"), "-pubout", "-out", path("sa.pub")}));
  // token,user,uid,"groups"
  return WriteFile(dir_ / "tokens.csv", token_ + ",admin,admin,\"system:masters\"\n");
}

Status KubeTestCluster::StartEtcd() {
  TESSERA_ASSIGN_OR_RETURN(etcd_, EtcdTestCluster::Start(dir_, bin_dir_, 1));
  return Status::Ok();
}

Status KubeTestCluster::StartApiServer() {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(1));
  server_ = fmt::format("https://127.0.0.1:{}", ports[0]);
  const auto file = [this](const char* name) { return (dir_ / name).string(); };
  TESSERA_RETURN_IF_ERROR(children_.Launch(
      "kube-apiserver",
      {Binary("kube-apiserver"), "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
       fmt::format("--secure-port={}", ports[0]), "--etcd-servers=" + etcd_->endpoint(0),
       "--tls-cert-file=" + file("apiserver.crt"),
       "--tls-private-key-file=" + file("apiserver.key"), "--client-ca-file=" + file("ca.crt"),
       "--token-auth-file=" + file("tokens.csv"), "--authorization-mode=RBAC",
       "--service-account-issuer=https://kubernetes.default.svc",
       "--service-account-key-file=" + file("sa.pub"),
       "--service-account-signing-key-file=" + file("sa.key"),
       "--service-cluster-ip-range=10.96.0.0/16",
       // The reconciler of the `kubernetes` service's endpoints refuses a
       // loopback advertise address.
       "--endpoint-reconciler-type=none",
       // No controller manager runs: it would create the service accounts
       // the ServiceAccount plugin gives every pod (without them, pods are
       // refused), and take off the not-ready taint TaintNodesByCondition
       // puts on every new node (a node created Ready would stay
       // unschedulable).
       "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"}));
  httplib::Client probe(server_);
  probe.set_ca_cert_path(ca_file().c_str());
  probe.set_bearer_token_auth(token_.c_str());
  SetProbeTimeouts(probe);
  return children_.WaitReady("kube-apiserver", kApiServerReadyS,
                             [&] { return ProbeHttp(probe, "/readyz"); });
}

Status KubeTestCluster::WriteKubeconfig() const {
  return WriteFile(kubeconfig(),
                   fmt::format("apiVersion: v1\n"
                               "kind: Config\n"
                               "clusters:\n"
                               "- name: tessera-test\n"
                               "  cluster:\n"
                               "    server: {}\n"
                               "    certificate-authority: {}\n"
                               "users:\n"
                               "- name: admin\n"
                               "  user:\n"
                               "    token: {}\n"
                               "contexts:\n"
                               "- name: tessera-test\n"
                               "  context:\n"
                               "    cluster: tessera-test\n"
                               "    user: admin\n"
                               "current-context: tessera-test\n",
                               YamlQuoted(server_), YamlQuoted(ca_file()), YamlQuoted(token_)));
}

std::string KubeTestCluster::SchedulerConfig(const std::string& extra_yaml) const {
  return fmt::format(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "clientConnection:\n"
      "  kubeconfig: {}\n"
      "leaderElection:\n"
      "  leaderElect: false\n"
      "{}",
      YamlQuoted(kubeconfig()), extra_yaml);
}

Status KubeTestCluster::StartScheduler(const std::string& config_yaml) {
  if (children_.Started("kube-scheduler")) {
    return Status::InvalidArgument("kube-scheduler is running already: StopScheduler first");
  }
  const std::filesystem::path config = dir_ / "scheduler.yaml";
  TESSERA_RETURN_IF_ERROR(WriteFile(config, config_yaml));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(1));
  TESSERA_RETURN_IF_ERROR(children_.Launch(
      "kube-scheduler", {Binary("kube-scheduler"), "--config=" + config.string(),
                         "--bind-address=127.0.0.1", fmt::format("--secure-port={}", ports[0])}));
  // Its serving certificate is self-signed, made when it starts.
  httplib::Client probe(fmt::format("https://127.0.0.1:{}", ports[0]));
  probe.enable_server_certificate_verification(false);
  SetProbeTimeouts(probe);
  const Status ready = children_.WaitReady("kube-scheduler", kSchedulerReadyS,
                                           [&] { return ProbeHttp(probe, "/readyz"); });
  if (!ready.ok()) (void)StopScheduler();
  return ready;
}

Status KubeTestCluster::StopScheduler() {
  if (!children_.Started("kube-scheduler")) {
    return Status::InvalidArgument("no kube-scheduler to stop: StartScheduler first");
  }
  return children_.Stop("kube-scheduler");
}

}  // namespace tessera::testing
