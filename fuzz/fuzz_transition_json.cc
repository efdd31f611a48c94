// Fuzzes the transition JSON parser, its writer's round trip
// (Format(Parse(Format(t))) == Format(t)), its text listing, and the
// independent checker replaying what parses on a small fixed pair of plans.
#include <cstdlib>

#include "fuzz_input.h"
#include "tessera/deployment.h"
#include "tessera/transition/transition_check.h"
#include "tessera/transition/transition_format.h"

namespace {

// One A100 with 4g.40gb@0 and 3g.40gb@4, the second service moved in B.
tessera::Deployment Plan(int start_of_b) {
  tessera::Deployment d;
  d.gpu = "a100-80gb";
  d.gpus = {{0, 0, {{"4g.40gb", 0, "a", "m", 8, 1, 100, 10}}, "", {}},
            {1, 0, {{"3g.40gb", start_of_b, "b", "m", 8, 2, 50, 10}}, "", {}}};
  d.services = {{"a", "m", 80, 100, 100, tessera::ServiceStatus::kOk, ""},
                {"b", "m", 40, 100, 50, tessera::ServiceStatus::kOk, ""}};
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::Result<tessera::Transition> t =
      tessera::ParseTransitionJson(tessera::fuzz::Text(data, size), "fuzz.json");
  if (!t.ok()) return 0;
  const std::string once = tessera::FormatTransitionJson(*t);
  tessera::Result<tessera::Transition> again = tessera::ParseTransitionJson(once, "once.json");
  if (!again.ok() || tessera::FormatTransitionJson(*again) != once) std::abort();
  (void)tessera::FormatTransitionText(*t);
  static const tessera::Deployment from = Plan(4);
  static const tessera::Deployment to = Plan(0);
  (void)tessera::CheckTransition(from, to, *t);
  return 0;
}
