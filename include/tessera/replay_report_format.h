// Text, JSON, CSV and SVG renderings of online replay reports, for one policy
// or several compared on the same trace (GRMU Table 6, Fig. 10-12).
//
// Thread-safety: free functions without state.
#ifndef TESSERA_REPLAY_REPORT_FORMAT_H_
#define TESSERA_REPLAY_REPORT_FORMAT_H_

#include <span>
#include <string>

#include "tessera/replay.h"

namespace tessera {

// For people: one row per policy (requests, accepted, acceptance, active
// hardware AUC and mean, migrations intra/inter and share), then acceptance
// per profile with one column per policy.
std::string FormatReplayTable(std::span<const ReplayReport> reports);

// For programs: a JSON array with one object per report; each has at least
// policy, requests, accepted, acceptance, active_hw_auc, migrations (intra +
// inter), plus the detail fields and per_profile; `with_samples` adds the
// hourly series.
std::string FormatReplayJson(std::span<const ReplayReport> reports, bool with_samples);

// The hourly series of every report, long format, one header line:
// policy,hour,start_s,arrivals,accepted,acceptance,cumulative_acceptance,
// active_hw_rate,resident_vms (empty acceptance for hours without arrivals).
std::string FormatReplayCsv(std::span<const ReplayReport> reports);

// A self-contained SVG with two line charts over replay hours, one line per
// policy with a legend: cumulative acceptance (%) and active hardware rate (%).
std::string FormatReplaySvg(std::span<const ReplayReport> reports);

}  // namespace tessera

#endif  // TESSERA_REPLAY_REPORT_FORMAT_H_
