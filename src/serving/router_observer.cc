// RouterObserver (router_observer.h): HAProxy's request log over UDP,
// counted per backend.
#include "serving/router_observer.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > begin) out.push_back(line.substr(begin, i - begin));
  }
  return out;
}

}  // namespace

Result<RouterLogLine> ParseRouterLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const std::vector<std::string_view> words = Words(line);
  if (words.size() != 3) {
    return Status::InvalidArgument(
        fmt::format("router log line {}: expected \"<backend> <status> <ms>\", got {} field(s)",
                    QuoteForMessage(line.substr(0, 120)), words.size()));
  }
  const std::optional<double> status = ToDouble(words[1]);
  if (!status || std::floor(*status) != *status || *status < -1 || *status > 999) {
    return Status::InvalidArgument(
        fmt::format("router log line {}: status {} is not an HTTP status",
                    QuoteForMessage(line.substr(0, 120)), QuoteForMessage(words[1])));
  }
  const std::optional<double> ms = ToDouble(words[2]);
  // HAProxy writes -1 for a timer that did not run (no answer).
  if (!ms || !std::isfinite(*ms) || *ms < -1) {
    return Status::InvalidArgument(
        fmt::format("router log line {}: time {} is not a number of milliseconds",
                    QuoteForMessage(line.substr(0, 120)), QuoteForMessage(words[2])));
  }
  return RouterLogLine{std::string(words[0]), static_cast<int>(*status), *ms};
}

Result<std::unique_ptr<RouterObserver>> RouterObserver::Start(
    int port, std::map<std::string, double> slo_ms) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("router observer: cannot make a UDP socket");
  // Bursts of answers come faster than one thread may read at times.
  const int buffer = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Status::IoError(
        fmt::format("router observer: cannot bind 127.0.0.1:{} (UDP): {}", port, why));
  }
  socklen_t length = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  return std::unique_ptr<RouterObserver>(
      new RouterObserver(fd, ntohs(addr.sin_port), std::move(slo_ms)));
}

RouterObserver::RouterObserver(int fd, int port, std::map<std::string, double> slo_ms)
    : fd_(fd), port_(port), slo_ms_(std::move(slo_ms)), thread_([this] { Receive(); }) {}

RouterObserver::~RouterObserver() {
  stop_ = true;
  thread_.join();
  close(fd_);
}

void RouterObserver::Receive() {
  char datagram[2048];
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd_, datagram, sizeof datagram, 0);
    if (n <= 0) continue;
    Result<RouterLogLine> line = ParseRouterLogLine(std::string_view(datagram, n));
    if (!line.ok()) {
      ++malformed_;
      continue;
    }
    const bool ok = line->status >= 200 && line->status < 300 && line->active_ms >= 0;
    std::lock_guard<std::mutex> lock(mu_);
    const auto slo = slo_ms_.find(line->backend);
    const double limit =
        slo == slo_ms_.end() ? -std::numeric_limits<double>::infinity() : slo->second;
    LoadCounts& c = counts_[line->backend];
    ++c.sent;
    if (ok) {
      ++c.ok;
      c.latency_ms.Add(line->active_ms);
      c.within_slo += line->active_ms <= limit;
    } else {
      ++c.failed;
    }
  }
}

void RouterObserver::SetSloMs(std::map<std::string, double> slo_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  slo_ms_ = std::move(slo_ms);
}

std::map<std::string, LoadCounts> RouterObserver::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, LoadCounts> out;
  out.swap(counts_);
  return out;
}

}  // namespace tessera
