// Text, JSON, CSV and SVG renderings of online replay reports, for one policy
// or several compared on the same trace (GRMU Table 6, Fig. 10-12).
//
// Thread-safety: free functions without state.
#ifndef TESSERA_REPLAY_REPORT_FORMAT_H_
#define TESSERA_REPLAY_REPORT_FORMAT_H_

#include <span>
#include <string>

#include "tessera/online/replay.h"
#include "tessera/online/replay_optimum.h"
#include "tessera/online/replay_sweep.h"

namespace tessera {

// For people: one row per policy (requests, accepted, acceptance, active
// hardware AUC and mean, migrations intra/inter and share), then acceptance
// per profile with one column per policy.
// With `optimum`, a last section gives the offline optimum (GRMU's ILP) and
// each policy's distance to it: accepted VMs fewer, active hardware more.
std::string FormatReplayTable(std::span<const ReplayReport> reports,
                              const ReplayOptimum* optimum = nullptr);

// For programs: a JSON array with one object per report; each has at least
// policy, requests, accepted, acceptance, active_hw_auc, migrations (intra +
// inter), plus the detail fields and per_profile; `with_samples` adds the
// hourly series. With `optimum`, every policy's object also has
// accepted_gap (optimum's accepted - its own) and active_hw_auc_gap (its own -
// the optimum's), and a last object with policy "optimum" holds the optimum
// (accepted, acceptance, per_profile, active_hw_auc, migrations, whether each
// objective was proven, accepted_bound, the ILP's size and solve time).
std::string FormatReplayJson(std::span<const ReplayReport> reports, bool with_samples,
                             const ReplayOptimum* optimum = nullptr);

// The hourly series of every report, long format, one header line:
// policy,hour,start_s,arrivals,accepted,acceptance,cumulative_acceptance,
// active_hw_rate,resident_vms (empty acceptance for hours without arrivals).
std::string FormatReplayCsv(std::span<const ReplayReport> reports);

// A self-contained SVG with two line charts over replay hours, one line per
// policy with a legend: cumulative acceptance (%) and active hardware rate (%).
std::string FormatReplaySvg(std::span<const ReplayReport> reports);

// A stress sweep (replay_sweep.h) as CSV, one header line and one row per
// knob value x policy (and x "optimum" where it was solved):
// knob,value,policy,hosts,gpus,requests,accepted,acceptance,active_hw_auc,
// mean_active_hw_rate,intra_migrations,inter_migrations,migration_share,
// optimum_accepted (empty where not solved).
std::string FormatSweepCsv(const ReplaySweep& sweep);

// The sweep as an SVG: overall acceptance (%) and mean active hardware rate
// (%) against the knob's values, one line per policy (GRMU Fig. 6 and 8), the
// optimum's acceptance as one more line where it was solved.
std::string FormatSweepSvg(const ReplaySweep& sweep);

}  // namespace tessera

#endif  // TESSERA_REPLAY_REPORT_FORMAT_H_
