#include "history_check.h"

#include <fmt/format.h>

namespace tessera::testing {
namespace {

// A write as the reads see it: the initial value is a write that ended
// before time began.
struct Write {
  double value;
  double invoked;
  double answered;
  std::string who;
};

std::string Describe(const HistoryOp& op) {
  const std::string answered =
      op.answered == HistoryOp::kNever ? "no answer" : fmt::format("{:.3f}", op.answered);
  return fmt::format("{} {} {:g} by {} [{:.3f}, {}]",
                     op.kind == HistoryOp::Kind::kWrite ? "write" : "read", op.key, op.value,
                     op.client, op.invoked, answered);
}

}  // namespace

std::vector<std::string> History::Violations() const {
  std::vector<std::string> out;
  std::map<std::string, std::vector<Write>> writes;
  std::map<std::string, std::vector<const HistoryOp*>> reads;
  for (const auto& [key, value] : initial_) {
    writes[key].push_back({value, -HistoryOp::kNever, -HistoryOp::kNever, "the initial value"});
  }
  for (const HistoryOp& op : ops_) {
    if (op.kind == HistoryOp::Kind::kWrite) {
      writes[op.key].push_back({op.value, op.invoked, op.answered, Describe(op)});
    } else if (op.answered != HistoryOp::kNever) {
      reads[op.key].push_back(&op);
    }
  }
  for (const auto& [key, key_reads] : reads) {
    const std::vector<Write>& ws = writes[key];
    const auto source = [&](const HistoryOp& r) -> const Write* {
      for (const Write& w : ws) {
        if (w.value == r.value) return &w;
      }
      return nullptr;
    };
    for (const HistoryOp* r : key_reads) {
      const Write* w = source(*r);
      if (w == nullptr) {
        out.push_back(Describe(*r) + ": no write of this value");
        continue;
      }
      if (w->invoked > r->answered) {
        out.push_back(Describe(*r) + ": reads " + w->who + ", invoked after the read answered");
      }
      for (const Write& w2 : ws) {
        if (w2.invoked > w->answered && w2.answered < r->invoked) {
          out.push_back(Describe(*r) + ": stale: " + w->who + " was overwritten by " + w2.who +
                        " before the read began");
          break;
        }
      }
    }
    for (const HistoryOp* r1 : key_reads) {
      const Write* w1 = source(*r1);
      if (w1 == nullptr) continue;
      for (const HistoryOp* r2 : key_reads) {
        if (!(r1->answered < r2->invoked)) continue;
        const Write* w2 = source(*r2);
        if (w2 != nullptr && w2->answered < w1->invoked) {
          out.push_back(Describe(*r2) + ": new-old inversion: an earlier " + Describe(*r1) +
                        " saw a value written after this one's");
        }
      }
    }
  }
  return out;
}

}  // namespace tessera::testing
