// RouterObserver: each service's traffic as the router saw it, request by
// request. HAProxy, configured by FormatHaproxyConfig with a request log
// (RouterSettings::request_log), sends one UDP datagram per request in its
// raw log format: "<backend> <status> <Ta>", the backend's name, the HTTP
// status of the answer (or -1 when there was none) and %Ta, the
// milliseconds from the request's arrival to the end of its answer (queue,
// connect, server and transfer time; docs/routing.md, "What the router
// observes"). The observer counts them per backend: requests, answered
// with 2xx, within the service's SLO, and their latencies, until Take.
//
// This is the measurement that flows back: the rehearsal reports it beside
// the load generator's own, and it is what a control plane's observed rates
// and compliance can be fed from.
//
// Thread-safety: one receiving thread inside; Take, SetSloMs, Malformed and
// Port may be called from any thread.
#ifndef TESSERA_ROUTER_OBSERVER_H_
#define TESSERA_ROUTER_OBSERVER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "serving/load_generator.h"
#include "tessera/status.h"

namespace tessera {

// One request of HAProxy's request log.
struct RouterLogLine {
  std::string backend;
  int status = 0;  // -1: no answer
  double active_ms = 0;
};

// "<backend> <status> <ms>" with an optional trailing newline; anything
// else is InvalidArgument naming what is wrong.
Result<RouterLogLine> ParseRouterLogLine(std::string_view line);

class RouterObserver {
 public:
  // Listens for datagrams on 127.0.0.1:`port` (0: a free port, Port()
  // says which); `slo_ms` gives each backend's SLO in the log's milliseconds.
  // IoError when the port cannot be bound.
  static Result<std::unique_ptr<RouterObserver>> Start(int port,
                                                       std::map<std::string, double> slo_ms);
  ~RouterObserver();
  RouterObserver(const RouterObserver&) = delete;
  RouterObserver& operator=(const RouterObserver&) = delete;

  int Port() const { return port_; }
  // Each backend's requests since the last Take (or Start), and a fresh
  // count from now on. A backend not in `slo_ms` is counted with no SLO
  // (never within it).
  std::map<std::string, LoadCounts> Take();
  // Each backend's SLO from now on (a router whose services changed).
  void SetSloMs(std::map<std::string, double> slo_ms);
  // Datagrams that were not a request log line.
  long Malformed() const { return malformed_.load(); }

 private:
  RouterObserver(int fd, int port, std::map<std::string, double> slo_ms);
  void Receive();

  int fd_;
  int port_;
  std::map<std::string, double> slo_ms_;  // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<long> malformed_{0};
  std::mutex mu_;
  std::map<std::string, LoadCounts> counts_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera

#endif  // TESSERA_ROUTER_OBSERVER_H_
