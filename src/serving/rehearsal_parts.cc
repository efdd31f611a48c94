// The rehearsals' shared parts (rehearsal_parts.h).
#include "serving/rehearsal_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "agent/supervisor.h"
#include "tessera/util/clock.h"

namespace tessera::serving {

std::vector<std::string> EmulatorCommand(const std::string& tessera_binary,
                                         const std::string& model_repository,
                                         const std::string& gpu, const std::string& profiles,
                                         double dilation, uint64_t seed) {
  std::vector<std::string> command = {tessera_binary,
                                      "emulate",
                                      "--model={model}",
                                      "--model-repository=" + model_repository,
                                      "--model-config-name={model_config}",
                                      "--gpu=" + gpu,
                                      "--profile={profile}",
                                      "--procs={procs}",
                                      "--http-port={http_port}",
                                      "--metrics-port={metrics_port}",
                                      fmt::format("--dilation={}", dilation),
                                      fmt::format("--seed={}", seed)};
  if (!profiles.empty()) command.push_back("--profiles=" + profiles);
  return command;
}

std::pair<int, int> EphemeralPorts() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 0 && high >= low) return {low, high};
  return {32768, 60999};
}

Status KillUnits(const std::vector<std::string>& state_dirs) {
  Status first = Status::Ok();
  for (const std::string& dir : state_dirs) {
    agent::Supervisor units(dir, SystemClock());
    for (const auto& [name, unit] : units.Scan()) {
      Status killed = units.Kill(name);
      if (first.ok()) first = std::move(killed);
    }
  }
  return first;
}

Status AfterStopping(const Status& error, const Status& stopped) {
  return stopped.ok() ? error
                      : error.WithContext("(stopping also failed: " + stopped.message() + ")");
}

SmallStacks::SmallStacks() {
  getrlimit(RLIMIT_STACK, &saved_);
  rlimit stack = saved_;
  stack.rlim_cur = std::min<rlim_t>(stack.rlim_max, 1 << 20);
  setrlimit(RLIMIT_STACK, &stack);
}

SmallStacks::~SmallStacks() { setrlimit(RLIMIT_STACK, &saved_); }

LoadTarget DilatedTarget(const ServingService& s, int port, double dilation) {
  LoadTarget t;
  t.service = s.name;
  t.port = port;
  t.path = "/v2/models/" + s.name + "/infer";
  t.rate_rps = s.rate_rps / dilation;
  t.slo_ms = s.slo_ms * dilation;
  return t;
}

double RequestTimeoutS(const std::vector<ServingService>& services, double dilation) {
  double longest_slo_ms = 0;
  for (const ServingService& s : services) longest_slo_ms = std::max(longest_slo_ms, s.slo_ms);
  return std::max(60.0, 20 * longest_slo_ms * dilation / 1000);
}

double P99Ms(const LoadCounts& c, double dilation) {
  return c.latency_ms.Count() > 0 ? c.latency_ms.Quantile(0.99) / dilation : 0;
}

double Compliance(const LoadCounts& c) {
  return c.sent > 0 ? static_cast<double>(c.within_slo) / c.sent : 1;
}

RehearsedService Measured(const ServingService& s, const LoadCounts& c,
                          const ServiceReport& predicted, double dilation) {
  RehearsedService out;
  out.name = s.name;
  out.rate_rps = s.rate_rps;
  out.slo_ms = s.slo_ms;
  out.predicted = predicted;
  out.offered = c.sent;
  out.served = c.ok;
  out.failed = c.sent - c.ok;
  if (c.latency_ms.Count() > 0) out.p50_ms = c.latency_ms.Quantile(0.5) / dilation;
  out.p99_ms = P99Ms(c, dilation);
  out.compliance = Compliance(c);
  return out;
}

}  // namespace tessera::serving
