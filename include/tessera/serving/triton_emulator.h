// Triton emulator: a serving process that answers as a Triton server with
// one model does, and takes the time the plan's profiles say its batches
// take, for rehearsing a plan without GPUs (docs/rehearse.md).
//
//  * HTTP, the KServe v2 / Triton protocol: GET /v2/health/live,
//    /v2/health/ready, /v2/models/{m}/ready, /v2/models/{m} (metadata),
//    POST /v2/models/{m}/infer (a JSON body with an "inputs" array; the
//    answer has one output per request); errors are {"error": "..."} with
//    400 (bad body) or 404 (another model, another path).
//  * Triton's dynamic batcher as the model configuration says
//    (triton_config.h), on one model instance: while the instance is free,
//    a batch starts as soon as the queue holds the largest preferred size
//    (max_batch_size without preferred sizes), or once the oldest request
//    has waited max_queue_delay, with what is queued up to max_batch_size;
//    without dynamic_batching each request runs alone.
//  * A batch of b runs for latency_ms[b - 1] x dilation, times a lognormal
//    factor of mean 1 and coefficient of variation `cv` when cv > 0
//    (seeded).
//  * Time dilation k: latencies and the queue delay are multiplied by k, so
//    a load generator that sends at rate / k keeps every utilisation.
//  * Triton's metrics (Prometheus text) at GET /metrics on the metrics port:
//    nv_inference_request_success, nv_inference_request_failure,
//    nv_inference_count, nv_inference_exec_count, and the cumulative
//    microseconds nv_inference_request_duration_us,
//    nv_inference_queue_duration_us, nv_inference_compute_input_duration_us,
//    nv_inference_compute_infer_duration_us and
//    nv_inference_compute_output_duration_us, and the gauge
//    nv_inference_pending_request_count, labelled {model, version}.
//    Durations are the emulator's wall time (dilated).
//
// Thread-safety: Start once; Stop from any thread; the servers' threads
// share the batcher under one mutex.
#ifndef TESSERA_TRITON_EMULATOR_H_
#define TESSERA_TRITON_EMULATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/serving/triton_config.h"
#include "tessera/status.h"

namespace tessera {

// The default bound of an emulator's concurrent connections: HAProxy's
// default server maxconn is unlimited, and a plan's backlog under a load
// step reaches hundreds per process.
inline constexpr int kDefaultEmulatorThreads = 4096;

struct EmulatorOptions {
  std::string model;        // the model name requests must use
  TritonBatching batching;  // from the model configuration
  // Execution time (ms, undilated) of a batch of b, b = 1..max(1,
  // max_batch_size), at index b - 1; every entry > 0.
  std::vector<double> latency_ms;
  double dilation = 1;  // k >= 1
  double cv = 0;        // lognormal variation of batch times; 0: none
  uint64_t seed = 1;
  std::string host = "127.0.0.1";
  int http_port = 8000;  // 0: any free port (tests); http_port() says which
  int metrics_port = 8002;
  // The most connections served at once, a thread each (idle connections
  // close after 1 s); the pool grows to the peak, so that a backlog queues
  // in the batcher and a health check is answered at once, as Triton's
  // asynchronous front-end does. 0: kDefaultEmulatorThreads.
  int threads = 0;
};

class TritonEmulator {
 public:
  // Binds both ports and starts serving. InvalidArgument for options out of
  // range; IoError naming an address it cannot bind.
  static Result<std::unique_ptr<TritonEmulator>> Start(EmulatorOptions options);
  ~TritonEmulator();  // stops

  int http_port() const;
  int metrics_port() const;
  // Stops serving; requests still queued are answered 503.
  void Stop();
  // Blocks until Stop.
  void Wait();

  // The metrics text /metrics answers.
  std::string MetricsText() const;

  struct Impl;

 private:
  explicit TritonEmulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_TRITON_EMULATOR_H_
