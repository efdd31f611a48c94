// HaproxyRuntime (haproxy_runtime.h): commands over HAProxy's stats socket.
#include "serving/haproxy_runtime.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <thread>
#include <vector>

#include "tessera/util/text_io.h"

namespace tessera::serving {
namespace {

std::string_view StateName(ServerState state) {
  switch (state) {
    case ServerState::kReady:
      return "ready";
    case ServerState::kDrain:
      return "drain";
    case ServerState::kMaint:
      return "maint";
  }
  return "ready";
}

std::optional<long> ToLong(std::string_view s) {
  if (s.empty()) return 0;  // `show stat` leaves counters a proxy lacks empty
  const std::optional<double> v = ToDouble(s);
  if (!v || *v < 0 || std::floor(*v) != *v) return std::nullopt;
  return static_cast<long>(*v);
}

}  // namespace

HaproxyRuntime::HaproxyRuntime(std::string socket_path, double timeout_s)
    : socket_path_(std::move(socket_path)), timeout_s_(timeout_s) {}

Result<std::string> HaproxyRuntime::Command(std::string_view command) const {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument("haproxy stats socket path too long: " + socket_path_);
  }
  std::memcpy(addr.sun_path, socket_path_.data(), socket_path_.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("cannot make a socket for " + socket_path_);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_s_);
  tv.tv_usec = static_cast<suseconds_t>((timeout_s_ - std::floor(timeout_s_)) * 1e6);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Status::IoError(fmt::format("haproxy stats socket {}: {}", socket_path_, why));
  }
  const std::string line = std::string(command) + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return Status::IoError(fmt::format("haproxy stats socket {}: cannot send {}", socket_path_,
                                         QuoteForMessage(command)));
    }
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buffer[16384];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      close(fd);
      return Status::IoError(fmt::format("haproxy stats socket {}: no answer to {} within {:g} s",
                                         socket_path_, QuoteForMessage(command), timeout_s_));
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

Status HaproxyRuntime::Expect(const std::string& command, std::string_view success) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string answer, Command(command));
  std::string reason(answer);
  while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
  if (reason == success) return Status::Ok();
  return Status::IoError(fmt::format("haproxy refused {}: {}", QuoteForMessage(command),
                                     reason.empty() ? "no answer" : reason));
}

Status HaproxyRuntime::AddServer(std::string_view backend, std::string_view server,
                                 std::string_view args) const {
  TESSERA_RETURN_IF_ERROR(Expect(fmt::format("add server {}/{} {} disabled", backend, server, args),
                                 "New server registered."));
  return Expect(fmt::format("enable health {}/{}", backend, server));
}

Status HaproxyRuntime::DelServer(std::string_view backend, std::string_view server) const {
  return Expect(fmt::format("del server {}/{}", backend, server), "Server deleted.");
}

Status HaproxyRuntime::SetState(std::string_view backend, std::string_view server,
                                ServerState state) const {
  return Expect(fmt::format("set server {}/{} state {}", backend, server, StateName(state)));
}

Status HaproxyRuntime::SetWeight(std::string_view backend, std::string_view server,
                                 int weight) const {
  return Expect(fmt::format("set server {}/{} weight {}", backend, server, weight));
}

Status HaproxyRuntime::SetHealthUp(std::string_view backend, std::string_view server) const {
  return Expect(fmt::format("set server {}/{} health up", backend, server));
}

Result<std::map<std::pair<std::string, std::string>, ServerLoad>> HaproxyRuntime::Servers() const {
  TESSERA_ASSIGN_OR_RETURN(const std::string answer, Command("show stat"));
  return ParseShowStat(answer);
}

namespace {

// One row of `show stat`'s answer: the fields asked for, in the order
// asked, and its line for messages.
struct StatRow {
  int line = 0;
  std::vector<std::string_view> fields;
};

// The rows of `show stat`'s CSV answer (header "# pxname,svname,..."), each
// with the columns `names` by name; InvalidArgument for an answer without
// them or a row too short to hold them.
Result<std::vector<StatRow>> StatRows(std::string_view csv,
                                      std::initializer_list<std::string_view> names) {
  const std::vector<TextLine> lines = SplitLines(csv, ByteOrderMark::kKeep);
  if (lines.empty() || !lines.front().text.starts_with("# ")) {
    return Status::InvalidArgument("show stat: the answer has no \"# pxname,...\" header");
  }
  const std::vector<std::string_view> header = SplitCsvFields(lines.front().text.substr(2));
  std::vector<size_t> columns;
  for (const std::string_view name : names) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      return Status::InvalidArgument(
          fmt::format("show stat: the header lacks one of {}", fmt::join(names, ", ")));
    }
    columns.push_back(static_cast<size_t>(it - header.begin()));
  }
  const size_t need = *std::max_element(columns.begin(), columns.end()) + 1;
  std::vector<StatRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;
    const std::vector<std::string_view> f = SplitCsvFields(lines[i].text);
    if (f.size() < need) {
      return Status::InvalidArgument(fmt::format("show stat: line {}: {} fields, expected {}",
                                                 lines[i].number, f.size(), need));
    }
    StatRow row{lines[i].number, {}};
    for (const size_t c : columns) row.fields.push_back(f[c]);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

Result<std::map<std::pair<std::string, std::string>, ServerLoad>> ParseShowStat(
    std::string_view csv) {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<StatRow> rows,
                           StatRows(csv, {"pxname", "svname", "qcur", "scur", "status"}));
  std::map<std::pair<std::string, std::string>, ServerLoad> out;
  for (const StatRow& row : rows) {
    const std::vector<std::string_view>& f = row.fields;
    if (f[1] == "FRONTEND" || f[1] == "BACKEND") continue;
    const std::optional<long> queued = ToLong(f[2]), sessions = ToLong(f[3]);
    if (!queued || !sessions) {
      return Status::InvalidArgument(
          fmt::format("show stat: line {}: qcur {} or scur {} is not a count", row.line,
                      QuoteForMessage(f[2]), QuoteForMessage(f[3])));
    }
    out[{std::string(f[0]), std::string(f[1])}] = {*queued, *sessions, std::string(f[4])};
  }
  return out;
}

Result<std::map<std::string, long>> ParseFrontendRequests(std::string_view csv) {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<StatRow> rows,
                           StatRows(csv, {"pxname", "svname", "req_tot"}));
  std::map<std::string, long> out;
  for (const StatRow& row : rows) {
    if (row.fields[1] != "FRONTEND") continue;
    const std::optional<long> received = ToLong(row.fields[2]);
    if (!received) {
      return Status::InvalidArgument(fmt::format("show stat: line {}: req_tot {} is not a count",
                                                 row.line, QuoteForMessage(row.fields[2])));
    }
    out[std::string(row.fields[0])] = *received;
  }
  return out;
}

Result<std::map<std::string, long>> HaproxyRuntime::FrontendRequests() const {
  TESSERA_ASSIGN_OR_RETURN(const std::string answer, Command("show stat"));
  return ParseFrontendRequests(answer);
}

Status HaproxyRuntime::WaitIdle(const std::vector<std::pair<std::string, std::string>>& servers,
                                double timeout_s, const std::atomic<bool>* halt) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(const auto loads, Servers());
    std::string busy;
    for (const auto& [backend, server] : servers) {
      const auto it = loads.find({backend, server});
      if (it == loads.end()) {
        return Status::IoError(fmt::format("haproxy lists no server {}/{}", backend, server));
      }
      if (it->second.queued + it->second.sessions > 0) busy = backend + "/" + server;
    }
    if (busy.empty() || (halt != nullptr && halt->load())) return Status::Ok();
    if (std::chrono::steady_clock::now() > until) {
      return Status::IoError(fmt::format(
          "haproxy: server {} still has requests after {:g} s of drain", busy, timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<std::string> HaproxyVersion(const std::string& binary, const std::string& log,
                                   Children& children) {
  Result<pid_t> pid = children.Spawn({binary, "-v"}, {}, log);
  if (!pid.ok() || Children::Wait(*pid, 10) != 0) {
    return Status::InvalidArgument(fmt::format(
        "haproxy: {} does not run (install Debian's haproxy, as scripts/setup.sh does, or name "
        "the binary)",
        QuoteForMessage(binary)));
  }
  std::ifstream in(log);
  std::string line;
  std::getline(in, line);
  return line;
}

Status CheckPortsFree(const std::vector<int>& ports, const std::string& address) {
  for (const int port : ports) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
    // SO_REUSEADDR, as HAProxy binds: connections of an earlier run in
    // TIME_WAIT do not hold the port, a listener does.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (!address.empty() && inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
      close(fd);
      return Status::InvalidArgument("not an IPv4 address: " + QuoteForMessage(address));
    }
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    const int error = errno;
    close(fd);
    if (!bound) {
      return Status::InvalidArgument(fmt::format(
          "port {} on {} is taken ({}): a router or serving process left by an earlier run? "
          "Stop it, or give the router other ports",
          port, address.empty() ? "every address" : address, std::strerror(error)));
    }
  }
  return Status::Ok();
}

int HaproxyConnectionLimit(int wanted) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t files =
      std::clamp<rlim_t>(limit.rlim_max == RLIM_INFINITY ? 400000 : limit.rlim_max, 2000, 400000);
  return std::max(1, std::min(wanted, static_cast<int>(files / 2 - 500)));
}

Status WaitForHaproxy(const std::vector<int>& ports, pid_t pid, const std::string& log) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (const int port : ports) {
    for (;;) {
      if (Children::Wait(pid, 0) >= 0) return Status::IoError("haproxy exited: " + Tail(log));
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      const bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      close(fd);
      if (up) break;
      if (std::chrono::steady_clock::now() > until) {
        return Status::IoError(fmt::format("haproxy does not listen on {}: {}", port, Tail(log)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // Health checks mark servers up after their first check (rise 1, inter 2s).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  return Status::Ok();
}

}  // namespace tessera::serving
