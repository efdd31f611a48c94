#include "planners/migserving/greedy.h"

#include <algorithm>

namespace tessera::migserving {
namespace {

bool AlmostSatisfied(const ConfigSpace& space, const Coverage& coverage, int service) {
  const double need = coverage.Need(service);
  return need > 0 && need < space.WholeGpuUtility(service);
}

// Gives every unsatisfied service, in index order, the best configurations
// serving it alone until it is satisfied; returns how many services it served.
Result<int> FillAlone(const ConfigSpace& space, Coverage& coverage, Deployment& deployment) {
  const std::vector<int> open = coverage.Unsatisfied();
  for (const int service : open) {
    const int alone[] = {service};
    while (!coverage.Satisfied(service)) {
      // Scored without building each configuration: this runs after the
      // deadline, on every service the fast algorithm did not reach.
      const double needs[] = {coverage.Need(service)};
      double best_score = 0;
      int best_layout = -1;
      for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
        const double score = space.BestScore(layout, alone, needs);
        if (score > best_score) {
          best_score = score;
          best_layout = layout;
        }
      }
      if (best_layout < 0) {
        return Status::Internal("migserving: no GPU configuration helps an unsatisfied service");
      }
      ScoredConfig best = space.Best(best_layout, alone, coverage);
      coverage.Add(best.config);
      deployment.push_back(std::move(best.config));
    }
  }
  return static_cast<int>(open.size());
}

}  // namespace

GreedySearch::GreedySearch(const ConfigSpace& space, const Coverage& coverage)
    : space_(space),
      coverage_(coverage),
      open_(coverage.Unsatisfied()),
      rows_(space.num_services()),
      dirty_(space.num_services(), true),
      fresh_(space.num_profiles()),
      filed_(static_cast<size_t>(space.num_services()) * space.num_profiles(), 0.0) {
  for (int s : open_) FileGains(s);
}

void GreedySearch::FileGains(int service) {
  const double need = coverage_.Need(service);
  for (int p = 0; p < space_.num_profiles(); ++p) {
    const double gain = space_.Gain(need, 0.0, space_.Utility(service, p));
    if (!(gain > 0)) continue;
    fresh_[p].insert({gain, service});
    filed_[static_cast<size_t>(service) * space_.num_profiles() + p] = gain;
  }
}

void GreedySearch::UnfileGains(int service) {
  for (int p = 0; p < space_.num_profiles(); ++p) {
    double& gain = filed_[static_cast<size_t>(service) * space_.num_profiles() + p];
    if (gain > 0) fresh_[p].erase({gain, service});
    gain = 0;
  }
}

namespace {

// Whether pair `a` ranks before pair `b` of the same service: more score,
// then the earlier layout, then the earlier partner.
template <typename Pair>
bool Before(const Pair& a, const Pair& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.layout != b.layout) return a.layout < b.layout;
  return a.partner < b.partner;
}

}  // namespace

GreedySearch::PairBest GreedySearch::ScorePair(int a, int b) const {
  PairBest best{0, 0, b};
  const int pair[] = {a, b};
  const double needs[] = {coverage_.Need(a), coverage_.Need(b)};
  for (int layout = 0; layout < static_cast<int>(space_.layouts().size()); ++layout) {
    const double score = space_.BestScore(layout, pair, needs);
    if (layout == 0 || score > best.score) best = {score, layout, b};
  }
  return best;
}

void GreedySearch::Offer(std::vector<PairBest>& row, const PairBest& pair, bool scanning) {
  // A row being scanned takes any pair while it has room; afterwards a pair
  // ranking after the last one kept stays out, for a partner left out may
  // rank before it.
  if ((!scanning || row.size() == kRowLength) && !Before(pair, row.back())) return;
  row.insert(std::upper_bound(row.begin(), row.end(), pair, Before<PairBest>), pair);
  if (row.size() > kRowLength) row.pop_back();
}

void GreedySearch::RescoreRow(int a) {
  std::vector<PairBest>& row = rows_[a];
  row.clear();
  for (auto b = std::upper_bound(open_.begin(), open_.end(), a); b != open_.end(); ++b) {
    Offer(row, ScorePair(a, *b), true);
  }
  dirty_[a] = false;
}

void GreedySearch::Added(const GpuConfig& config) {
  for (int s : config.services) {
    if (s != kIdle && std::find(changed_.begin(), changed_.end(), s) == changed_.end()) {
      changed_.push_back(s);
    }
  }
}

bool GreedySearch::Refresh(const Deadline& deadline) {
  if (!changed_.empty()) {
    std::vector<int> still;  // served, and still unsatisfied
    for (int s : changed_) {
      UnfileGains(s);
      if (coverage_.Satisfied(s)) {
        open_.erase(std::lower_bound(open_.begin(), open_.end(), s));
      } else {
        FileGains(s);
        still.push_back(s);
        dirty_[s] = true;
      }
    }
    for (int a : open_) {
      if (dirty_[a]) continue;
      // Pairs with a served partner go; those still unsatisfied are scored
      // again and come back where they now rank, if they rank before the
      // last pair kept; with no pair kept, every partner is scored again.
      std::vector<PairBest>& row = rows_[a];
      const size_t kept = row.size();
      std::erase_if(row, [&](const PairBest& p) {
        return std::find(changed_.begin(), changed_.end(), p.partner) != changed_.end();
      });
      if (row.empty()) {
        dirty_[a] = kept > 0;
        continue;
      }
      for (int x : still) {
        if (x > a) Offer(row, ScorePair(a, x), false);
      }
    }
    changed_.clear();
  }
  for (int a : open_) {
    if (!dirty_[a]) continue;
    if (deadline.Passed()) return false;
    RescoreRow(a);
  }
  return true;
}

ScoredConfig GreedySearch::Widened(int layout, int first) const {
  const Layout& placements = space_.layouts()[layout];
  ScoredConfig out{{layout, std::vector<int>(placements.size(), kIdle)}, 0};
  struct Taken {
    int service;
    double need;
    double added;
  };
  std::vector<Taken> taken;
  taken.reserve(placements.size());
  const double need_first = coverage_.Need(first);
  int skip = -1;
  double skip_gain = 0;
  for (int i : space_.FillOrder(layout)) {
    const double g = space_.Gain(need_first, 0.0, space_.Utility(first, placements[i].profile));
    if (g > 0 && (skip < 0 || g > skip_gain)) {
      skip = i;
      skip_gain = g;
    }
  }
  if (skip < 0) return {out.config, 0};
  out.score += skip_gain;
  taken.push_back({first, need_first, 0.0 + space_.Utility(first, placements[skip].profile)});
  out.config.services[skip] = first;
  for (int i : space_.FillOrder(layout)) {
    if (i == skip) continue;
    const int profile = placements[i].profile;
    double best = 0;
    int chosen = -1;
    Taken* chosen_taken = nullptr;
    for (const auto& [gain, service] : fresh_[profile]) {
      const bool is_taken = std::any_of(taken.begin(), taken.end(),
                                        [&](const Taken& t) { return t.service == service; });
      if (is_taken) continue;
      best = gain;
      chosen = service;
      break;
    }
    for (Taken& t : taken) {
      const double g = space_.Gain(t.need, t.added, space_.Utility(t.service, profile));
      if (g > best || (g == best && g > 0 && t.service < chosen)) {
        best = g;
        chosen = t.service;
        chosen_taken = &t;
      }
    }
    if (chosen < 0) continue;
    out.score += best;
    const double u = space_.Utility(chosen, profile);
    if (chosen_taken) {
      chosen_taken->added += u;
    } else {
      taken.push_back({chosen, coverage_.Need(chosen), 0.0 + u});
    }
    out.config.services[i] = chosen;
  }
  return out;
}

std::optional<ScoredConfig> GreedySearch::Best(const Deadline& deadline) {
  if (!Refresh(deadline)) return std::nullopt;
  ScoredConfig best;
  const int layouts = static_cast<int>(space_.layouts().size());
  if (open_.size() == 1) {
    const int alone[] = {open_.front()};
    for (int layout = 0; layout < layouts; ++layout) {
      ScoredConfig config = space_.Best(layout, alone, coverage_);
      if (config.score > best.score) best = std::move(config);
    }
  } else {
    int first = -1;  // the service whose best pair is the best of all
    for (int a : open_) {
      if (rows_[a].empty() || !(rows_[a].front().score > 0)) continue;
      const PairBest& pair = rows_[a].front();
      if (first < 0 || pair.score > rows_[first].front().score ||
          (pair.score == rows_[first].front().score && pair.layout < rows_[first].front().layout)) {
        first = a;
      }
    }
    if (first >= 0) {
      const int pair[] = {first, rows_[first].front().partner};
      best = space_.Best(rows_[first].front().layout, pair, coverage_);
    }
  }
  for (int service : open_) {
    if (!AlmostSatisfied(space_, coverage_, service)) continue;
    if (deadline.Passed()) return std::nullopt;
    for (int layout = 0; layout < layouts; ++layout) {
      ScoredConfig widened = Widened(layout, service);
      if (widened.score > best.score) best = std::move(widened);
    }
  }
  return best;
}

Result<GreedyOutcome> GreedyFill(const ConfigSpace& space, Coverage& coverage,
                                 Deployment& deployment, const Deadline& deadline) {
  GreedyOutcome outcome;
  GreedySearch search(space, coverage);
  while (!coverage.AllSatisfied()) {
    std::optional<ScoredConfig> best = search.Best(deadline);
    if (!best) {
      TESSERA_ASSIGN_OR_RETURN(outcome.alone, FillAlone(space, coverage, deployment));
      return outcome;
    }
    if (best->score <= 0) {
      return Status::Internal("migserving: no GPU configuration helps the unsatisfied services");
    }
    coverage.Add(best->config);
    search.Added(best->config);
    deployment.push_back(std::move(best->config));
  }
  return outcome;
}

}  // namespace tessera::migserving
