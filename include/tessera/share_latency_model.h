// ShareLatencyModel: batch latency of one model on one GPU model as a function
// of the batch size and the SM share ("GPU%") of its MPS process, built from
// MIG profiles, where an instance with c of the GPU's C compute slices stands
// for an MPS process limited to c / C of the SMs. The GSLICE runtime
// (gslice_runtime.h) reads its services' performance from it.
//
// Thread-safety: immutable after Build and safe to read from several threads.
#ifndef TESSERA_SHARE_LATENCY_MODEL_H_
#define TESSERA_SHARE_LATENCY_MODEL_H_

#include <string_view>
#include <utility>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

// An approximation: MIG instances also partition memory bandwidth and L2,
// which an MPS limit does not, and MPS neighbours interfere, which MIG
// instances do not.
//
// From the profile entries of the model on the GPU with procs = 1: a profile
// with c compute slices on a GPU with C gives share c / C (when several
// profiles have the same c, the primary one, e.g. 1g.10gb over 1g.20gb).
//  * Between profiled batches of a share: linear in the batch; below the
//    smallest, the smallest's latency; above the largest (a batch that did not
//    fit in a small instance's memory, which a whole GPU has), proportional to
//    the batch, i.e. the largest batch's throughput.
//  * Between profiled shares: linear in the share. Below the smallest share s0:
//    the latency at s0 times s0 / share (fewer SMs, proportionally slower).
//    Above the largest share: its latency (no faster). Shares above 1 are 1.
class ShareLatencyModel {
 public:
  // NotFound naming model and GPU when `profiles` has no procs = 1 entry of
  // `model` on a profile of `gpu`.
  static Result<ShareLatencyModel> Build(const ProfileTable& profiles, const GpuModel& gpu,
                                         std::string_view model);

  // Execution time of a batch, ms. REQUIRES: batch >= 1, share > 0.
  double LatencyMs(int batch, double share) const;
  // Requests per second of a process that is always busy with such batches.
  double ThroughputRps(int batch, double share) const {
    return batch * 1000.0 / LatencyMs(batch, share);
  }
  // The profiled shares, ascending.
  std::vector<double> Shares() const;

 private:
  struct Column {
    double share = 0;
    std::vector<std::pair<int, double>> points;  // (batch, latency ms), by batch
  };
  ShareLatencyModel() = default;
  static double AtBatch(const Column& column, int batch);

  std::vector<Column> columns_;  // by share, ascending
};

}  // namespace tessera

#endif  // TESSERA_SHARE_LATENCY_MODEL_H_
