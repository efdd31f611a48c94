// A planner's time limit: the deadline PlanContext::time_limit_s sets, and
// the error a planner returns when it passes before the planner has a plan
// covering every service.
//
// Every planner honours the limit: one that has such a plan when it passes
// returns it (ParvaGPU's before its allocation optimization is done,
// MIG-serving's with the services it has not reached on GPUs of their own),
// the others return TimeLimitPassed.
//
// Thread-safety: pure functions of their arguments; a Deadline reads its
// clock.
#ifndef TESSERA_TIME_LIMIT_H_
#define TESSERA_TIME_LIMIT_H_

#include <string_view>

#include "tessera/planner.h"
#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera {

// The time limit of a plan: context.time_limit_s, or `default_s` when that
// is 0 (0 = none), on context.clock (SystemClock() when null).
Deadline PlanDeadline(const PlanContext& context, double default_s = 0);

// InvalidArgument "the time limit (T s) passed <while_doing>, before a plan
// covered every service; raise --time-limit".
Status TimeLimitPassed(const PlanContext& context, std::string_view while_doing);

}  // namespace tessera

#endif  // TESSERA_TIME_LIMIT_H_
