// ParseSweep and ApplySweepValue (replay_sweep.h): the knobs reuse the trace
// shaping of vm_trace.h; arrival-rate is the one knob of their own.
#include "tessera/online/replay_sweep.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr std::string_view kKnobs = "gpus-per-host, lifetime, arrival-rate or heavy-share";

Result<int> ParseGpus(std::string_view value) {
  const std::optional<double> n = ToDouble(value);
  if (!n || *n != std::floor(*n) || *n < 1 || *n > 65'536) {
    return Status::InvalidArgument(
        "--sweep gpus-per-host: expected an integer in [1, 65536], got " + QuoteForMessage(value));
  }
  return static_cast<int>(*n);
}

Result<double> ParseRate(std::string_view value) {
  const std::optional<double> k = ToDouble(value);
  if (!k || !std::isfinite(*k) || *k < 1e-3 || *k > 1e3) {
    return Status::InvalidArgument(
        "--sweep arrival-rate: expected a factor in [0.001, 1000], got " + QuoteForMessage(value));
  }
  return *k;
}

Result<double> ParseShare(std::string_view value) {
  const std::optional<double> share = ToDouble(value);
  if (!share || !(*share >= 0 && *share <= 1)) {
    return Status::InvalidArgument("--sweep heavy-share: expected a share in [0, 1], got " +
                                   QuoteForMessage(value));
  }
  return *share;
}

Status CheckValue(SweepKnob knob, std::string_view value) {
  switch (knob) {
    case SweepKnob::kGpusPerHost:
      return ParseGpus(value).status();
    case SweepKnob::kLifetime:
      if (Result<Lifetime> l = Lifetime::Parse(value); !l.ok()) {
        return l.status().WithContext("--sweep lifetime");
      }
      return Status::Ok();
    case SweepKnob::kArrivalRate:
      return ParseRate(value).status();
    case SweepKnob::kHeavyShare:
      return ParseShare(value).status();
  }
  return Status::Ok();
}

}  // namespace

Result<SweepSpec> ParseSweep(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "--sweep: expected KNOB=V1,V2,... with KNOB {}, got {}", kKnobs, QuoteForMessage(text)));
  }
  SweepSpec spec;
  spec.name = std::string(text.substr(0, eq));
  if (spec.name == "gpus-per-host") {
    spec.knob = SweepKnob::kGpusPerHost;
  } else if (spec.name == "lifetime") {
    spec.knob = SweepKnob::kLifetime;
  } else if (spec.name == "arrival-rate") {
    spec.knob = SweepKnob::kArrivalRate;
  } else if (spec.name == "heavy-share") {
    spec.knob = SweepKnob::kHeavyShare;
  } else {
    return Status::InvalidArgument(
        fmt::format("--sweep: unknown knob {}; expected {}", QuoteForMessage(spec.name), kKnobs));
  }
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view value = rest.substr(0, comma);
    if (value.empty()) {
      return Status::InvalidArgument("--sweep " + spec.name + ": empty value in " +
                                     QuoteForMessage(text));
    }
    TESSERA_RETURN_IF_ERROR(CheckValue(spec.knob, value));
    spec.values.emplace_back(value);
    if (spec.values.size() > static_cast<size_t>(kMaxSweepValues)) {
      return Status::InvalidArgument(
          fmt::format("--sweep {}: at most {} values", spec.name, kMaxSweepValues));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return spec;
}

Status ApplySweepValue(SweepKnob knob, std::string_view value, VmTrace& trace,
                       PlacerOptions& options) {
  TESSERA_RETURN_IF_ERROR(CheckValue(knob, value));
  TraceShaping shaping;
  switch (knob) {
    case SweepKnob::kGpusPerHost:
      shaping.gpus_per_host = *ParseGpus(value);
      break;
    case SweepKnob::kLifetime:
      shaping.lifetime = *Lifetime::Parse(value);
      break;
    case SweepKnob::kHeavyShare:
      options.heavy_share = *ParseShare(value);
      return Status::Ok();
    case SweepKnob::kArrivalRate: {
      const double k = *ParseRate(value);
      if (trace.vms.empty()) return Status::Ok();
      const double t0 = trace.vms.front().arrival_s;
      for (VmRequest& vm : trace.vms) {
        const double arrival = t0 + (vm.arrival_s - t0) / k;
        if (vm.departure_s != kNeverDeparts) {
          vm.departure_s = arrival + (vm.departure_s - vm.arrival_s);
        }
        vm.arrival_s = arrival;
      }
      trace.notes.push_back(
          fmt::format("shaping: arrivals {:g} times as dense (lifetimes kept)", k));
      return Status::Ok();
    }
  }
  TESSERA_ASSIGN_OR_RETURN(trace, ShapeTrace(std::move(trace), shaping));
  return Status::Ok();
}

}  // namespace tessera
