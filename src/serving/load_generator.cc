// RunOpenLoopLoad (load_generator.h): one epoll loop, non-blocking sockets,
// a hand-written HTTP/1.1 client of just what the emulator and HAProxy
// answer (a status line, headers with Content-Length, a body).
#include "serving/load_generator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace tessera {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Connection {
  int fd = -1;
  int target = 0;
  bool connected = false;
  bool busy = false;         // a request is outstanding
  int answered = 0;          // requests it carried to their answer
  double scheduled_s = 0;    // the outstanding request's scheduled time
  std::string out;           // bytes left to send
  bool watching_out = true;  // EPOLLOUT asked for (while connecting: yes)
  std::string in;            // bytes read of the answer
};

// The answer in `in`, once whole: its status code, or -1 while incomplete;
// `keep` says whether the connection may carry another request.
int ParseAnswer(const std::string& in, size_t& length, bool& keep) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return -1;
  if (in.compare(0, 5, "HTTP/") != 0) return 0;
  const size_t space = in.find(' ');
  if (space == std::string::npos || space > head_end) return 0;
  const int status = std::atoi(in.c_str() + space + 1);
  long content_length = 0;
  keep = in.compare(0, 8, "HTTP/1.1") == 0;
  size_t at = in.find("\r\n") + 2;
  while (at < head_end) {
    const size_t eol = in.find("\r\n", at);
    std::string line = in.substr(at, eol - at);
    std::transform(line.begin(), line.end(), line.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (line.rfind("content-length:", 0) == 0) content_length = std::atol(line.c_str() + 15);
    if (line.rfind("connection:", 0) == 0 && line.find("close") != std::string::npos) keep = false;
    at = eol + 2;
  }
  if (content_length < 0) return 0;
  length = head_end + 4 + static_cast<size_t>(content_length);
  return in.size() >= length ? status : -1;
}

class Generator {
 public:
  Generator(const std::vector<LoadTarget>& targets, const LoadOptions& options)
      : targets_(targets), options_(options) {}

  ~Generator() {
    for (Connection& c : conns_) {
      if (c.fd >= 0) close(c.fd);
    }
    if (epoll_ >= 0) close(epoll_);
  }

  Result<LoadReport> Run() {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) return Status::IoError(std::string("epoll_create1: ") + std::strerror(errno));
    report_.services.resize(targets_.size());
    const size_t windows =
        options_.window_bounds.size() < 2 ? 0 : options_.window_bounds.size() - 1;
    for (size_t t = 0; t < targets_.size(); ++t) {
      report_.services[t].service = targets_[t].service;
      report_.services[t].windows.resize(windows);
      rngs_.emplace_back(options_.seed * 1000003 + t);
      idle_.emplace_back();
      Schedule(static_cast<int>(t), 0);
    }
    start_ = SteadyClock::now();
    std::vector<epoll_event> events(256);
    for (;;) {
      const double now = Elapsed();
      while (!due_.empty() && due_.top().first <= now) {
        const auto [at, t] = due_.top();
        due_.pop();
        Send(t, at, now);
        Schedule(t, at);
      }
      ExpireTimeouts(now);
      if (due_.empty() && outstanding_ == 0) break;
      if (options_.stop != nullptr && options_.stop->load()) {
        for (size_t id = 0; id < conns_.size(); ++id) Fail(static_cast<int>(id));
        break;
      }
      double wait_s = 0.05;
      if (!due_.empty()) wait_s = std::min(wait_s, due_.top().first - Elapsed());
      timespec timeout{};
      wait_s = std::max(0.0, wait_s);
      timeout.tv_sec = static_cast<time_t>(wait_s);
      timeout.tv_nsec = static_cast<long>((wait_s - std::floor(wait_s)) * 1e9);
      const int n =
          epoll_pwait2(epoll_, events.data(), static_cast<int>(events.size()), &timeout, nullptr);
      if (n < 0 && errno != EINTR) {
        return Status::IoError(std::string("epoll_pwait2: ") + std::strerror(errno));
      }
      for (int i = 0; i < n; ++i) Handle(static_cast<int>(events[i].data.u32), events[i].events);
    }
    return std::move(report_);
  }

 private:
  double Elapsed() const {
    return std::chrono::duration<double>(SteadyClock::now() - start_).count();
  }

  // The next request of target `t` after time `after`, if within the run.
  // A rate change starts the process over at its instant (memoryless: the
  // arrivals after it are Poisson at the new rate).
  void Schedule(int t, double after) {
    const LoadTarget& target = targets_[t];
    const auto& changes = target.changes;
    auto change =
        std::upper_bound(changes.begin(), changes.end(), after,
                         [](double at, const LoadTarget::RateChange& c) { return at < c.at_s; });
    for (double from = after; from < options_.duration_s; ++change) {
      const double rate = change == changes.begin() ? target.rate_rps : std::prev(change)->rate_rps;
      const double until =
          change == changes.end() ? std::numeric_limits<double>::infinity() : change->at_s;
      if (rate > 0) {
        const double next = from + std::exponential_distribution<double>(rate)(rngs_[t]);
        if (next < until) {
          if (next < options_.duration_s) due_.push({next, t});
          return;
        }
      }
      if (change == changes.end()) return;
      from = until;
    }
  }

  // Applies `record` to target t's totals and to the window of `scheduled_s`.
  template <typename Record>
  void Count(int t, double scheduled_s, Record record) {
    LoadResult& r = report_.services[t];
    record(r.total);
    const std::vector<double>& b = options_.window_bounds;
    if (r.windows.empty() || scheduled_s < b.front() || scheduled_s >= b.back()) return;
    const size_t w = std::upper_bound(b.begin(), b.end(), scheduled_s) - b.begin() - 1;
    record(r.windows[w]);
  }

  void Send(int t, double scheduled_s, double now) {
    report_.send_jitter_ms.Add((now - scheduled_s) * 1000.0);
    Count(t, scheduled_s, [](LoadCounts& c) { ++c.sent; });
    Issue(t, scheduled_s, /*fresh=*/false);
  }

  // Puts target t's request of `scheduled_s` on a connection: an idle one
  // unless `fresh`, else a new one.
  void Issue(int t, double scheduled_s, bool fresh) {
    int id = -1;
    while (!fresh && !idle_[t].empty()) {
      id = idle_[t].back();
      idle_[t].pop_back();
      // A closed connection's slot may hold a newer one by now.
      const Connection& c = conns_[id];
      if (c.fd >= 0 && c.target == t && !c.busy) break;
      id = -1;
    }
    if (id < 0) id = Open(t);
    if (id < 0) {
      Count(t, scheduled_s, [](LoadCounts& c) { ++c.failed; });
      return;
    }
    Connection& c = conns_[id];
    const LoadTarget& target = targets_[t];
    c.busy = true;
    c.scheduled_s = scheduled_s;
    c.in.clear();
    c.out = fmt::format(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n"
        "Content-Length: {}\r\n\r\n{}",
        target.path, target.host, target.port, target.body.size(), target.body);
    ++outstanding_;
    if (c.connected) Write(id);
  }

  // A new connection to target `t`, connecting; -1 when none can be made.
  int Open(int t) {
    if (open_ >= options_.max_connections) return -1;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(targets_[t].port));
    inet_pton(AF_INET, targets_[t].host.c_str(), &addr.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 && errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    int id;
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = static_cast<int>(conns_.size());
      conns_.emplace_back();
    }
    conns_[id] = Connection{};
    conns_[id].fd = fd;
    conns_[id].target = t;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
    ev.data.u32 = static_cast<uint32_t>(id);
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
    ++open_;
    ++report_.connections_opened;
    return id;
  }

  // Level-triggered EPOLLOUT fires for as long as a socket can take bytes:
  // asked for only while connecting or with bytes left to send.
  void Watch(int id, bool writable) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (writable ? EPOLLOUT : 0u);
    ev.data.u32 = static_cast<uint32_t>(id);
    epoll_ctl(epoll_, EPOLL_CTL_MOD, conns_[id].fd, &ev);
  }

  void Handle(int id, uint32_t events) {
    Connection& c = conns_[id];
    if (c.fd < 0) return;
    if (!c.connected && (events & EPOLLOUT)) {
      int error = 0;
      socklen_t len = sizeof error;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &len);
      if (error != 0) return Fail(id);
      c.connected = true;
      if (!c.out.empty()) Write(id);
      Connection& now = conns_[id];
      if (now.fd >= 0 && now.out.empty() && now.watching_out) Watch(id, now.watching_out = false);
    } else if (c.connected && (events & EPOLLOUT)) {
      Write(id);
    }
    if (events & EPOLLIN) Read(id);
    if (c.fd >= 0 && (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) && !(events & EPOLLIN)) {
      if (c.busy) return Broken(id);
      Close(id);
    }
  }

  void Write(int id) {
    Connection& c = conns_[id];
    const bool watching = c.watching_out;
    while (!c.out.empty()) {
      const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno != EAGAIN) return Broken(id);
        if (!watching) Watch(id, c.watching_out = true);
        return;
      }
      c.out.erase(0, static_cast<size_t>(n));
    }
    if (watching && c.connected) Watch(id, c.watching_out = false);
  }

  void Read(int id) {
    Connection& c = conns_[id];
    char buffer[16384];
    for (;;) {
      const ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
      if (n > 0) {
        c.in.append(buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EAGAIN) break;
      // Closed by the server, or broken: an outstanding request fails.
      if (c.busy && !Complete(id)) return Broken(id);
      return Close(id);
    }
    if (c.busy) Complete(id);
  }

  // Finishes the outstanding request of `id` if its answer is whole.
  bool Complete(int id) {
    Connection& c = conns_[id];
    size_t length = 0;
    bool keep = false;
    const int status = ParseAnswer(c.in, length, keep);
    if (status < 0) return false;
    const double latency_ms = (Elapsed() - c.scheduled_s) * 1000.0;
    const LoadTarget& target = targets_[c.target];
    Count(c.target, c.scheduled_s, [&](LoadCounts& counts) {
      if (status == 200) {
        ++counts.ok;
        counts.latency_ms.Add(latency_ms);
        counts.within_slo += latency_ms <= target.slo_ms;
      } else {
        ++counts.failed;
      }
    });
    c.busy = false;
    ++c.answered;
    --outstanding_;
    c.in.erase(0, std::min(length, c.in.size()));
    if (keep && status != 0) {
      idle_[c.target].push_back(id);
    } else {
      Close(id);
    }
    return true;
  }

  // A connection broke with a request outstanding. On a kept-alive
  // connection that has no byte of the answer, the server closed it idle
  // as the request went out (HAProxy closes idle client connections), so
  // the request never reached it: it is sent again on a new connection,
  // still timed from its scheduled send time, as HTTP clients do. Otherwise
  // it fails.
  void Broken(int id) {
    Connection& c = conns_[id];
    if (!c.busy || c.answered == 0 || !c.in.empty()) return Fail(id);
    const int t = c.target;
    const double scheduled_s = c.scheduled_s;
    c.busy = false;
    --outstanding_;
    Close(id);
    Issue(t, scheduled_s, /*fresh=*/true);
  }

  void Fail(int id) {
    Connection& c = conns_[id];
    if (c.busy) {
      Count(c.target, c.scheduled_s, [](LoadCounts& counts) { ++counts.failed; });
      c.busy = false;
      --outstanding_;
    }
    Close(id);
  }

  void Close(int id) {
    Connection& c = conns_[id];
    if (c.fd < 0) return;
    if (c.busy) return Fail(id);
    epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
    close(c.fd);
    c.fd = -1;
    --open_;
    free_ids_.push_back(id);
  }

  void ExpireTimeouts(double now) {
    if (now < next_expiry_s_) return;
    next_expiry_s_ = now + 0.1;
    for (size_t id = 0; id < conns_.size(); ++id) {
      const Connection& c = conns_[id];
      if (c.fd >= 0 && c.busy && now - c.scheduled_s > options_.timeout_s) {
        Fail(static_cast<int>(id));
      }
    }
  }

  const std::vector<LoadTarget>& targets_;
  const LoadOptions& options_;
  LoadReport report_;
  int epoll_ = -1;
  SteadyClock::time_point start_;
  std::vector<std::mt19937_64> rngs_;
  using Due = std::pair<double, int>;  // (scheduled time, target)
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::deque<Connection> conns_;  // a deque: a new connection moves no other
  std::vector<int> free_ids_;
  std::vector<std::vector<int>> idle_;  // per target: idle connections
  long outstanding_ = 0;
  int open_ = 0;
  double next_expiry_s_ = 0;
};

// Lets this process hold as many sockets as its hard limit allows.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

Result<LoadReport> RunOpenLoopLoad(const std::vector<LoadTarget>& targets,
                                   const LoadOptions& options) {
  for (const LoadTarget& t : targets) {
    in_addr addr{};
    const bool changes_ok =
        std::all_of(t.changes.begin(), t.changes.end(), [&](const LoadTarget::RateChange& c) {
          return c.rate_rps >= 0 && std::isfinite(c.rate_rps) && c.at_s >= 0 &&
                 std::isfinite(c.at_s) && (&c == &t.changes.front() || (&c - 1)->at_s <= c.at_s);
        });
    if (!(t.rate_rps > 0 && std::isfinite(t.rate_rps)) || !changes_ok || t.port <= 0 ||
        t.port > 65535 || inet_pton(AF_INET, t.host.c_str(), &addr) != 1 || t.path.empty() ||
        t.path[0] != '/') {
      return Status::InvalidArgument(fmt::format(
          "load target {}: needs a rate > 0 (and later rates >= 0 at ascending times), an IPv4 "
          "host, a port and a path",
          t.service));
    }
  }
  if (!(options.duration_s > 0 && std::isfinite(options.duration_s)) || !(options.timeout_s > 0) ||
      options.max_connections < 1) {
    return Status::InvalidArgument("load options: duration and timeout must be > 0");
  }
  if (!std::is_sorted(options.window_bounds.begin(), options.window_bounds.end())) {
    return Status::InvalidArgument("load options: window bounds must ascend");
  }
  RaiseFileLimit();
  return Generator(targets, options).Run();
}

}  // namespace tessera
