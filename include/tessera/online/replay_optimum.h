// ReplayOptimum: the offline optimum of a small replay window, GRMU's
// multi-objective ILP (Siavashi and Momtazpour, section 6, Eq. 3-26) with the
// time index it omits put back, solved exactly with COIN-OR CBC.
//
// The window's VMs are known in advance (offline), so the optimum is what no
// online policy can beat: at every event time of the replay (an arrival or a
// departure, GRMU's "discrete interval") the VMs accepted and still resident
// must have a legal placement on the cluster (MIG geometry, host CPU and RAM,
// Eq. 6-18), and an accepted VM stays placed from its arrival to its
// departure. Placements may change from one event time to the next (the
// model's migrations, Eq. 22-25). The three objectives are solved in the
// paper's order, each one holding the optimum of the ones before
// (lexicographic):
//   1. Eq. 3: the most accepted VMs (a_i = 1);
//   2. Eq. 4: the least active hardware over time, in the replay's unit: the
//      area under the active hardware rate in percent-hours, a host and all
//      its GPUs counting while it runs any VM (b_j = 1; the paper's strict
//      definition, section 2);
//   3. Eq. 5: the fewest migrations (delta_i = 1 for resident VMs), counted as
//      the replay counts them: a VM whose (GPU, start) changes between two
//      event times, intra-GPU when the GPU stays.
// docs/online-placement.md, "The offline optimum", lists every choice.
//
// Inputs: a VmTrace of at most kOptimumMaxVms requests. Hosts identical in
// CPU, RAM and GPU count are interchangeable; of each such class the model
// keeps as many as the most VMs resident at once (no placement uses more),
// and the model must stay within kOptimumMaxColumns columns.
// Errors: InvalidArgument naming the limit when the window has more VMs or
// the model more columns; Internal if CBC fails.
// Thread-safety: free functions; separate solves may run concurrently.
#ifndef TESSERA_REPLAY_OPTIMUM_H_
#define TESSERA_REPLAY_OPTIMUM_H_

#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/online/replay.h"
#include "tessera/online/vm_trace.h"
#include "tessera/util/clock.h"

namespace tessera {

inline constexpr int kOptimumMaxVms = 40;
inline constexpr int kOptimumMaxColumns = 60'000;

// One profile in the ILP's terms (GRMU Table 5): the GI size g_i in memory
// slices, the last permissible start s_i, and the allowed starts; the paper
// writes a start as z_ijk = g_i * beta_i <= s_i, which on A100-40GB is the
// catalog's list of starts.
struct GiEncoding {
  int g = 0;
  int s = 0;
  std::vector<int> starts;
};

// Indexed like gpu.profiles.
std::vector<GiEncoding> GiEncodings(const GpuModel& gpu);

struct OptimumOptions {
  // How many of the lexicographic objectives to solve: 1 (Eq. 3, acceptance
  // only; then the active hardware and migrations reported are those of the
  // acceptance-optimal plan found, not minimised), 2 (and Eq. 4) or 3.
  int objectives = 3;
  double time_limit_s = 60;  // per lexicographic stage; > 0
  const Clock* clock = &SystemClock();
};

struct ReplayOptimum {
  int requests = 0;
  int accepted = 0;  // Eq. 3 at its optimum (or the best found)
  double acceptance = 0;
  std::vector<ProfileTally> per_profile;  // profiles with requests, catalog order
  double active_hw_auc = 0;               // percent-hours, Eq. 4 given Eq. 3
  int intra_migrations = 0;               // Eq. 5 given Eq. 3 and 4
  int inter_migrations = 0;
  // Each objective proven optimal (given the ones before), or cut short by
  // the time limit (then the best plan found is reported; `accepted_bound`
  // is the most any plan could accept, CBC's bound) or not solved.
  bool acceptance_proven = false;
  bool active_hw_proven = false;
  bool migrations_proven = false;
  int accepted_bound = 0;
  int event_times = 0;  // states of the model (event times + instants)
  int columns = 0;      // size of the ILP
  int rows = 0;
  double solve_ms = 0;
};

Result<ReplayOptimum> SolveReplayOptimum(const VmTrace& trace, const OptimumOptions& options = {});

}  // namespace tessera

#endif  // TESSERA_REPLAY_OPTIMUM_H_
