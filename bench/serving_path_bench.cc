// Benchmarks of the rehearsal's data path (docs/rehearse.md): one Triton
// emulator driven by the open-loop generator at a fixed rate, directly and
// through HAProxy (the router deploy ships), in one process each run.
// Counters: served_per_s (answered requests per wall second), cpu_us_per_req
// (this process's user + system CPU per request: the generator and the
// emulator together), p50_ms and p99_ms (wall latency from the scheduled
// send time), and jitter_p99_ms (the generator's send jitter). The
// emulator runs batches of up to 64 at 0.05 ms each, so the path's own
// cost is what is measured. The HAProxy rows are skipped where haproxy is
// not installed.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "emit/router_config.h"
#include "serving/load_generator.h"
#include "tessera/latency_rule.h"
#include "tessera/serving/triton_emulator.h"

extern char** environ;

namespace tessera {
namespace {

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// HAProxy in front of one server, leastconn; stopped on destruction.
class Proxy {
 public:
  Proxy(int server_port, int port) {
    RouterBackend backend{"m", "m", port, {}};
    backend.servers.push_back(
        {"p0", "127.0.0.1", server_port, 64, 256, "node-0", 0, 0, 0, true, {}});
    RouterSettings settings;
    settings.bind_address = "127.0.0.1";
    settings.metrics_port = port + 1;
    settings.stats_socket = "/tmp/tessera-bench-haproxy.sock";
    settings.max_connections = 4000;
    LatencyRule rule;
    rule.router = Router::kLeastConn;
    std::ofstream("/tmp/tessera-bench-haproxy.cfg")
        << FormatHaproxyConfig(rule, {backend}, settings);
    const char* argv[] = {"haproxy", "-db", "-f", "/tmp/tessera-bench-haproxy.cfg", nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    ok_ = posix_spawnp(&pid_, "haproxy", &actions, nullptr, const_cast<char**>(argv), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    // Its health check (inter 2 s, rise 1) marks the server up.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  }
  ~Proxy() {
    if (!ok_) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  bool ok() const { return ok_; }

 private:
  pid_t pid_ = 0;
  bool ok_ = false;
};

// range(0): requests per second; range(1): 1 = through HAProxy.
void BM_ServingPath(benchmark::State& state) {
  const bool routed = state.range(1) == 1;
  if (routed && std::system("haproxy -v >/dev/null 2>&1") != 0) {
    state.SkipWithError("haproxy is not installed");
    return;
  }
  EmulatorOptions o;
  o.model = "m";
  o.batching.max_batch_size = 64;
  o.batching.dynamic_batching = true;
  o.latency_ms.assign(64, 0.05);
  o.http_port = 0;
  o.metrics_port = 0;
  o.threads = 512;  // the generator's own connections, when it is the only client
  Result<std::unique_ptr<TritonEmulator>> emulator = TritonEmulator::Start(o);
  if (!emulator.ok()) {
    state.SkipWithError(emulator.status().message().c_str());
    return;
  }
  const int router_port = 23950;
  std::unique_ptr<Proxy> router;
  if (routed) router = std::make_unique<Proxy>((*emulator)->http_port(), router_port);
  LoadTarget target;
  target.service = "m";
  target.port = routed ? router_port : (*emulator)->http_port();
  target.path = "/v2/models/m/infer";
  target.rate_rps = static_cast<double>(state.range(0));
  target.slo_ms = 1000;
  LoadOptions load;
  load.duration_s = 2;
  QuantileHistogram latency, jitter;
  long served = 0;
  double cpu_s = 0, wall_s = 0;
  for (auto _ : state) {
    const double cpu0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    Result<LoadReport> r = RunOpenLoopLoad({target}, load);
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_s += CpuSeconds() - cpu0;
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    served += r->services[0].total.ok;
    latency = r->services[0].total.latency_ms;
    jitter = r->send_jitter_ms;
  }
  state.counters["served_per_s"] = served / wall_s;
  state.counters["cpu_us_per_req"] = served > 0 ? cpu_s * 1e6 / served : 0;
  state.counters["p50_ms"] = latency.Quantile(0.5);
  state.counters["p99_ms"] = latency.Quantile(0.99);
  state.counters["jitter_p99_ms"] = jitter.Quantile(0.99);
}
BENCHMARK(BM_ServingPath)
    ->ArgsProduct({{1000, 4000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace tessera
