// Fuzzes the NodePlan JSON parser and its writer's round trip
// (Format(Parse(Format(p))) == Format(p)); what parses is also expanded
// again through the serving command template of its own settings.
#include <cstdlib>

#include "fuzz_input.h"
#include "tessera/emit/node_plan.h"
#include "tessera/gpu_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::Result<tessera::NodePlan> plan =
      tessera::ParseNodePlanJson(tessera::fuzz::Text(data, size), "fuzz.json");
  if (!plan.ok()) return 0;
  const std::string once = tessera::FormatNodePlanJson(*plan);
  tessera::Result<tessera::NodePlan> again = tessera::ParseNodePlanJson(once, "once.json");
  if (!again.ok() || tessera::FormatNodePlanJson(*again) != once) std::abort();
  for (const tessera::NodeGpu& gpu : plan->gpus) {
    for (const tessera::NodeInstance& in : gpu.instances) {
      for (const tessera::NodeProcess& p : in.processes) {
        (void)tessera::ExpandCommand(plan->serving.command, plan->serving, in, p, gpu.index);
      }
    }
  }
  return 0;
}
