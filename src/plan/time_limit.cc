#include "plan/time_limit.h"

#include <fmt/format.h>

namespace tessera {

Deadline PlanDeadline(const PlanContext& context, double default_s) {
  return Deadline(context.clock ? *context.clock : SystemClock(),
                  context.time_limit_s > 0 ? context.time_limit_s : default_s);
}

Status TimeLimitPassed(const PlanContext& context, std::string_view while_doing) {
  return Status::InvalidArgument(
      fmt::format("the time limit ({:g} s) passed {}, before a plan covered every service; raise "
                  "--time-limit",
                  context.time_limit_s, while_doing));
}

}  // namespace tessera
