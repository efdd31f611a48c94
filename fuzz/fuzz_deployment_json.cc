// Fuzzes the deployment JSON parser and, for what parses, its writer's round
// trip (Format(Parse(Format(d))) == Format(d)).
#include <cstdlib>

#include "fuzz_input.h"
#include "tessera/deployment_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::Result<tessera::Deployment> d =
      tessera::ParseDeploymentJson(tessera::fuzz::Text(data, size), "fuzz.json");
  if (!d.ok()) return 0;
  const std::string once = tessera::FormatDeploymentJson(*d);
  tessera::Result<tessera::Deployment> again = tessera::ParseDeploymentJson(once, "once.json");
  if (!again.ok() || tessera::FormatDeploymentJson(*again) != once) std::abort();
  return 0;
}
