// Fuzzes the emulator's reader of Triton model configurations (protobuf text).
#include "fuzz_input.h"
#include "tessera/serving/triton_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tessera::ParseTritonConfig(tessera::fuzz::Text(data, size), "config.pbtxt");
  return 0;
}
