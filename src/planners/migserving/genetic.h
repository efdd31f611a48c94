// MIG-serving's Genetic Algorithm (section 5.2): the slow phase that
// improves the fast algorithm's deployment.
//
// A chromosome is a deployment, its genes the GPU configurations. Each round
// every one of the best `parents` deployments so far has
// `children_per_parent` children; a child is its parent, mutated half the
// time, then crossed over:
//  * mutation swaps the services of one to three random pairs of equal-sized
//    instances serving different services (capacities are unchanged);
//  * crossover erases a random number of random GPUs (one to half of
//    them, at most `max_erased`) and refills what they served with the tree
//    search (tree_search.h).
// Children are trimmed (config_space.h), and the best `parents` of parents
// and children (by Cost: GPUs, then busy compute slices) go on, so the best
// deployment never gets worse. The search stops after `stall_rounds` rounds
// without a better best (0 = never), or at the deadline; one RNG stream
// seeded once makes it deterministic for a seed whenever it stops by rounds.
//
// Internal to the migserving planners.
#ifndef TESSERA_PLANNERS_MIGSERVING_GENETIC_H_
#define TESSERA_PLANNERS_MIGSERVING_GENETIC_H_

#include <cstdint>
#include <functional>

#include "planners/migserving/config_space.h"
#include "planners/migserving/tree_search.h"
#include "tessera/util/clock.h"

namespace tessera::migserving {

struct GeneticOptions {
  int parents = 4;
  int children_per_parent = 4;
  int max_erased = 16;    // GPUs one crossover erases at most
  int stall_rounds = 10;  // the paper's ten rounds without improvement
  TreeSearchOptions search;

  // InvalidArgument unless parents, children_per_parent and max_erased >= 1,
  // stall_rounds >= 0 and the search options are valid.
  Status Validate() const;
};

// Where the search stands after a round.
struct GeneticProgress {
  int round = 0;
  Cost start;
  Cost best;
  int stalled = 0;  // rounds since the best last improved
};

// The best deployment the rounds find from `start` (itself when none is
// better). `on_round` (if set) hears after every round.
// REQUIRES: options.Validate().ok(); `start` covers every service.
Deployment Evolve(const ConfigSpace& space, Deployment start, const GeneticOptions& options,
                  std::uint64_t seed, const Deadline& deadline,
                  const std::function<void(const GeneticProgress&)>& on_round = {});

}  // namespace tessera::migserving

#endif  // TESSERA_PLANNERS_MIGSERVING_GENETIC_H_
