// Fuzzes the router agent's reader of the control plane's router work
// (GET /v1/routers/{name}/work), which it reads from the network.
#include "fuzz_input.h"
#include "serving/router_work.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tessera::serving::ParseRouterWork(std::string(tessera::fuzz::Text(data, size)), "work",
                                          "edge");
  return 0;
}
