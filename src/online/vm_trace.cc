// VmTrace helpers (vm_trace.h): lifetime modes, stress shaping, counts.
#include "tessera/online/vm_trace.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr std::string_view kLifetimeHelp =
    "expected 'trace', 'none' or 'scale:K' with K a finite number > 0";

bool ValidFactor(double factor) { return std::isfinite(factor) && factor > 0; }

void KeepFirstHosts(VmTrace& trace, int max_hosts) {
  const size_t before = trace.hosts.size();
  if (before > static_cast<size_t>(max_hosts)) trace.hosts.resize(max_hosts);
  trace.notes.push_back(fmt::format("shaping: kept the first {} of {} hosts (max_hosts {})",
                                    trace.hosts.size(), before, max_hosts));
}

void SetGpusPerHost(VmTrace& trace, int gpus) {
  const std::int64_t before = trace.TotalGpus();
  for (HostSpec& host : trace.hosts) host.gpus = gpus;
  trace.notes.push_back(fmt::format("shaping: GPUs per host set to {} ({} GPUs in all, was {})",
                                    gpus, trace.TotalGpus(), before));
}

void DropHostsWithoutGpus(VmTrace& trace) {
  const size_t before = trace.hosts.size();
  std::erase_if(trace.hosts, [](const HostSpec& host) { return host.gpus <= 0; });
  if (trace.hosts.size() == before) return;
  trace.notes.push_back(
      fmt::format("shaping: dropped {} hosts without GPUs", before - trace.hosts.size()));
}

Status ApplyLifetime(VmTrace& trace, const Lifetime& lifetime) {
  switch (lifetime.mode) {
    case Lifetime::Mode::kTrace:
      return Status::Ok();
    case Lifetime::Mode::kNone:
      for (VmRequest& vm : trace.vms) vm.departure_s = kNeverDeparts;
      trace.notes.push_back("shaping: lifetimes 'none': no VM departs");
      return Status::Ok();
    case Lifetime::Mode::kScale:
      // A VM that never departs stays so; one that departs at its arrival
      // still does (0 x K = 0).
      for (VmRequest& vm : trace.vms) {
        if (vm.departure_s == kNeverDeparts) continue;
        vm.departure_s = vm.arrival_s + lifetime.factor * (vm.departure_s - vm.arrival_s);
        // A departure past the trace's limits (or overflowing to infinity,
        // which would read as "never departs") is refused, not replayed.
        if (!limits::kTraceTimeS.Contains(vm.departure_s)) {
          return Status::InvalidArgument(
              fmt::format("lifetime: VM {} would depart at {:g} s; trace times must be {}", vm.name,
                          vm.departure_s, limits::kTraceTimeS.Describe()));
        }
      }
      trace.notes.push_back(
          fmt::format("shaping: lifetimes scaled by {} (departure = arrival + {} x lifetime)",
                      lifetime.factor, lifetime.factor));
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

std::int64_t VmTrace::TotalGpus() const {
  std::int64_t total = 0;
  for (const HostSpec& host : hosts) total += host.gpus;
  return total;
}

Result<Lifetime> Lifetime::Parse(std::string_view text) {
  if (text == "trace") return Lifetime{Mode::kTrace, 1};
  if (text == "none") return Lifetime{Mode::kNone, 1};
  constexpr std::string_view kScale = "scale:";
  if (text.starts_with(kScale)) {
    const std::optional<double> factor = ToDouble(text.substr(kScale.size()));
    if (factor && ValidFactor(*factor)) return Lifetime{Mode::kScale, *factor};
  }
  return Status::InvalidArgument(
      fmt::format("lifetime: {}, got {}", kLifetimeHelp, QuoteForMessage(text)));
}

Status TraceShaping::Validate() const {
  if (max_hosts && *max_hosts < 1) {
    return Status::InvalidArgument(fmt::format("max hosts: must be >= 1, got {}", *max_hosts));
  }
  if (gpus_per_host && (*gpus_per_host < 1 || !limits::kGpusPerHost.Contains(*gpus_per_host))) {
    return Status::InvalidArgument(
        fmt::format("GPUs per host: must be an integer in [1, {:g}], got {}",
                    limits::kGpusPerHost.max, *gpus_per_host));
  }
  if (max_vms && *max_vms < 1) {
    return Status::InvalidArgument(fmt::format("max requests: must be >= 1, got {}", *max_vms));
  }
  if (lifetime.mode == Lifetime::Mode::kScale && !ValidFactor(lifetime.factor)) {
    return Status::InvalidArgument(
        fmt::format("lifetime: scale factor must be a finite number > 0, got {}", lifetime.factor));
  }
  return Status::Ok();
}

Result<VmTrace> ShapeTrace(VmTrace trace, const TraceShaping& shaping) {
  TESSERA_RETURN_IF_ERROR(shaping.Validate());
  if (shaping.max_hosts) KeepFirstHosts(trace, *shaping.max_hosts);
  if (shaping.gpus_per_host) SetGpusPerHost(trace, *shaping.gpus_per_host);
  DropHostsWithoutGpus(trace);
  if (trace.hosts.empty()) {
    return Status::InvalidArgument(
        "shaping: no host with a GPU is left; keep more hosts or set GPUs per host");
  }
  if (!limits::kClusterGpus.Contains(static_cast<double>(trace.TotalGpus()))) {
    return Status::InvalidArgument(fmt::format(
        "shaping: {} hosts hold {} GPUs in all; a replayed cluster holds {} (keep fewer hosts "
        "or set fewer GPUs per host)",
        trace.hosts.size(), trace.TotalGpus(), limits::kClusterGpus.Describe()));
  }
  if (shaping.max_vms && trace.vms.size() > static_cast<size_t>(*shaping.max_vms)) {
    trace.notes.push_back(
        fmt::format("kept the first {} of {} requests", *shaping.max_vms, trace.vms.size()));
    trace.vms.resize(*shaping.max_vms);
  }
  TESSERA_RETURN_IF_ERROR(ApplyLifetime(trace, shaping.lifetime));
  return trace;
}

std::vector<int> RequestsPerProfile(const VmTrace& trace) {
  if (trace.gpu == nullptr) return {};
  std::vector<int> counts(trace.gpu->profiles.size(), 0);
  for (const VmRequest& vm : trace.vms) {
    if (vm.profile >= 0 && static_cast<size_t>(vm.profile) < counts.size()) ++counts[vm.profile];
  }
  return counts;
}

}  // namespace tessera
