// TritonEmulator (triton_emulator.h) on cpp-httplib: request threads queue
// their request and wait; one batcher thread forms batches and sleeps for
// their (dilated) latency.
#include "tessera/serving/triton_emulator.h"

#include <fmt/format.h>

// cpp-httplib listens with a backlog of 5 by default: a proxy that opens
// connections in bursts then loses SYNs, each retried a second later.
#define CPPHTTPLIB_LISTEN_BACKLOG 1024
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Micros(SteadyClock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// One request waiting for its batch.
struct Pending {
  SteadyClock::time_point enqueued;
  SteadyClock::time_point started;
  SteadyClock::time_point finished;
  bool done = false;
  bool failed = false;
};

void Json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Json(res, status, {{"error", message}});
}

// cpp-httplib serves each connection on a thread of its task queue, for as
// long as the connection lives, and its own pool has a fixed number of them:
// a connection beyond them waits in the listen backlog. Triton's HTTP
// front-end is asynchronous: every connection is read at once, and a health
// check is answered while hundreds of inferences queue. So that a backlog
// (a proxy sending more than the plan's rate) queues in the batcher, as in
// Triton, and a health check never waits behind it, this queue starts a
// thread whenever no idle one is left, up to `max`. Threads stay until
// shutdown, so a pool grows to the peak of concurrent connections.
class GrowingPool : public httplib::TaskQueue {
 public:
  explicit GrowingPool(size_t max) : max_(max) {}
  ~GrowingPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < max_) {
      threads_.emplace_back([this] { Work(); });
    } else {
      ready_.notify_one();
    }
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    ready_.notify_all();
    // No thread starts once stopping_ is set: the vector is stable.
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left to run
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace

struct TritonEmulator::Impl {
  EmulatorOptions o;
  httplib::Server http;
  httplib::Server metrics;
  std::thread http_thread, metrics_thread, batcher;
  int http_port = 0, metrics_port = 0;

  mutable std::mutex mu;
  std::condition_variable wake_batcher;
  std::condition_variable batch_done;
  std::deque<Pending*> queue;
  bool stopping = false;
  std::mt19937_64 rng;
  // Triton's counters.
  int64_t success = 0, failure = 0, inferences = 0, executions = 0;
  double request_us = 0, queue_us = 0, infer_us = 0;

  // The size of the next batch if one should start now; 0: wait (until
  // `due`, when set).
  int Due(SteadyClock::time_point now, SteadyClock::time_point& due) const {
    const int queued = static_cast<int>(queue.size());
    const TritonBatching& b = o.batching;
    if (queued == 0) return 0;
    if (b.max_batch_size == 0 || !b.dynamic_batching) return 1;
    const int target =
        b.preferred_batch_sizes.empty() ? b.max_batch_size : b.preferred_batch_sizes.back();
    if (queued >= target) return std::min(target, b.max_batch_size);
    due =
        queue.front()->enqueued +
        std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double, std::micro>(
            static_cast<double>(b.max_queue_delay_us) * o.dilation));
    if (now >= due) return std::min(queued, b.max_batch_size);
    return 0;
  }

  double BatchMs(int size) {
    double ms = o.latency_ms[size - 1] * o.dilation;
    if (o.cv > 0) {
      const double sigma2 = std::log1p(o.cv * o.cv);
      ms *= std::lognormal_distribution<double>(-sigma2 / 2, std::sqrt(sigma2))(rng);
    }
    return ms;
  }

  void RunBatcher() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      SteadyClock::time_point due = SteadyClock::time_point::max();
      const int size = Due(SteadyClock::now(), due);
      if (size == 0) {
        if (due == SteadyClock::time_point::max()) {
          wake_batcher.wait(lock);
        } else {
          wake_batcher.wait_until(lock, due);
        }
        continue;
      }
      std::vector<Pending*> batch(queue.begin(), queue.begin() + size);
      queue.erase(queue.begin(), queue.begin() + size);
      const double ms = BatchMs(size);
      lock.unlock();
      const SteadyClock::time_point started = SteadyClock::now();
      std::this_thread::sleep_until(started + std::chrono::duration_cast<SteadyClock::duration>(
                                                  std::chrono::duration<double, std::milli>(ms)));
      const SteadyClock::time_point finished = SteadyClock::now();
      lock.lock();
      ++executions;
      for (Pending* p : batch) {
        p->started = started;
        p->finished = finished;
        p->done = true;
      }
      batch_done.notify_all();
    }
    for (Pending* p : queue) p->failed = p->done = true;
    queue.clear();
    batch_done.notify_all();
  }

  void Infer(const httplib::Request& req, httplib::Response& res) {
    const std::string model = req.matches[1];
    if (model != o.model) {
      return Error(res, 404, "Request for unknown model: '" + model + "' is not found");
    }
    const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("inputs") ||
        !body["inputs"].is_array()) {
      std::lock_guard<std::mutex> lock(mu);
      ++failure;
      return Error(res, 400, "expected a JSON object with an \"inputs\" array");
    }
    Pending pending;
    pending.enqueued = SteadyClock::now();
    std::unique_lock<std::mutex> lock(mu);
    if (stopping) {
      ++failure;
      return Error(res, 503, "the server is stopping");
    }
    queue.push_back(&pending);
    wake_batcher.notify_one();
    batch_done.wait(lock, [&] { return pending.done; });
    if (pending.failed) {
      ++failure;
      return Error(res, 503, "the server stopped before the request ran");
    }
    ++success;
    ++inferences;
    queue_us += Micros(pending.started - pending.enqueued);
    infer_us += Micros(pending.finished - pending.started);
    request_us += Micros(pending.finished - pending.enqueued);
    lock.unlock();
    nlohmann::json answer = {
        {"model_name", o.model},
        {"model_version", "1"},
        {"outputs",
         nlohmann::json::array(
             {{{"name", "OUTPUT0"}, {"datatype", "FP32"}, {"shape", {1, 1}}, {"data", {0}}}})}};
    if (body.contains("id") && body["id"].is_string()) answer["id"] = body["id"];
    Json(res, 200, answer);
  }

  void Routes() {
    const auto ok = [](const httplib::Request&, httplib::Response& res) {
      res.status = 200;
      res.set_content("", "text/plain");
    };
    http.Get("/v2/health/live", ok);
    http.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      res.status = stopping ? 503 : 200;
    });
    http.Get(R"(/v2/models/([^/]+)/ready)",
             [this](const httplib::Request& req, httplib::Response& res) {
               res.status = req.matches[1] == o.model ? 200 : 404;
             });
    http.Get(R"(/v2/models/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.matches[1] != o.model) return Error(res, 404, "unknown model");
      Json(res, 200,
           {{"name", o.model},
            {"versions", {"1"}},
            {"platform", "tessera_emulator"},
            {"inputs", nlohmann::json::array(
                           {{{"name", "INPUT0"}, {"datatype", "FP32"}, {"shape", {-1, 1}}}})},
            {"outputs", nlohmann::json::array(
                            {{{"name", "OUTPUT0"}, {"datatype", "FP32"}, {"shape", {-1, 1}}}})}});
    });
    http.Post(R"(/v2/models/([^/]+)/infer)",
              [this](const httplib::Request& req, httplib::Response& res) { Infer(req, res); });
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) Error(res, res.status, "not found");
    });
    metrics.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(Text(), "text/plain; version=0.0.4");
    });
  }

  std::string Text() const {
    std::lock_guard<std::mutex> lock(mu);
    const std::string labels = fmt::format("{{model=\"{}\",version=\"1\"}}", o.model);
    std::string out;
    const auto metric = [&](std::string_view name, std::string_view help, double value) {
      out += fmt::format("# HELP {} {}\n# TYPE {} counter\n{}{} {}\n", name, help, name, name,
                         labels, fmt::format("{:.0f}", value));
    };
    metric("nv_inference_request_success",
           "Number of successful inference requests, all batch sizes",
           static_cast<double>(success));
    metric("nv_inference_request_failure", "Number of failed inference requests, all batch sizes",
           static_cast<double>(failure));
    metric("nv_inference_count",
           "Number of inferences performed (does not include cached requests)",
           static_cast<double>(inferences));
    metric("nv_inference_exec_count",
           "Number of model executions performed (does not include cached requests)",
           static_cast<double>(executions));
    metric("nv_inference_request_duration_us",
           "Cumulative inference request duration in microseconds", std::floor(request_us));
    metric("nv_inference_queue_duration_us",
           "Cumulative inference queuing duration in microseconds", std::floor(queue_us));
    metric("nv_inference_compute_input_duration_us",
           "Cumulative compute input duration in microseconds", 0);
    metric("nv_inference_compute_infer_duration_us",
           "Cumulative compute inference duration in microseconds", std::floor(infer_us));
    metric("nv_inference_compute_output_duration_us",
           "Cumulative inference compute output duration in microseconds", 0);
    out += fmt::format(
        "# HELP nv_inference_pending_request_count Instantaneous number of pending requests "
        "awaiting execution per-model.\n# TYPE nv_inference_pending_request_count gauge\n"
        "nv_inference_pending_request_count{} {}\n",
        labels, queue.size());
    return out;
  }
};

Result<std::unique_ptr<TritonEmulator>> TritonEmulator::Start(EmulatorOptions options) {
  const int largest = std::max(1, options.batching.max_batch_size);
  if (options.model.empty()) return Status::InvalidArgument("model: give the model's name");
  if (static_cast<int>(options.latency_ms.size()) < largest) {
    return Status::InvalidArgument(
        fmt::format("latencies: {} given, the model configuration batches up to {}",
                    options.latency_ms.size(), largest));
  }
  for (const double ms : options.latency_ms) {
    if (!(ms > 0 && std::isfinite(ms))) {
      return Status::InvalidArgument(fmt::format("latencies: each must be > 0 ms, got {:g}", ms));
    }
  }
  if (!(options.dilation >= 1 && options.dilation <= 1000)) {
    return Status::InvalidArgument(
        fmt::format("dilation: must be in [1, 1000], got {:g}", options.dilation));
  }
  if (!(options.cv >= 0 && options.cv <= 10)) {
    return Status::InvalidArgument(fmt::format("cv: must be in [0, 10], got {:g}", options.cv));
  }
  auto impl = std::make_unique<Impl>();
  impl->o = std::move(options);
  impl->rng.seed(impl->o.seed);
  const int threads = impl->o.threads > 0 ? impl->o.threads : kDefaultEmulatorThreads;
  impl->http.new_task_queue = [threads] { return new GrowingPool(threads); };
  impl->metrics.new_task_queue = [] { return new httplib::ThreadPool(2); };
  impl->http.set_keep_alive_timeout(1);
  // Answers go out at once: with Nagle's algorithm a small answer waits for
  // the client's delayed ACK (40 ms on Linux).
  impl->http.set_tcp_nodelay(true);
  impl->Routes();
  const auto bind = [&](httplib::Server& server, int port, const char* what) -> Result<int> {
    const int bound = port == 0 ? server.bind_to_any_port(impl->o.host)
                                : (server.bind_to_port(impl->o.host, port) ? port : -1);
    if (bound <= 0) {
      return Status::IoError(
          fmt::format("cannot listen on {}:{} ({} port)", impl->o.host, port, what));
    }
    return bound;
  };
  TESSERA_ASSIGN_OR_RETURN(impl->http_port, bind(impl->http, impl->o.http_port, "http"));
  TESSERA_ASSIGN_OR_RETURN(impl->metrics_port,
                           bind(impl->metrics, impl->o.metrics_port, "metrics"));
  Impl* raw = impl.get();
  impl->batcher = std::thread([raw] { raw->RunBatcher(); });
  impl->http_thread = std::thread([raw] { raw->http.listen_after_bind(); });
  impl->metrics_thread = std::thread([raw] { raw->metrics.listen_after_bind(); });
  return std::unique_ptr<TritonEmulator>(new TritonEmulator(std::move(impl)));
}

TritonEmulator::TritonEmulator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TritonEmulator::~TritonEmulator() {
  Stop();
  Wait();
}

int TritonEmulator::http_port() const { return impl_->http_port; }
int TritonEmulator::metrics_port() const { return impl_->metrics_port; }

void TritonEmulator::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake_batcher.notify_all();
  impl_->http.stop();
  impl_->metrics.stop();
}

void TritonEmulator::Wait() {
  for (std::thread* t : {&impl_->http_thread, &impl_->metrics_thread, &impl_->batcher}) {
    if (t->joinable()) t->join();
  }
}

std::string TritonEmulator::MetricsText() const { return impl_->Text(); }

}  // namespace tessera
