// Fuzzes the simulator's arrival trace reader (`service,time_s` CSV).
#include "fuzz_input.h"
#include "tessera/simulate/arrivals.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tessera::LoadArrivalTrace(
      tessera::fuzz::AsFile(tessera::fuzz::Text(data, size), "arrivals.csv"));
  return 0;
}
