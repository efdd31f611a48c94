// Fuzzes both profile CSV parsers: Tessera's format and one ParvaGPU
// prof_data file.
#include "fuzz_input.h"
#include "tessera/profile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tessera::fuzz::Text(data, size);
  (void)tessera::ParseTesseraProfileCsv(text, "fuzz.csv");
  (void)tessera::ParseParvaProfileCsv(text, "resnet50.csv", "resnet50", "a100-80gb");
  return 0;
}
