// Journal: the node agent's write-ahead record of its steps,
// <state-dir>/journal.jsonl, one JSON object a line (docs/deployment.md,
// "The journal"):
//   {"seq":7,"time":"2026-11-25T21:50:01.123Z","event":"begin","op":"create-gpu-instance",
//    "gpu":0,"profile":"3g.40gb","start":4,"detail":""}
//   {"seq":8,"time":"...","event":"end","of":7,"ok":true,"detail":"GPU instance 1"}
// plus "run" lines (an agent run starts: mode, node, plan) and "note" lines.
// Every line is written with one write(2) and flushed to disk (fdatasync)
// before the step it announces runs, so a SIGKILL loses nothing written.
// Opening the journal reads it back: a torn last line (a crash inside the
// write) is cut off, and every "begin" without its "end" is returned so the
// agent can close it with "interrupted": true. Past 4 MiB the file is moved
// to journal.jsonl.1 (one old file kept).
//
// Thread-safety: one Journal per agent.
#ifndef TESSERA_AGENT_JOURNAL_H_
#define TESSERA_AGENT_JOURNAL_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::agent {

// What a step is about: the instance place and what it does there.
struct StepSubject {
  std::string op;
  int gpu = 0;
  std::string profile;
  int start = 0;
  std::string detail;
};

// A "begin" line whose "end" never came.
struct OpenStep {
  long long seq = 0;
  StepSubject subject;
};

class Journal {
 public:
  // Opens (creating) <dir>/journal.jsonl for appending; `open_steps` gets
  // the begun steps left without an end. IoError naming the path on failure.
  static Result<Journal> Open(const std::string& dir, std::vector<OpenStep>* open_steps);
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  ~Journal();

  // Appends a "begin" line and returns its seq.
  Result<long long> Begin(const StepSubject& subject);
  // Appends the "end" line of step `seq`.
  Status End(long long seq, bool ok, const std::string& detail, bool interrupted = false);
  // Appends a line {"seq", "time", "event": event, ...fields}.
  Status Record(const std::string& event, const nlohmann::ordered_json& fields);

  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, long long next_seq);
  Status Append(const std::string& line);

  std::string path_;
  int fd_ = -1;
  long long next_seq_ = 1;
};

}  // namespace tessera::agent

#endif  // TESSERA_AGENT_JOURNAL_H_
