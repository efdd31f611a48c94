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
// GreedySearch finds that candidate without re-scoring every one after each
// move: a pair's best configuration depends only on the two services' needs,
// so each service keeps its kRowLength best partners, and a move re-scores
// only the pairs of the services it served (a service's partners are all
// scored again only once moves have taken every pair it kept). The widened
// families are built from, for each instance size, the unsatisfied services
// ordered by what a first instance of that size gives them, instead of a
// scan of every service per instance. The choices, ties included, are those
// of scoring every candidate afresh (migserving_test.cc checks both agree
// move by move). Scoring every pair once, on the first move, still grows
// with the square of the services.
//
// Internal to the migserving planners.
#ifndef TESSERA_PLANNERS_MIGSERVING_GREEDY_H_
#define TESSERA_PLANNERS_MIGSERVING_GREEDY_H_

#include <optional>
#include <set>
#include <vector>

#include "planners/migserving/config_space.h"
#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera::migserving {

// The fast algorithm's candidates under a coverage that only grows.
// Thread-safety: one search, one thread.
class GreedySearch {
 public:
  // REQUIRES: `space` and `coverage` outlive the search, and `coverage`
  // changes only by the configurations passed to Added.
  GreedySearch(const ConfigSpace& space, const Coverage& coverage);

  // The highest-scoring candidate configuration under the coverage (score 0
  // when every service is satisfied); nullopt if `deadline` passes first
  // (it is read once per service re-scored, so that even 10,000 services
  // stop within milliseconds of it). After nullopt the search is spent.
  std::optional<ScoredConfig> Best(const Deadline& deadline);

  // Call after adding `config` to the coverage.
  void Added(const GpuConfig& config);

 private:
  // A pair of a service and a later unsatisfied one (the partner), and the
  // layout whose configuration for it scores most (ties: the earlier
  // layout). Pairs rank by score, then layout, then partner.
  struct PairBest {
    double score = 0;
    int layout = 0;
    int partner = -1;
  };
  static constexpr size_t kRowLength = 16;
  // Open services by what a first instance of one profile gives them:
  // highest gain first, ties by index.
  struct ByGain {
    bool operator()(const std::pair<double, int>& a, const std::pair<double, int>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };

  // The best configuration of any layout for the pair (a, b), a < b.
  PairBest ScorePair(int a, int b) const;
  void RescoreRow(int a);
  // Adds `pair` to `row` where it ranks, if it ranks before the last pair
  // kept or (`scanning` every partner) the row has room.
  static void Offer(std::vector<PairBest>& row, const PairBest& pair, bool scanning);
  // Brings rows, open services and gains up to date with the moves added.
  bool Refresh(const Deadline& deadline);
  void FileGains(int service);
  void UnfileGains(int service);
  // ConfigSpace::BestWith(layout, first, open services) built from the gains.
  ScoredConfig Widened(int layout, int first) const;

  const ConfigSpace& space_;
  const Coverage& coverage_;
  std::vector<int> open_;  // unsatisfied services, ascending
  // Per service, its best pairs, best first: at most kRowLength, and every
  // partner left out ranks after the last one kept.
  std::vector<std::vector<PairBest>> rows_;
  std::vector<bool> dirty_;   // rows to re-score in full
  std::vector<int> changed_;  // services served by moves not yet refreshed
  std::vector<std::set<std::pair<double, int>, ByGain>> fresh_;  // per profile
  std::vector<double> filed_;  // [service x profile]: the gain filed, 0 = none
};

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
