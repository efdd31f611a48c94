// Test helper: writes a profile table back out in the formats of Triton's
// tools, as they document them (docs/profile-import.md), so that an import can
// be checked against the table it came from.
//  * perf_analyzer's -f CSV with --verbose-csv: one file per (model, MIG
//    profile, batch), one row per process count (its Concurrency),
//    Inferences/Second at 6 significant digits, latencies in whole
//    microseconds; the mean is the entry's latency, the percentiles 1.0, 1.1,
//    1.2 and 1.3 times it, and the seven average components add up to it.
//  * Model Analyzer's metrics-model-inference.csv with perf_latency_avg: one
//    file per MIG profile, every model in it; per entry the row at
//    Concurrency = instance count, and a second row at twice the concurrency
//    (with 1.5x the latency) that the import must set aside.
#ifndef TESSERA_TESTS_TRITON_CSV_WRITER_H_
#define TESSERA_TESTS_TRITON_CSV_WRITER_H_

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/profile_table.h"

namespace tessera::testing {

// Whole microseconds of `ms`, as perf_analyzer prints latencies.
inline long long Micros(double ms) { return std::llround(ms * 1000); }

// One perf_analyzer file's text per (model, profile, batch) of `table`.
inline std::map<std::tuple<std::string, std::string, int>, std::string> PerfAnalyzerCsvs(
    const ProfileTable& table) {
  std::map<std::tuple<std::string, std::string, int>, std::string> files;
  for (const ProfileEntry& e : table.entries()) {
    std::string& text = files[{e.key.model, e.key.profile, e.key.batch}];
    if (text.empty()) {
      text =
          "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
          "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
          "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,"
          "response wait\n";
    }
    const long long mean = Micros(e.latency_ms);
    // Client send 1%, network 2%, queue 0, compute input 1%, output 1%,
    // receive 0, infer the rest: they add up to the mean.
    const long long send = mean / 100, network = mean / 50, input = mean / 100, output = mean / 100;
    const long long infer = mean - send - network - input - output;
    text += fmt::format("{},{:.6g},{},{},0,{},{},{},0,{},{},{},{},{},{},{}\n", e.key.procs,
                        e.throughput_rps, send, network, input, infer, output, mean,
                        std::llround(mean * 1.1), std::llround(mean * 1.2),
                        std::llround(mean * 1.3), mean, send, mean - send);
  }
  return files;
}

// One Model Analyzer inference table's text per MIG profile of `table`.
inline std::map<std::string, std::string> ModelAnalyzerCsvs(const ProfileTable& table) {
  std::map<std::string, std::string> files;
  for (const ProfileEntry& e : table.entries()) {
    std::string& text = files[e.key.profile];
    if (text.empty()) {
      text =
          "Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
          "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms),Avg Latency (ms)\n";
    }
    const int n = e.key.procs;
    const std::string config = fmt::format("{}_config_b{}_i{}", e.key.model, e.key.batch, n);
    text +=
        fmt::format("{},{},{},{},{}:GPU,{},Yes,{:.6g},{:.6g},{:.6g}\n", e.key.model, e.key.batch, n,
                    config, n, e.key.batch, e.throughput_rps, e.latency_ms * 1.3, e.latency_ms);
    text += fmt::format("{},{},{},{},{}:GPU,{},No,{:.6g},{:.6g},{:.6g}\n", e.key.model, e.key.batch,
                        2 * n, config, n, e.key.batch, e.throughput_rps, e.latency_ms * 2,
                        e.latency_ms * 1.5);
  }
  return files;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TRITON_CSV_WRITER_H_
