// Load generator: open-loop HTTP load at each service's rate, for
// rehearsing a plan's data path (docs/rehearse.md).
//
// Each service's requests are scheduled ahead by a seeded Poisson process
// (exponential gaps at `rate_rps`) and sent at their scheduled times,
// whatever is still outstanding: the load does not slow down when the
// servers do (no coordinated omission). Every latency is measured from the
// request's scheduled send time to its answer's last byte. One thread runs
// every connection through epoll (HTTP/1.1, keep-alive; a connection whose
// request is outstanding is busy, so concurrent requests open more
// connections, up to `max_connections`).
//
// A request fails when it gets no answer within `timeout_s`, its
// connection breaks, or its answer is not 200; it is counted, never
// retried, but for one case: a kept-alive connection that the server closed
// idle just as the request went out (no byte of an answer) carries it again
// on a new connection, timed from its scheduled send time, as HTTP clients
// do. The send jitter (actual minus scheduled send time) is measured
// for every request.
//
// Thread-safety: RunOpenLoopLoad blocks its caller; it shares nothing.
#ifndef TESSERA_LOAD_GENERATOR_H_
#define TESSERA_LOAD_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/status.h"
#include "util/quantile_histogram.h"

namespace tessera {

struct LoadTarget {
  std::string service;             // names the results
  std::string host = "127.0.0.1";  // an IPv4 address
  int port = 0;
  std::string path;  // e.g. /v2/models/resnet50/infer
  std::string body = R"({"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[0]}]})";
  double rate_rps = 0;  // > 0
  double slo_ms = 0;    // a request within it counts as within the SLO
  // Later rates: from each change's at_s (seconds into the run, ascending)
  // on, requests come at its rate (>= 0), a Poisson process again from that
  // instant.
  struct RateChange {
    double at_s = 0;
    double rate_rps = 0;
  };
  std::vector<RateChange> changes;
};

struct LoadOptions {
  double duration_s = 60;  // requests are scheduled in [0, duration_s)
  uint64_t seed = 1;
  double timeout_s = 30;        // a request unanswered this long fails
  int max_connections = 20000;  // open at once, all targets
  // Requests are also counted per window [bounds[i], bounds[i + 1]) of
  // their scheduled send time (seconds); empty: no windows.
  std::vector<double> window_bounds;
  // When it becomes true, no more requests are sent and the run ends
  // without waiting for outstanding answers (they count as failed).
  const std::atomic<bool>* stop = nullptr;
};

struct LoadCounts {
  long sent = 0;
  long ok = 0;
  long failed = 0;
  long within_slo = 0;
  QuantileHistogram latency_ms;  // answered requests (ok)
};

struct LoadResult {
  std::string service;
  LoadCounts total;
  std::vector<LoadCounts> windows;  // one per window of LoadOptions
};

struct LoadReport {
  std::vector<LoadResult> services;  // in target order
  QuantileHistogram send_jitter_ms;
  int connections_opened = 0;
};

// Runs the load. InvalidArgument for a target without a rate, host or
// port, or bad options; IoError when no socket can be made at all.
Result<LoadReport> RunOpenLoopLoad(const std::vector<LoadTarget>& targets,
                                   const LoadOptions& options);

}  // namespace tessera

#endif  // TESSERA_LOAD_GENERATOR_H_
