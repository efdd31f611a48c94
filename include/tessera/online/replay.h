// Replay: drives an OnlinePlacer through a VmTrace on an OnlineCluster and
// measures it as the GRMU paper does.
//
// Events in time order; at equal times departures come first (they free
// room), then maintenance, then arrivals in trace order. The replay runs from
// the first arrival to the last event (departures included).
//
// Metrics (DESIGN.md, Online):
//  - acceptance: accepted / requests, overall, per profile and per hour;
//  - active hardware rate: (active hosts + their GPUs) / (hosts + GPUs),
//    where a host and all its GPUs are active while it runs any VM; its
//    time-weighted mean per hour, and the area under the hourly curve in
//    percent-hours (sum over hours of the hourly mean in %, GRMU Table 6);
//  - migrations, intra- and inter-GPU, and as a share of accepted VMs.
//
// Thread-safety: free function; separate replays may run concurrently.
#ifndef TESSERA_REPLAY_H_
#define TESSERA_REPLAY_H_

#include <functional>
#include <string>
#include <vector>

#include "tessera/online/online_cluster.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/vm_trace.h"
#include "tessera/util/clock.h"

namespace tessera {

struct ReplayOptions {
  double bucket_s = 3600;  // length of one time-series sample (an hour)
  // Called after every arrival, departure and maintenance step (tests check
  // invariants here); may be empty.
  std::function<void(const OnlineCluster&)> after_event;
  const Clock* clock = &SystemClock();  // times replay_ms
};

struct ProfileTally {
  int profile = 0;  // index into the GPU model's profiles
  int requests = 0;
  int accepted = 0;
};

// One time bucket [start_s, start_s + bucket_s) of the replay.
struct ReplaySample {
  double start_s = 0;  // relative to the first arrival
  int arrivals = 0;
  int accepted = 0;
  int cumulative_arrivals = 0;
  int cumulative_accepted = 0;
  double active_hw_rate = 0;  // time-weighted mean over the bucket, 0..1
  int resident_vms = 0;       // at the end of the bucket
};

struct ReplayReport {
  std::string policy;
  std::string gpu;  // GPU model name
  int hosts = 0;
  int gpus = 0;
  int requests = 0;
  int accepted = 0;
  double acceptance = 0;                  // accepted / requests (0 if none)
  std::vector<ProfileTally> per_profile;  // profiles with requests, catalog order
  double active_hw_auc = 0;               // percent-hours
  double mean_active_hw_rate = 0;         // mean of the hourly rates, 0..1
  int intra_migrations = 0;
  int inter_migrations = 0;
  double migration_share = 0;  // (intra + inter) / accepted
  int peak_resident_vms = 0;
  double duration_s = 0;  // first arrival to last event
  double replay_ms = 0;   // wall time of the replay itself
  std::vector<ReplaySample> samples;
  std::vector<MigrationEvent> migrations;
};

// InvalidArgument if options are bad; Internal if the placer broke the
// cluster's rules (a bug).
Result<ReplayReport> Replay(const VmTrace& trace, OnlinePlacer& placer,
                            const ReplayOptions& options = {});

}  // namespace tessera

#endif  // TESSERA_REPLAY_H_
