// Importing measured profiles from Triton's tools: perf_analyzer's latency
// report (`perf_analyzer -f FILE`) and Model Analyzer's inference table
// (`results/metrics-model-inference.csv`), as documented by the tools
// (docs/profile-import.md cites the pages), into a ProfileTable.
//
// A Tessera segment of P processes keeps P batches of B requests in flight,
// one per process. A measurement row becomes the segment it measured:
//  * perf_analyzer: one file is one run at one client batch (`-b`), on one
//    MIG instance; the row's `Concurrency` (C batches in flight) is the
//    segment's process count. The model, GPU, MIG profile and batch are not
//    in the file: they come from TritonImportOptions.
//  * Model Analyzer: `Model` (unless options.model is set), `Batch`, and the
//    instance count of `Instance Group` (`N:GPU`, older releases `N/GPU`) are
//    the model, batch and processes; a row is taken iff its `Concurrency`
//    equals the instance count (each instance one batch in flight). The
//    other rows are set aside and counted; the GPU and MIG profile come from
//    the options.
// Throughput: the tools' inferences per second (requests x batch / s), the
// whole segment's. Latency: the options' statistic of one request (one
// batch): the mean by default (`Avg latency` in us, which perf_analyzer
// writes with --verbose-csv unless run with --percentile; Model Analyzer's
// `Avg Latency (ms)`, with perf_latency_avg among its inference_output_fields),
// or a percentile column; the p99 column, when present, is also kept as p99_ms.
// Other columns are ignored.
//
// Errors (InvalidArgument): options that name no catalog GPU with MIG, no
// profile of it, no model or batch where needed; and every flaw of a file,
// as "<source>:<line>: field '<column>': <what>": an empty file, a missing
// or repeated column, a `Request Rate` sweep, a row of another width, an
// empty or garbled number, one outside input_limits.h (kProcs, kBatch,
// kThroughputRps, kLatencyMs), an instance group that is not one GPU kind,
// and a key (model, gpu, profile, batch, procs) already imported, naming
// where it was first read. Nothing is dropped silently.
//
// Thread-safety: a TritonImporter is not synchronized; the free functions
// are pure.
#ifndef TESSERA_TRITON_IMPORT_H_
#define TESSERA_TRITON_IMPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

enum class TritonFormat { kPerfAnalyzer, kModelAnalyzer };
// "perf-analyzer" or "model-analyzer"; InvalidArgument naming both otherwise.
Result<TritonFormat> ParseTritonFormat(std::string_view name);

// Which latency of a request becomes the entry's latency_ms.
enum class LatencyStat { kMean, kP50, kP90, kP95, kP99 };
// "mean", "p50", "p90", "p95" or "p99".
Result<LatencyStat> ParseLatencyStat(std::string_view name);

// What one file does not say about its measurements.
struct TritonImportOptions {
  TritonFormat format = TritonFormat::kPerfAnalyzer;
  std::string gpu;          // catalog GPU with MIG, e.g. "a100-80gb"
  std::string mig_profile;  // a MIG profile of `gpu`, e.g. "3g.40gb"
  std::string model;        // perf_analyzer: required; Model Analyzer: replaces `Model`
  int batch = 0;            // perf_analyzer: the run's -b (required); Model Analyzer: unused
  LatencyStat latency = LatencyStat::kMean;

  // OK, or InvalidArgument naming the option as the CLI flag (--gpu,
  // --mig-profile, --model, --batch).
  Status Validate() const;
};

// Accumulates the entries of several files into one table.
class TritonImporter {
 public:
  // Parses one file's `text` (`source` names it in errors) under `options`
  // and adds its entries. On error nothing of this file is kept.
  Status Add(std::string_view text, std::string_view source, const TritonImportOptions& options);

  const ProfileTable& table() const { return table_; }
  // Model Analyzer rows whose concurrency differs from their instance count.
  int set_aside() const { return set_aside_; }

 private:
  ProfileTable table_;
  std::vector<std::string> origin_;  // "<source>:<line>" of each entry of table_
  int set_aside_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_TRITON_IMPORT_H_
