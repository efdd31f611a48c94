// GenerateSyntheticTrace (synthetic_trace.h). Every random draw is computed
// here from raw std::mt19937_64 output (whose sequence the standard fixes)
// rather than through std::*_distribution (whose algorithms it leaves to each
// library), so a seed gives the same trace with libstdc++, libc++ and MSVC.
#include "online/synthetic_trace.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/util/input_limits.h"
#include "util/random_draws.h"

namespace tessera {
namespace {

// Bounds that keep allocations sane; hosts x GPUs per host is also held to
// limits::kClusterGpus, as every replayed trace is.
constexpr int kMaxHosts = 100'000;
constexpr int kMaxGpusPerHost = 1'024;
constexpr int kMaxVms = 10'000'000;

Status CheckCount(std::string_view field, int value, int max) {
  if (value >= 1 && value <= max) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("{}: must be an integer in [1, {}], got {}", field, max, value));
}

// A finite number, > 0 or (when `allow_zero`) >= 0, at most `max`.
Status CheckNumber(std::string_view field, double value, bool allow_zero,
                   double max = std::numeric_limits<double>::max()) {
  if (value > max) {
    return Status::InvalidArgument(
        fmt::format("{}: must be at most {:g}, got {}", field, max, value));
  }
  if (std::isfinite(value) && (value > 0 || (allow_zero && value == 0))) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: must be a finite number {} 0, got {}", field,
                                             allow_zero ? ">=" : ">", value));
}

Status CheckWeight(const MigProfile& profile, size_t k, double weight) {
  const std::string field = fmt::format("profile_weights[{}] ({})", k, profile.name);
  TESSERA_RETURN_IF_ERROR(CheckNumber(field, weight, /*allow_zero=*/true));
  if (profile.media_extensions && weight != 0) {
    return Status::InvalidArgument(
        fmt::format("{}: must be 0: a VM never asks for a profile with media extensions, got {}",
                    field, weight));
  }
  return Status::Ok();
}

Status CheckWeights(const GpuModel& gpu, const std::vector<double>& weights) {
  if (weights.empty()) return Status::Ok();  // equal weights
  if (weights.size() != gpu.profiles.size()) {
    return Status::InvalidArgument(
        fmt::format("profile_weights: {} has {} profiles, got {} weights (empty: equal weights)",
                    gpu.name, gpu.profiles.size(), weights.size()));
  }
  double total = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    TESSERA_RETURN_IF_ERROR(CheckWeight(gpu.profiles[k], k, weights[k]));
    total += weights[k];
  }
  if (total > 0 && std::isfinite(total)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "profile_weights: need at least one weight > 0 and a finite sum, got sum {}", total));
}

// Weights as given, or 1 for every profile without media extensions.
std::vector<double> EffectiveWeights(const GpuModel& gpu, const std::vector<double>& weights) {
  if (!weights.empty()) return weights;
  std::vector<double> equal(gpu.profiles.size(), 0);
  for (int k : gpu.NonMediaProfiles()) equal[k] = 1;
  return equal;
}

// Inverse CDF of the exponential law with mean 1 / rate; 1 - U is in (0, 1].
double Exponential(std::mt19937_64& rng, double rate) { return -std::log(1 - Uniform(rng)) / rate; }

// Index k drawn with probability weights[k] / sum. REQUIRES: some weight > 0.
int Categorical(std::mt19937_64& rng, const std::vector<double>& weights, double total) {
  double x = Uniform(rng) * total;
  int last_positive = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    if (weights[k] <= 0) continue;
    if (x < weights[k]) return static_cast<int>(k);
    x -= weights[k];
    last_positive = static_cast<int>(k);
  }
  return last_positive;  // rounding left x at the very top
}

std::vector<HostSpec> MakeHosts(const SyntheticTraceOptions& o) {
  std::vector<HostSpec> hosts;
  for (int i = 0; i < o.hosts; ++i) {
    hosts.push_back(
        {fmt::format("host-{:04d}", i), o.host_cpu_milli, o.host_memory_mib, o.gpus_per_host});
  }
  return hosts;
}

std::vector<VmRequest> MakeVms(const GpuModel& gpu, const SyntheticTraceOptions& o) {
  std::mt19937_64 rng(o.seed);
  const std::vector<double> weights = EffectiveWeights(gpu, o.profile_weights);
  double total = 0;
  for (double w : weights) total += w;
  const double rate_per_s = o.arrivals_per_hour / 3600;
  std::vector<VmRequest> vms;
  double now = 0;
  for (int i = 0; i < o.vms; ++i) {
    now += Exponential(rng, rate_per_s);  // drawn in this order for every VM
    const int profile = Categorical(rng, weights, total);
    const double z = StandardNormal(rng);
    const double departure = o.median_lifetime_s == kNeverDeparts
                                 ? kNeverDeparts
                                 : now + o.median_lifetime_s * std::exp(o.lifetime_sigma * z);
    vms.push_back(
        {i, fmt::format("vm-{:06d}", i), profile, o.vm_cpu_milli, o.vm_memory_mib, now, departure});
  }
  return vms;
}

}  // namespace

Status SyntheticTraceOptions::Validate(const GpuModel& gpu) const {
  TESSERA_RETURN_IF_ERROR(CheckCount("hosts", hosts, kMaxHosts));
  TESSERA_RETURN_IF_ERROR(CheckCount("gpus_per_host", gpus_per_host, kMaxGpusPerHost));
  if (!limits::kClusterGpus.Contains(static_cast<double>(hosts) * gpus_per_host)) {
    return Status::InvalidArgument(
        fmt::format("gpus_per_host: {} hosts x {} GPUs {}", hosts, gpus_per_host,
                    OutOfRange(limits::kClusterGpus, static_cast<double>(hosts) * gpus_per_host)));
  }
  TESSERA_RETURN_IF_ERROR(
      CheckNumber("host_cpu_milli", host_cpu_milli, /*allow_zero=*/false, limits::kCpuMilli.max));
  TESSERA_RETURN_IF_ERROR(CheckNumber("host_memory_mib", host_memory_mib, /*allow_zero=*/false,
                                      limits::kMemoryMib.max));
  TESSERA_RETURN_IF_ERROR(CheckCount("vms", vms, kMaxVms));
  TESSERA_RETURN_IF_ERROR(
      CheckNumber("arrivals_per_hour", arrivals_per_hour, /*allow_zero=*/false));
  TESSERA_RETURN_IF_ERROR(CheckWeights(gpu, profile_weights));
  if (!(median_lifetime_s > 0)) {  // NaN fails too
    return Status::InvalidArgument(fmt::format(
        "median_lifetime_s: must be > 0 (infinity: VMs never depart), got {}", median_lifetime_s));
  }
  TESSERA_RETURN_IF_ERROR(CheckNumber("lifetime_sigma", lifetime_sigma, /*allow_zero=*/true));
  TESSERA_RETURN_IF_ERROR(
      CheckNumber("vm_cpu_milli", vm_cpu_milli, /*allow_zero=*/true, limits::kCpuMilli.max));
  return CheckNumber("vm_memory_mib", vm_memory_mib, /*allow_zero=*/true, limits::kMemoryMib.max);
}

Result<VmTrace> GenerateSyntheticTrace(const GpuModel& gpu, const SyntheticTraceOptions& options) {
  TESSERA_RETURN_IF_ERROR(options.Validate(gpu));
  VmTrace trace;
  trace.gpu = &gpu;
  trace.hosts = MakeHosts(options);
  trace.vms = MakeVms(gpu, options);
  trace.notes.push_back(fmt::format(
      "synthetic trace: {} hosts x {} {} GPUs, {} VMs, Poisson arrivals at {}/h, seed {}",
      options.hosts, options.gpus_per_host, gpu.name, options.vms, options.arrivals_per_hour,
      options.seed));
  return trace;
}

}  // namespace tessera
