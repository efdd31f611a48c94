// ShareLatencyModel: batch latency of one model on one GPU model as a function
// of the batch size and the SM share ("GPU%") of its MPS process, built from
// MIG profiles, where an instance with c of the GPU's C compute slices stands
// for an MPS process limited to c / C of the SMs. The GSLICE runtime
// (gslice_runtime.h) reads its services' performance from it.
//
// Thread-safety: immutable after Build and safe to read from several threads.
#ifndef TESSERA_SHARE_LATENCY_MODEL_H_
#define TESSERA_SHARE_LATENCY_MODEL_H_

#include <span>
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
  // GSLICE's knee point at `batch`: KneePoint of the throughput at the shares
  // 1%, 2%, ..., 100%. REQUIRES: batch >= 1.
  double KneeShare(int batch) const;

 private:
  struct Column {
    double share = 0;
    std::vector<std::pair<int, double>> points;  // (batch, latency ms), by batch
  };
  ShareLatencyModel() = default;
  static double AtBatch(const Column& column, int batch);

  std::vector<Column> columns_;  // by share, ascending
};

// GSLICE's "kneepoint" (Dhakal et al., SoCC'20, section 2.1.3): the GPU%
// after which more GPU% brings diminishing returns. The paper reads it off
// its throughput-vs-GPU% figures (batch 1: Jasper 50%, ResNet-50 ~60%,
// VGG-19 and GNMT 70%); here it is Kneedle's point (Satopaa et al., ICDCS
// workshops 2011) of the curve normalised by its last point: the share s
// maximising T(s) / T(s_last) - s / s_last, i.e. where one more point of
// GPU% starts to add less throughput than the whole GPU's average per point.
// `curve` is (share, throughput) by ascending share with share > 0 and a
// last throughput > 0; the earliest share wins a tie. REQUIRES: non-empty.
double KneePoint(std::span<const std::pair<double, double>> curve);

}  // namespace tessera

#endif  // TESSERA_SHARE_LATENCY_MODEL_H_
