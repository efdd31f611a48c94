#include "planners/migserving/tree_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/random_draws.h"

namespace tessera::migserving {
namespace {

constexpr int kNoPath = std::numeric_limits<int>::max();
// Memo entries kept before the memo starts afresh, bounding its memory.
constexpr size_t kMaxMemoEntries = 200000;
// Completion rates are rounded to 1 / kMemoBuckets in memo keys.
constexpr int kMemoBuckets = 32;

bool Helps(const ConfigSpace& space, const GpuConfig& config, const Coverage& coverage) {
  const Layout& layout = space.layouts()[config.layout];
  for (size_t i = 0; i < layout.size(); ++i) {
    if (config.services[i] != kIdle && !coverage.Satisfied(config.services[i])) return true;
  }
  return false;
}

}  // namespace

Status TreeSearchOptions::Validate() const {
  if (top_k < 1 || sampled_services < 1 || simulations < 1) {
    return Status::InvalidArgument(
        "tree search: top_k, sampled_services and simulations must be >= 1");
  }
  if (!(exploration >= 0)) return Status::InvalidArgument("tree search: exploration must be >= 0");
  return Status::Ok();
}

struct TreeSearch::Node {
  explicit Node(Coverage c, int p = -1, GpuConfig e = {})
      : coverage(std::move(c)), parent(p), edge(std::move(e)) {}

  Coverage coverage;
  int parent;      // index in nodes_, -1 for the root
  GpuConfig edge;  // the configuration leading here from the parent
  bool generated = false;
  Deployment candidates;      // the edges, once generated
  std::vector<int> children;  // nodes of candidates[0 .. children.size())
  int visits = 0;
  double length_sum = 0;      // of the estimated paths through here
  int best_length = kNoPath;  // the shortest path through here
};

TreeSearch::TreeSearch(const ConfigSpace& space, const TreeSearchOptions& options)
    : space_(space), options_(options) {}

TreeSearch::~TreeSearch() = default;

Deployment TreeSearch::Candidates(const Coverage& coverage, std::mt19937_64& rng) const {
  std::vector<int> open = coverage.Unsatisfied();
  const size_t picked = std::min(open.size(), static_cast<size_t>(options_.sampled_services));
  for (size_t i = 0; i < picked; ++i)
    std::swap(open[i], open[i + UniformIndex(rng, open.size() - i)]);
  const std::span<const int> picks(open.data(), picked);
  std::vector<ScoredConfig> scored;
  for (int layout = 0; layout < static_cast<int>(space_.layouts().size()); ++layout) {
    for (size_t a = 0; a < picked; ++a) {
      scored.push_back(space_.Best(layout, picks.subspan(a, 1), coverage));
      for (size_t b = a + 1; b < picked; ++b) {
        const int pair[] = {picks[a], picks[b]};
        scored.push_back(space_.Best(layout, pair, coverage));
      }
    }
    if (picked > 2) scored.push_back(space_.Best(layout, picks, coverage));
  }
  std::erase_if(scored, [](const ScoredConfig& c) { return c.score <= 0; });
  std::stable_sort(scored.begin(), scored.end(),
                   [](const ScoredConfig& a, const ScoredConfig& b) { return a.score > b.score; });
  Deployment top;
  for (const ScoredConfig& c : scored) {
    if (static_cast<int>(top.size()) == options_.top_k) break;
    if (std::find(top.begin(), top.end(), c.config) == top.end()) top.push_back(c.config);
  }
  return top;
}

std::string TreeSearch::MemoKey(const Coverage& coverage) const {
  std::string key(space_.num_services(), '\0');
  for (int s = 0; s < space_.num_services(); ++s) {
    if (coverage.Satisfied(s)) continue;
    key[s] = static_cast<char>(
        1 + std::min(kMemoBuckets - 1, static_cast<int>(coverage.Need(s) * kMemoBuckets)));
  }
  return key;
}

bool TreeSearch::Rollout(Coverage coverage, std::mt19937_64& rng, Deployment& out) {
  while (!coverage.AllSatisfied()) {
    if (memo_.size() >= kMaxMemoEntries) memo_.clear();
    Deployment& pool = memo_[MemoKey(coverage)];
    const GpuConfig* pick = pool.empty() ? nullptr : &pool[UniformIndex(rng, pool.size())];
    if (!pick || !Helps(space_, *pick, coverage)) {
      pool = Candidates(coverage, rng);
      if (pool.empty()) return false;
      pick = &pool[UniformIndex(rng, pool.size())];
    }
    coverage.Add(*pick);
    out.push_back(*pick);
  }
  return true;
}

std::optional<Deployment> TreeSearch::Simulate(std::mt19937_64& rng) {
  int at = 0;
  Deployment path;
  bool complete = true;
  while (!nodes_[at].coverage.AllSatisfied()) {
    if (!nodes_[at].generated) {
      nodes_[at].candidates = Candidates(nodes_[at].coverage, rng);
      nodes_[at].generated = true;
    }
    Node& node = nodes_[at];
    if (node.children.size() < node.candidates.size()) {  // expand, then estimate
      GpuConfig edge = node.candidates[node.children.size()];
      Coverage coverage = node.coverage;
      coverage.Add(edge);
      node.children.push_back(static_cast<int>(nodes_.size()));
      path.push_back(edge);
      nodes_.emplace_back(coverage, at, std::move(edge));
      at = static_cast<int>(nodes_.size()) - 1;
      complete = Rollout(std::move(coverage), rng, path);
      break;
    }
    if (node.children.empty()) {  // no configuration helps: a dead end
      complete = false;
      break;
    }
    const double log_visits = std::log(static_cast<double>(node.visits));
    auto uct = [&](int child) {  // shorter estimated paths first, plus exploration
      const Node& c = nodes_[child];
      return -c.length_sum / c.visits + options_.exploration * std::sqrt(log_visits / c.visits);
    };
    at = *std::max_element(node.children.begin(), node.children.end(),
                           [&](int a, int b) { return uct(a) < uct(b); });
    path.push_back(nodes_[at].edge);
  }
  const int length = complete ? static_cast<int>(path.size()) : kNoPath;
  for (int v = at; v != -1; v = nodes_[v].parent) {
    Node& node = nodes_[v];
    ++node.visits;
    node.length_sum += complete ? length : 2.0 * space_.num_services() + path.size();
    node.best_length = std::min(node.best_length, length);
  }
  if (!complete) return std::nullopt;
  return path;
}

int TreeSearch::NextMove() const {
  int best = -1;
  for (int child : nodes_[0].children) {
    const Node& c = nodes_[child];
    if (best < 0 || c.best_length < nodes_[best].best_length ||
        (c.best_length == nodes_[best].best_length && c.visits > nodes_[best].visits)) {
      best = child;
    }
  }
  return best;
}

std::optional<Deployment> TreeSearch::Fill(const Coverage& coverage, std::mt19937_64& rng,
                                           const Deadline& deadline) {
  Deployment moves;
  Coverage at = coverage;
  std::optional<Deployment> shortest;  // the shortest complete path seen
  while (!at.AllSatisfied()) {
    nodes_.clear();
    nodes_.emplace_back(at);
    for (int k = 0; k < options_.simulations; ++k) {
      if (deadline.Passed()) return std::nullopt;
      std::optional<Deployment> path = Simulate(rng);
      if (path && (!shortest || moves.size() + path->size() < shortest->size())) {
        shortest = moves;
        shortest->insert(shortest->end(), path->begin(), path->end());
      }
    }
    const int next = NextMove();
    if (next < 0) return shortest;  // a dead end: only what was found elsewhere
    moves.push_back(nodes_[next].edge);
    at.Add(moves.back());
  }
  if (shortest && shortest->size() < moves.size()) return shortest;
  return moves;
}

}  // namespace tessera::migserving
