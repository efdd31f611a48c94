// Fuzzes the import of Triton's tools' CSVs: perf_analyzer's -f report and
// Model Analyzer's inference table, each under the mean and a percentile,
// into one importer (so that a second file meets the first one's keys).
#include "fuzz_input.h"
#include "tessera/profile/triton_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [first, second] = tessera::fuzz::TwoParts(tessera::fuzz::Text(data, size));
  tessera::TritonImportOptions options;
  options.gpu = "a100-80gb";
  options.mig_profile = "3g.40gb";
  options.model = "resnet50";
  options.batch = 8;
  for (const tessera::TritonFormat format :
       {tessera::TritonFormat::kPerfAnalyzer, tessera::TritonFormat::kModelAnalyzer}) {
    for (const tessera::LatencyStat latency :
         {tessera::LatencyStat::kMean, tessera::LatencyStat::kP99}) {
      options.format = format;
      options.latency = latency;
      tessera::TritonImporter importer;
      (void)importer.Add(first, "first.csv", options);
      (void)importer.Add(second, "second.csv", options);
    }
  }
  return 0;
}
