// tessera-standin: what the agent tests run in place of NVIDIA's MPS control
// daemon and Triton, so that the node agent is tested end to end without a
// GPU. Each mode checks the environment the agent must give the real thing
// and fails loudly (exit 3, one line on stderr) when it is wrong.
//
//   tessera-standin mps [-d]      an MPS control daemon: needs
//       CUDA_VISIBLE_DEVICES=MIG-... and an existing CUDA_MPS_PIPE_DIRECTORY
//       and CUDA_MPS_LOG_DIRECTORY; writes <pipe>/standin-mps.pid; -d forks
//       into the background as `nvidia-cuda-mps-control -d` does.
//   tessera-standin mps-control   the control command of the daemon of
//       CUDA_MPS_PIPE_DIRECTORY, as `nvidia-cuda-mps-control` with a command on
//       stdin: "get_server_list" exits 0 while the daemon runs, 1 when none
//       does; "quit" stops it.
//   tessera-standin serve --http-port=N [--ready-after-ms=M] [--any=value...]
//       a serving process: needs CUDA_VISIBLE_DEVICES=MIG-..., a running
//       stand-in daemon in CUDA_MPS_PIPE_DIRECTORY, and
//       CUDA_MPS_ACTIVE_THREAD_PERCENTAGE in 1..100; answers
//       GET /v2/health/ready with 200 (after M ms) on 127.0.0.1:N.
// Every mode ends by itself after --lifetime-s (default 600) so that nothing
// outlives a test run; SIGTERM ends it at once.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnTerm(int) { g_stop = 1; }

int Fail(const std::string& what) {
  std::cerr << "tessera-standin: " << what << "\n";
  return 3;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "--name=value" among the arguments, or `otherwise`.
std::string Flag(int argc, char** argv, const std::string& name, const std::string& otherwise) {
  const std::string prefix = "--" + name + "=";
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]).rfind(prefix, 0) == 0) return argv[i] + prefix.size();
  }
  return otherwise;
}

std::string PidFile() { return Env("CUDA_MPS_PIPE_DIRECTORY") + "/standin-mps.pid"; }

void WaitForStop(double lifetime_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(lifetime_s);
  while (!g_stop && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Mps(bool background, double lifetime_s) {
  if (Env("CUDA_VISIBLE_DEVICES").rfind("MIG-", 0) != 0) {
    return Fail("mps: CUDA_VISIBLE_DEVICES is not a MIG UUID: '" + Env("CUDA_VISIBLE_DEVICES") +
                "'");
  }
  if (!IsDir(Env("CUDA_MPS_PIPE_DIRECTORY")) || !IsDir(Env("CUDA_MPS_LOG_DIRECTORY"))) {
    return Fail("mps: CUDA_MPS_PIPE_DIRECTORY or CUDA_MPS_LOG_DIRECTORY is not a directory");
  }
  if (background) {
    const pid_t pid = ::fork();
    if (pid < 0) return Fail("mps: fork failed");
    if (pid > 0) return 0;  // the launcher returns, the daemon lives on
    ::setsid();
  }
  std::ofstream(PidFile() + ".tmp") << ::getpid() << "\n";
  std::rename((PidFile() + ".tmp").c_str(), PidFile().c_str());
  WaitForStop(lifetime_s);
  std::remove(PidFile().c_str());
  return 0;
}

int DaemonPid() {
  std::ifstream in(PidFile());
  int pid = 0;
  in >> pid;
  return pid > 0 && ::kill(pid, 0) == 0 ? pid : 0;
}

int MpsControl() {
  std::string command;
  std::getline(std::cin, command);
  const int pid = DaemonPid();
  if (command == "get_server_list") return pid > 0 ? 0 : 1;
  if (command != "quit") return Fail("mps-control: unknown command '" + command + "'");
  if (pid > 0) ::kill(pid, SIGTERM);
  return 0;
}

int Serve(int argc, char** argv, double lifetime_s) {
  const int port = std::atoi(Flag(argc, argv, "http-port", "0").c_str());
  const int ready_after_ms = std::atoi(Flag(argc, argv, "ready-after-ms", "0").c_str());
  if (port <= 0 || port > 65535) return Fail("serve: --http-port=N is required");
  if (Env("CUDA_VISIBLE_DEVICES").rfind("MIG-", 0) != 0) {
    return Fail("serve: CUDA_VISIBLE_DEVICES is not a MIG UUID");
  }
  if (DaemonPid() == 0)
    return Fail("serve: no MPS daemon runs in " + Env("CUDA_MPS_PIPE_DIRECTORY"));
  const int pct = std::atoi(Env("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE").c_str());
  if (pct < 1 || pct > 100) return Fail("serve: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE not in 1..100");
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    return Fail("serve: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                std::strerror(errno));
  }
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(lifetime_s);
  while (!g_stop && std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) != 1) continue;
    const int client = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    char buf[1024];
    pollfd c{client, POLLIN, 0};
    const ssize_t n = ::poll(&c, 1, 1000) == 1 ? ::recv(client, buf, sizeof buf - 1, 0) : 0;
    const std::string request(buf, n > 0 ? static_cast<size_t>(n) : 0);
    const bool ready =
        std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(ready_after_ms);
    const char* status = request.rfind("GET /v2/health/ready ", 0) != 0 ? "404 Not Found"
                         : ready                                        ? "200 OK"
                                                                        : "400 Bad Request";
    const std::string reply =
        std::string("HTTP/1.1 ") + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    [[maybe_unused]] ssize_t w = ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(client);
  }
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, OnTerm);
  std::signal(SIGINT, OnTerm);
  const std::string mode = argc > 1 ? argv[1] : "";
  const double lifetime_s = std::atof(Flag(argc, argv, "lifetime-s", "600").c_str());
  if (mode == "mps") return Mps(argc > 2 && std::string(argv[2]) == "-d", lifetime_s);
  if (mode == "mps-control") return MpsControl();
  if (mode == "serve") return Serve(argc, argv, lifetime_s);
  return Fail("usage: tessera-standin mps [-d] | mps-control | serve --http-port=N");
}
