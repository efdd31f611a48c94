// Fuzzes the MPS planners' inputs: iGniter coefficients JSON, gpu-lets'
// tables (JSON Lines) and `tessera igniter fit` samples CSV.
#include "fuzz_input.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/igniter_fit.h"
#include "tessera/profile/igniter_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tessera::fuzz::Text(data, size);
  (void)tessera::ParseMpsCoefficientsJson(text, "fuzz.json");
  (void)tessera::ParseGpuletTables(text, "fuzz.jsonl");
  (void)tessera::ParseFitSamplesCsv(text, "fuzz.csv");
  return 0;
}
