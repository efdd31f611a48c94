// Fuzzes the scenario YAML parser and, for what parses, its writer's round trip.
#include "fuzz_input.h"
#include "tessera/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::Result<tessera::Scenario> s =
      tessera::ParseScenarioYaml(tessera::fuzz::Text(data, size), "fuzz.yaml");
  if (s.ok()) {
    const std::string again = tessera::FormatScenarioYaml(*s);
    (void)tessera::ParseScenarioYaml(again, "again.yaml");
  }
  return 0;
}
