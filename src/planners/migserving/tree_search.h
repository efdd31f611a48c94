// MIG-serving's slow algorithm: a Monte Carlo Tree Search customised as its
// Appendix A.2 describes, to find few GPU configurations covering what a
// partial deployment still needs.
//
// A node is a coverage (completion rates); an edge adds one GPU
// configuration; a leaf has every service satisfied, and the search wants
// the shortest path to one.
//  * Children: `sampled_services` services not yet satisfied, drawn at
//    random; for each layout, the best configuration serving one of them,
//    any two of them, or all of them (ConfigSpace::Best); the `top_k`
//    distinct ones by score become the node's edges.
//  * Estimation: a rollout adds random configurations from a memo of good
//    candidates until a leaf. The memo is keyed by the completion rates
//    rounded to 1/32 (satisfied services apart), so nodes of the same rough
//    type share one candidate list, computed once as a node's children are;
//    a candidate serving no unsatisfied service at the actual node is
//    replaced by fresh ones. The estimate is the path's length in GPUs.
//  * Each move runs `simulations` selections (UCT on the mean estimated
//    length, exploration constant `exploration` in GPUs), expansions,
//    rollouts and backups from the current node, then moves to the child
//    whose subtree holds the shortest path found.
// The result is the shortest complete path seen: the moves made, or a
// rollout that did better.
//
// Internal to the migserving planners. Thread-safety: one TreeSearch per
// thread (the memo is not synchronised).
#ifndef TESSERA_PLANNERS_MIGSERVING_TREE_SEARCH_H_
#define TESSERA_PLANNERS_MIGSERVING_TREE_SEARCH_H_

#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#include "planners/migserving/config_space.h"
#include "tessera/util/clock.h"

namespace tessera::migserving {

struct TreeSearchOptions {
  int top_k = 10;            // children per node (the paper's K)
  int sampled_services = 5;  // services drawn to make a node's children
  int simulations = 24;      // per move
  double exploration = 1.0;  // UCT constant, in GPUs of estimated length

  // InvalidArgument unless top_k, sampled_services and simulations >= 1 and
  // exploration >= 0.
  Status Validate() const;
};

class TreeSearch {
 public:
  // REQUIRES: options.Validate().ok(); `space` outlives the search.
  TreeSearch(const ConfigSpace& space, const TreeSearchOptions& options);
  ~TreeSearch();

  // Configurations that, added to `coverage`, satisfy every service; nullopt
  // if `deadline` passes first. Deterministic for the state of `rng` and of
  // the memo.
  std::optional<Deployment> Fill(const Coverage& coverage, std::mt19937_64& rng,
                                 const Deadline& deadline);

 private:
  struct Node;

  // The node's top-K candidate configurations.
  Deployment Candidates(const Coverage& coverage, std::mt19937_64& rng) const;
  // Random memoised configurations from `coverage` to a leaf, appended to
  // `out`; false if no configuration helps (a dead end).
  bool Rollout(Coverage coverage, std::mt19937_64& rng, Deployment& out);
  // One selection, expansion, rollout and backup from nodes_[0]: the path to
  // a leaf it found, from the move's root; nullopt at a dead end.
  std::optional<Deployment> Simulate(std::mt19937_64& rng);
  // The child of the move's root to move to: the one whose subtree holds the
  // shortest path (ties: the most visited, then the first); -1 if none.
  int NextMove() const;
  std::string MemoKey(const Coverage& coverage) const;

  const ConfigSpace& space_;
  const TreeSearchOptions options_;
  std::vector<Node> nodes_;  // the current move's tree; nodes_[0] is its root
  std::unordered_map<std::string, Deployment> memo_;
};

}  // namespace tessera::migserving

#endif  // TESSERA_PLANNERS_MIGSERVING_TREE_SEARCH_H_
