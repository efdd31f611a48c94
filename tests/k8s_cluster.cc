#include "k8s_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

namespace tessera::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kBinaries[] = {"etcd", "kube-apiserver", "kube-scheduler"};
constexpr const char* kOpenssl = "/usr/bin/openssl";
constexpr int kLogTailLines = 20;
constexpr double kStopGraceS = 5;
constexpr double kEtcdReadyS = 60;
// The API server was ready in 4-5 s on a shared 2-core machine; the limits
// leave room for a machine busy with ctest's other tests.
constexpr double kApiServerReadyS = 120;
constexpr double kSchedulerReadyS = 60;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `count` distinct free TCP ports of 127.0.0.1: each stays bound until all
// are chosen, so none is chosen twice.
Result<std::vector<int>> FreePorts(int count) {
  std::vector<int> sockets, ports;
  Status status;
  for (int i = 0; i < count && status.ok(); ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = Status::IoError(fmt::format("no free port on 127.0.0.1: {}", std::strerror(errno)));
    } else {
      ports.push_back(ntohs(addr.sin_port));
    }
    if (fd >= 0) sockets.push_back(fd);
  }
  for (int fd : sockets) ::close(fd);
  if (!status.ok()) return status;
  return ports;
}

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

// Starts `argv` (argv[0] a path) in a new process group whose ID is its PID,
// stdin from /dev/null, stdout and stderr appended to `log`, killed when the
// calling thread ends. IoError when it cannot be run.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int report[2] = {-1, -1};
  Status status;
  if (in < 0 || out < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    status = Status::IoError(fmt::format("cannot open {} or /dev/null, or make a pipe: {}",
                                         log.string(), std::strerror(errno)));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = status.ok() ? ::fork() : -1;
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the test process has threads.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent ended before prctl
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(args[0], args.data());
    const int err = errno;
    [[maybe_unused]] const ssize_t n = ::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  if (status.ok() && pid < 0) {
    status = Status::IoError(fmt::format("fork for {}: {}", argv[0], std::strerror(errno)));
  }
  if (pid > 0) {
    ::setpgid(pid, pid);  // as the child does: whichever runs first
    ::close(report[1]);
    report[1] = -1;
    int err = 0;
    ssize_t n;
    do {
      n = ::read(report[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof err)) {
      ::waitpid(pid, nullptr, 0);
      status = Status::IoError(fmt::format("cannot run {}: {}", argv[0], std::strerror(err)));
    }
  }
  for (int fd : {in, out, report[0], report[1]}) {
    if (fd >= 0) ::close(fd);
  }
  if (!status.ok()) return status;
  return pid;
}

// Whether `pid` (a child) has ended, leaving it to be reaped; `how` says how.
bool Ended(pid_t pid, std::string* how) {
  siginfo_t info{};
  if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
    return false;
  }
  *how = info.si_code == CLD_EXITED ? fmt::format("exited with status {}", info.si_status)
                                    : fmt::format("was killed by signal {}", info.si_status);
  return true;
}

// SIGTERM to the group, up to kStopGraceS for its leader to end, then
// SIGKILL to the group (whatever is left of it) and reaps the leader.
void StopGroup(pid_t pid) {
  ::kill(-pid, SIGTERM);
  const Clock::time_point start = Clock::now();
  std::string how;
  while (!Ended(pid, &how) && SecondsSince(start) < kStopGraceS) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A leader not yet reaped keeps its group's ID from being reused.
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// "" when GET `path` answers 200, otherwise what it answered.
std::string Probe(httplib::Client& client, const std::string& path) {
  const httplib::Result reply = client.Get(path.c_str());
  if (!reply) return fmt::format("GET {}: {}", path, httplib::to_string(reply.error()));
  if (reply->status == 200) return "";
  return fmt::format("GET {} answers {}: {}", path, reply->status, reply->body);
}

void SetProbeTimeouts(httplib::Client& client) {
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(5, 0);
}

}  // namespace

std::string KubeBinDir() {
  const char* dir = std::getenv("TESSERA_K8S_BIN_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(TESSERA_K8S_BIN_DIR);
}

KubeTestCluster::KubeTestCluster(std::filesystem::path dir, std::string bin_dir)
    : dir_(std::move(dir)), bin_dir_(std::move(bin_dir)), token_(RandomToken()) {}

// The last started first: the API server stops cleanly only while etcd runs.
KubeTestCluster::~KubeTestCluster() {
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) StopGroup(it->pid);
}

Result<std::unique_ptr<KubeTestCluster>> KubeTestCluster::Start(
    const std::filesystem::path& work_dir, const std::string& bin_dir) {
  for (const char* name : kBinaries) {
    const std::filesystem::path binary = std::filesystem::path(bin_dir) / name;
    if (::access(binary.c_str(), X_OK) != 0) {
      return Status::NotFound(fmt::format(
          "{} is missing: no executable {}; build etcd, kube-apiserver and kube-scheduler with "
          "scripts/k8s-bins.sh (make test runs it first; the tests look in TESSERA_K8S_BIN_DIR)",
          name, binary.string()));
    }
  }
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

std::filesystem::path KubeTestCluster::LogPath(const std::string& name) const {
  return dir_ / "logs" / (name + ".log");
}

std::string KubeTestCluster::LogTail(const std::string& name) const {
  std::ifstream in(LogPath(name));
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > kLogTailLines) lines.pop_front();
  }
  std::string tail = fmt::format("the last {} lines of {}:", kLogTailLines, LogPath(name).string());
  for (const std::string& line : lines) tail += "\n" + line;
  return tail;
}

Status KubeTestCluster::Run(const std::string& log, const std::vector<std::string>& argv) {
  TESSERA_ASSIGN_OR_RETURN(const pid_t pid, Spawn(argv, LogPath(log)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string command;
  for (const std::string& arg : argv) command += (command.empty() ? "" : " ") + arg;
  return Status::IoError(fmt::format("'{}' failed; {}", command, LogTail(log)));
}

Status KubeTestCluster::Launch(const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {(std::filesystem::path(bin_dir_) / name).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  TESSERA_ASSIGN_OR_RETURN(const pid_t pid, Spawn(argv, LogPath(name)));
  processes_.push_back({name, pid});
  return Status::Ok();
}

Status KubeTestCluster::WaitReady(const Process& process, double timeout_s,
                                  const std::function<std::string()>& probe) const {
  const Clock::time_point start = Clock::now();
  std::string last, how;
  while (true) {
    last = probe();
    if (last.empty()) {
      std::fprintf(stderr, "KubeTestCluster: %s ready in %.1f s\n", process.name.c_str(),
                   SecondsSince(start));
      return Status::Ok();
    }
    if (Ended(process.pid, &how)) {
      return Status::IoError(fmt::format("{} {} before it was ready ({}); {}", process.name, how,
                                         last, LogTail(process.name)));
    }
    if (SecondsSince(start) > timeout_s) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::IoError(fmt::format("{} not ready after {} s ({}); {}", process.name, timeout_s,
                                     last, LogTail(process.name)));
}

Status KubeTestCluster::WriteCredentials() {
  const auto path = [this](const char* name) { return (dir_ / name).string(); };
  TESSERA_RETURN_IF_ERROR(Run(
      "openssl", {kOpenssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=tessera-test-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign", "-keyout", path("ca.key"), "-out",
                  path("ca.crt")}));
  TESSERA_RETURN_IF_ERROR(Run(
      "openssl", {kOpenssl, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
                  "-keyout", path("apiserver.key"), "-out", path("apiserver.csr")}));
  TESSERA_RETURN_IF_ERROR(WriteFile(dir_ / "apiserver.ext",
                                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                    "extendedKeyUsage=serverAuth\n"));
  TESSERA_RETURN_IF_ERROR(
      Run("openssl", {kOpenssl, "x509", "-req", "-in", path("apiserver.csr"), "-CA", path("ca.crt"),
                      "-CAkey", path("ca.key"), "-set_serial", "2", "-days", "2", "-extfile",
                      path("apiserver.ext"), "-out", path("apiserver.crt")}));
  TESSERA_RETURN_IF_ERROR(Run("openssl", {kOpenssl, "genpkey", "-algorithm", "RSA", "-pkeyopt",
                                          "rsa_keygen_bits:2048", "-out", path("sa.key")}));
  TESSERA_RETURN_IF_ERROR(
      Run("openssl", {kOpenssl, "pkey", "-in", path("sa.key"), "-pubout", "-out", path("sa.pub")}));
  // token,user,uid,"groups"
  return WriteFile(dir_ / "tokens.csv", token_ + ",admin,admin,\"system:masters\"\n");
}

Status KubeTestCluster::StartEtcd() {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(2));
  etcd_ = fmt::format("http://127.0.0.1:{}", ports[0]);
  const std::string& client = etcd_;
  const std::string peer = fmt::format("http://127.0.0.1:{}", ports[1]);
  TESSERA_RETURN_IF_ERROR(
      Launch("etcd", {"--name=tessera-test", "--data-dir=" + (dir_ / "etcd").string(),
                      "--listen-client-urls=" + client, "--advertise-client-urls=" + client,
                      "--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
                      "--initial-cluster=tessera-test=" + peer,
                      // A test's data: no need to survive a power cut.
                      "--unsafe-no-fsync=true"}));
  httplib::Client probe(client);
  SetProbeTimeouts(probe);
  return WaitReady(processes_.back(), kEtcdReadyS, [&] { return Probe(probe, "/health"); });
}

Status KubeTestCluster::StartApiServer() {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(1));
  server_ = fmt::format("https://127.0.0.1:{}", ports[0]);
  const auto file = [this](const char* name) { return (dir_ / name).string(); };
  TESSERA_RETURN_IF_ERROR(Launch(
      "kube-apiserver",
      {"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
       fmt::format("--secure-port={}", ports[0]), "--etcd-servers=" + etcd_,
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
  return WaitReady(processes_.back(), kApiServerReadyS, [&] { return Probe(probe, "/readyz"); });
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
  for (const Process& process : processes_) {
    if (process.name == "kube-scheduler") {
      return Status::InvalidArgument("kube-scheduler is running already: StopScheduler first");
    }
  }
  const std::filesystem::path config = dir_ / "scheduler.yaml";
  TESSERA_RETURN_IF_ERROR(WriteFile(config, config_yaml));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int> ports, FreePorts(1));
  TESSERA_RETURN_IF_ERROR(
      Launch("kube-scheduler", {"--config=" + config.string(), "--bind-address=127.0.0.1",
                                fmt::format("--secure-port={}", ports[0])}));
  // Its serving certificate is self-signed, made when it starts.
  httplib::Client probe(fmt::format("https://127.0.0.1:{}", ports[0]));
  probe.enable_server_certificate_verification(false);
  SetProbeTimeouts(probe);
  const Status ready =
      WaitReady(processes_.back(), kSchedulerReadyS, [&] { return Probe(probe, "/readyz"); });
  if (!ready.ok()) (void)StopScheduler();
  return ready;
}

Status KubeTestCluster::StopScheduler() {
  for (auto it = processes_.begin(); it != processes_.end(); ++it) {
    if (it->name == "kube-scheduler") {
      StopGroup(it->pid);
      processes_.erase(it);
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("no kube-scheduler to stop: StartScheduler first");
}

}  // namespace tessera::testing
