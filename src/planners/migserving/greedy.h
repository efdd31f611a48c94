// MIG-serving's fast algorithm (Appendix A.1, Figure 15): repeatedly add the
// GPU configuration with the highest score until every service is covered.
//
// The candidate configurations mix at most two of the services not yet
// satisfied. A service becomes "almost satisfied" when what it still needs
// is less than a GPU of its own would give (a whole GPU of it would
// overshoot); from then on configurations mixing it with any number of
// unsatisfied services are candidates too, since two services can no longer
// fill a GPU. Ties go to the first candidate found: layouts in ConfigSpace
// order, then service pairs in index order, then the widened families.
//
// Internal to the migserving planners.
#ifndef TESSERA_PLANNERS_MIGSERVING_GREEDY_H_
#define TESSERA_PLANNERS_MIGSERVING_GREEDY_H_

#include <optional>

#include "planners/migserving/config_space.h"
#include "tessera/clock.h"
#include "tessera/status.h"

namespace tessera::migserving {

// The highest-scoring candidate configuration under `coverage` (score 0 when
// every service is satisfied); nullopt if `deadline` passes first (it is
// read once per layout and service of the pair search, so that even 10,000
// services stop within milliseconds of it).
std::optional<ScoredConfig> BestGreedyConfig(const ConfigSpace& space, const Coverage& coverage,
                                             const Deadline& deadline);

// How GreedyFill ended.
struct GreedyOutcome {
  // Services still unsatisfied when the deadline passed; each was then given
  // GPUs of its own (0 when the fast algorithm finished in time).
  int alone = 0;
};

// Appends the fast algorithm's configurations to `deployment` until
// `coverage` (that of `deployment`'s configurations plus any given needs
// already met) is all satisfied, adding each to `coverage`. If `deadline`
// passes first, every service still unsatisfied gets the best
// configurations serving it alone, in index order, until it is satisfied:
// time linear in their number, and the plan stays valid. Internal if no
// configuration helps an unsatisfied service (cannot happen for services
// ConfigSpace marks servable).
Result<GreedyOutcome> GreedyFill(const ConfigSpace& space, Coverage& coverage,
                                 Deployment& deployment, const Deadline& deadline);

}  // namespace tessera::migserving

#endif  // TESSERA_PLANNERS_MIGSERVING_GREEDY_H_
