// ReplaySweep: one trace replayed under each value of one stress knob, every
// policy at each value (GRMU section 8.2's curves: acceptance and active
// hardware against a parameter).
//
// Knobs (SweepKnob): gpus-per-host (every host gets N GPUs), lifetime (trace,
// none or scale:K, as --lifetime), arrival-rate (arrivals K times as dense:
// each arrival moves to t0 + (t - t0) / K, lifetimes kept), heavy-share
// (GRMU's heavy basket capacity, 0..1: GRMU section 8.2.1, Fig. 6-8).
// ParseSweep reads "KNOB=V1,V2,...": InvalidArgument naming the knob or value.
// ApplySweepValue sets the knob in the trace or the placer options;
// InvalidArgument for a bad value.
//
// Thread-safety: values and free functions.
#ifndef TESSERA_REPLAY_SWEEP_H_
#define TESSERA_REPLAY_SWEEP_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"
#include "tessera/online/replay_optimum.h"
#include "tessera/online/vm_trace.h"

namespace tessera {

enum class SweepKnob { kGpusPerHost, kLifetime, kArrivalRate, kHeavyShare };

inline constexpr int kMaxSweepValues = 64;

struct SweepSpec {
  SweepKnob knob = SweepKnob::kGpusPerHost;
  std::string name;                 // as written: "gpus-per-host"
  std::vector<std::string> values;  // 1..kMaxSweepValues, each checked
};

Result<SweepSpec> ParseSweep(std::string_view text);

// `trace` and `options` with the knob at `value` (one of spec.values).
Status ApplySweepValue(SweepKnob knob, std::string_view value, VmTrace& trace,
                       PlacerOptions& options);

struct SweepPoint {
  std::string value;
  std::vector<ReplayReport> reports;     // one per policy
  std::optional<ReplayOptimum> optimum;  // where solved
};

struct ReplaySweep {
  std::string knob;
  std::vector<SweepPoint> points;
};

}  // namespace tessera

#endif  // TESSERA_REPLAY_SWEEP_H_
