#include "test_processes.h"

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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

namespace tessera::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kLogTailLines = 20;
constexpr double kStopGraceS = 5;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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
  ::kill(-pid, SIGCONT);  // a paused group would never see SIGTERM
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

}  // namespace

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

std::string ProbeHttp(httplib::Client& client, const std::string& path) {
  const httplib::Result reply = client.Get(path.c_str());
  if (!reply) return fmt::format("GET {}: {}", path, httplib::to_string(reply.error()));
  if (reply->status == 200) return "";
  return fmt::format("GET {} answers {}: {}", path, reply->status, reply->body);
}

void SetProbeTimeouts(httplib::Client& client) {
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(5, 0);
}

TestProcesses::TestProcesses(std::filesystem::path log_dir) : log_dir_(std::move(log_dir)) {}

TestProcesses::~TestProcesses() {
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) StopGroup(it->pid);
}

const TestProcesses::Child* TestProcesses::Find(const std::string& name) const {
  auto it = std::find_if(children_.begin(), children_.end(),
                         [&](const Child& c) { return c.name == name; });
  return it == children_.end() ? nullptr : &*it;
}

std::filesystem::path TestProcesses::LogPath(const std::string& name) const {
  return log_dir_ / (name + ".log");
}

std::string TestProcesses::LogTail(const std::string& name) const {
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

Status TestProcesses::Launch(const std::string& name, const std::vector<std::string>& argv) {
  if (Find(name) != nullptr) return Status::InvalidArgument(name + " is running already");
  TESSERA_ASSIGN_OR_RETURN(const pid_t pid, Spawn(argv, LogPath(name)));
  children_.push_back({name, pid});
  return Status::Ok();
}

Status TestProcesses::Run(const std::string& log, const std::vector<std::string>& argv) {
  TESSERA_ASSIGN_OR_RETURN(const pid_t pid, Spawn(argv, LogPath(log)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string command;
  for (const std::string& arg : argv) command += (command.empty() ? "" : " ") + arg;
  return Status::IoError(fmt::format("'{}' failed; {}", command, LogTail(log)));
}

Status TestProcesses::WaitReady(const std::string& name, double timeout_s,
                                const std::function<std::string()>& probe) const {
  const Child* child = Find(name);
  if (child == nullptr) return Status::InvalidArgument(name + " was not started");
  const Clock::time_point start = Clock::now();
  std::string last, how;
  while (true) {
    last = probe();
    if (last.empty()) {
      std::fprintf(stderr, "TestProcesses: %s ready in %.1f s\n", name.c_str(),
                   SecondsSince(start));
      return Status::Ok();
    }
    if (Ended(child->pid, &how)) {
      return Status::IoError(
          fmt::format("{} {} before it was ready ({}); {}", name, how, last, LogTail(name)));
    }
    if (SecondsSince(start) > timeout_s) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::IoError(
      fmt::format("{} not ready after {} s ({}); {}", name, timeout_s, last, LogTail(name)));
}

Status TestProcesses::Stop(const std::string& name) {
  const Child* child = Find(name);
  if (child == nullptr) return Status::InvalidArgument(name + " is not running");
  StopGroup(child->pid);
  children_.erase(children_.begin() + (child - children_.data()));
  return Status::Ok();
}

Status TestProcesses::Signal(const std::string& name, int signal) {
  const Child* child = Find(name);
  if (child == nullptr) return Status::InvalidArgument(name + " is not running");
  if (::kill(-child->pid, signal) != 0) {
    return Status::IoError(fmt::format("kill {}: {}", name, std::strerror(errno)));
  }
  if (signal == SIGKILL) {
    ::waitpid(child->pid, nullptr, 0);
    children_.erase(children_.begin() + (child - children_.data()));
  }
  return Status::Ok();
}

bool TestProcesses::Running(const std::string& name) const {
  const Child* child = Find(name);
  std::string how;
  return child != nullptr && !Ended(child->pid, &how);
}

}  // namespace tessera::testing
