// HistoryCheck: checks a history of operations on registers (one value per
// key, here a service's rate) against linearizability, as clients of a
// replicated store saw it: each operation with the time it was invoked and
// the time its answer arrived.
//
// A write's value is unique per key (a client never writes a value twice),
// so a read names the write it saw. A write without an answer (its client
// lost the connection: the replica died) may or may not have taken effect:
// it never ends. The checker reports, per key, the violations a
// linearizable register cannot show:
// - a read of a value never written (nor the initial one), or of a write
//   invoked after the read answered (a read from the future);
// - a stale read: the read's value was overwritten before the read began (a
//   write W2 began after the read value's write ended and ended before the
//   read began). An acknowledged write that a later read does not see, a
//   lost write, is one;
// - a new-old inversion: a read that began after another read ended saw a
//   value overwritten before the value the earlier read saw was written.
// For unique values these conditions are what linearizability of a single
// register requires of operations ordered in real time; concurrent
// operations may be ordered either way.
#ifndef TESSERA_TESTS_HISTORY_CHECK_H_
#define TESSERA_TESTS_HISTORY_CHECK_H_

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::testing {

struct HistoryOp {
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  enum class Kind { kWrite, kRead };
  Kind kind = Kind::kWrite;
  std::string key;
  double value = 0;          // written, or read
  double invoked = 0;        // seconds on any one clock
  double answered = kNever;  // kNever: no answer (a write that may have happened)
  std::string client;        // who, for messages
};

class History {
 public:
  // Thread-safe recording is the caller's; these just append.
  void Initial(const std::string& key, double value) { initial_[key] = value; }
  void Add(HistoryOp op) { ops_.push_back(std::move(op)); }
  const std::vector<HistoryOp>& ops() const { return ops_; }

  // Every violation found, one line each ("" none): key, operations, why.
  std::vector<std::string> Violations() const;

 private:
  std::map<std::string, double> initial_;
  std::vector<HistoryOp> ops_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_HISTORY_CHECK_H_
