// gpu-lets' profiling tables (Choi et al., "Serving Heterogeneous Machine
// Learning Models on Multi-GPU Servers with Spatio-Temporal Sharing", USENIX
// ATC'22), in the form iGniter's artifact ships them for its gpu-lets+
// baseline: i-Gniter/Profile/tools/gpulet.config (V100, see
// shared/data/igniter/README.md), and the linear interference model gpu-lets
// fits on them.
//
// File format: JSON Lines, each line one object; lines with the same
// top-level key are merged. A model key ("alexnet", ...; names go through
// CanonicalModelName) maps one or more of the tables
//   "latency"    ms per batch
//   "throughput" requests (images) per second
//   "l2cache"    L2 utilisation, % of peak
//   "dram"       DRAM bandwidth utilisation, % of peak
// each a map batch ("1".."32") -> resource % ("20", ...) -> value, where
// resource is the MPS active-thread percentage. The key "interference" maps
//   "latency"  a list of rows [m1, m2, b1, b2, r1, lat1_ms, lat2_ms]: models
//              m1 and m2 co-located at batches b1, b2 and resources r1 and
//              r2 = 100 - r1, with their measured latencies; the rows of
//              several lines are concatenated in file order;
//   "std"      the rows' standard deviations: documented as ignored (not
//              read, not validated).
// Every other key inside a model or "interference" object is an error, and
// so is any table missing from a model once all lines are merged.
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_GPULET_TABLES_H_
#define TESSERA_GPULET_TABLES_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// One table: value by (batch, resource %).
using GpuletTable = std::map<std::pair<int, int>, double>;

// The four tables of one model.
struct GpuletModelTables {
  std::string model;           // canonical model name
  int line = 0;                // first line of the file naming the model
  GpuletTable latency_ms;      // in limits::kLatencyMs
  GpuletTable throughput_rps;  // in limits::kThroughputRps
  GpuletTable l2_pct;          // in [0, 100]
  GpuletTable dram_pct;        // in [0, 100]
};

// One measured co-location of two processes on a whole GPU.
struct GpuletInterferenceRow {
  std::string model1;  // canonical
  std::string model2;  // canonical
  int batch1 = 1;
  int batch2 = 1;
  int resource1_pct = 50;  // in [1, 99]; the second process has 100 - this
  double latency1_ms = 0;  // measured, > 0
  double latency2_ms = 0;  // measured, > 0
  int line = 0;            // line of the file holding the row

  int resource2_pct() const { return 100 - resource1_pct; }
};

struct GpuletTables {
  // Models in order of first appearance in the file.
  std::vector<GpuletModelTables> models;
  // The "interference.latency" rows, in file order.
  std::vector<GpuletInterferenceRow> interference;

  // The tables of `model` (a canonical name, compared exactly), or nullptr.
  const GpuletModelTables* Find(std::string_view model) const;

  // Table lookups: the value at exactly (batch, resource_pct), or nullopt
  // when the model or that entry is absent. No interpolation, no fallback.
  std::optional<double> LatencyMs(std::string_view model, int batch, int resource_pct) const;
  std::optional<double> ThroughputRps(std::string_view model, int batch, int resource_pct) const;
  std::optional<double> L2Pct(std::string_view model, int batch, int resource_pct) const;
  std::optional<double> DramPct(std::string_view model, int batch, int resource_pct) const;
};

// The value of `table` at (batch, resource_pct), or nullopt.
std::optional<double> GpuletLookup(const GpuletTable& table, int batch, int resource_pct);

// Parses gpu-lets' tables (the format above); `source` names the file in
// messages. Errors are InvalidArgument:
//   "<source>:<line>: invalid JSON" (nlohmann::json also rejects a number
//   out of a double's range, e.g. 1e400, this way) / "...: expected a JSON
//   object"
//   "<source>:<line>: field '<path>': <what>" where <path> is, e.g.,
//   "alexnet.latency.4.20" or "interference.latency[12][5]": a value that is
//   not an object / array / number where one is expected, a batch key that
//   is not a whole number in [1, 4096], a resource key that is not a whole
//   number in [1, 100], a latency outside limits::kLatencyMs or a throughput
//   outside limits::kThroughputRps (input_limits.h), a utilisation outside
//   [0, 100] or not finite, an entry given twice, an unknown key, an
//   interference row that is not [string, string, batch, batch, r1 in
//   [1, 99], latency, latency] with latencies in limits::kLatencyMs;
//   "<source>:<line>: field '<model>.<table>': missing or empty" (the line
//   where the model first appears) when a model lacks one of the four tables;
//   "<source>: no model tables" when the text names no model.
// Blank lines are skipped; LF and CRLF line ends are accepted.
Result<GpuletTables> ParseGpuletTables(std::string_view text, std::string_view source);

// Reads and parses a gpu-lets tables file (NotFound / IoError naming the
// path when unreadable).
Result<GpuletTables> LoadGpuletTables(const std::string& path);

// ---- The interference model ---------------------------------------------------

// gpu-lets' interference model, as we read it: a process i co-located with a
// process j on one GPU runs at
//   latency_i = solo_latency_i(b_i, p_i) * Factor
//   Factor    = max(1, 1 + c0 + c1 (l2_i + l2_j) + c2 (dram_i + dram_j))
// where l2 and dram are each process's table utilisation at its own (batch,
// resource) when running alone. gpu-lets regresses the slowdown on the
// co-runners' L2 and DRAM utilisation; summing both processes' utilisation
// (so both see the same factor) and clamping at 1 (co-location never speeds
// a process up; no effect on the shipped data, whose fitted factor is >= 1.08
// everywhere) are our reading. The tables give utilisation at 20..80% only:
// a process at 100% uses its 80% values.
struct GpuletInterference {
  std::array<double, 3> c{};  // c0, c1, c2
  // False when there was nothing to fit (then c = 0, i.e. no slowdown) or
  // the system was singular (then c = {mean slowdown, 0, 0}).
  bool fitted = false;
  int samples = 0;       // processes fitted: two per usable row
  int rows_skipped = 0;  // rows with a process lacking a table entry
  // Mean over the samples of |predicted - measured| / measured latency.
  double mean_relative_error = 0;

  // The slowdown factor (>= 1) for the two processes' summed utilisation.
  double Factor(double l2_sum_pct, double dram_sum_pct) const;

  // The predicted latency (ms) of process i = (model_i, batch_i,
  // resource_i) co-located with j, or nullopt when a table lacks i's solo
  // latency or either process's utilisation (models are canonical names).
  std::optional<double> Predict(const GpuletTables& tables, std::string_view model_i, int batch_i,
                                int resource_i, std::string_view model_j, int batch_j,
                                int resource_j) const;
};

// A process's L2 / DRAM utilisation at (batch, resource_pct), using the 80%
// entry for a resource of 100 that the table lacks; nullopt when absent.
std::optional<double> GpuletL2Pct(const GpuletTables& tables, std::string_view model, int batch,
                                  int resource_pct);
std::optional<double> GpuletDramPct(const GpuletTables& tables, std::string_view model, int batch,
                                    int resource_pct);

// Fits c0..c2 by linear least squares (Householder QR) over both processes of every
// interference row: the target is measured / solo table latency - 1, the
// regressors 1, l2_i + l2_j and dram_i + dram_j at each process's own
// (batch, resource). Rows where either process lacks a solo latency or a
// utilisation entry are skipped (counted in rows_skipped).
GpuletInterference FitGpuletInterference(const GpuletTables& tables);

}  // namespace tessera

#endif  // TESSERA_GPULET_TABLES_H_
