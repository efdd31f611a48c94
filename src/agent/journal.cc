// Journal: see journal.h.
#include "agent/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "tessera/util/text_io.h"

namespace tessera::agent {
namespace {

constexpr off_t kRotateBytes = 4 << 20;

std::string NowUtc() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms));
  return out;
}

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

long long Integer(const nlohmann::json& j, const char* key, long long otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : otherwise;
}

std::string Text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Reads the journal back: the begun steps without an end, the next seq, and
// the length of its whole lines (a torn last line is cut there).
struct Replay {
  std::map<long long, StepSubject> open;
  long long next_seq = 1;
  off_t whole_bytes = 0;
};

Replay ReplayJournal(const std::string& text) {
  Replay replay;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t newline = text.find('\n', pos);
    if (newline == std::string::npos) break;  // torn: written by a killed agent
    const std::string line = text.substr(pos, newline - pos);
    pos = newline + 1;
    replay.whole_bytes = static_cast<off_t>(pos);
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    // A line of another shape (edited by hand) is passed over, never trusted.
    if (!j.is_object()) continue;
    const long long seq = Integer(j, "seq", -1);
    if (seq >= 0) replay.next_seq = std::max(replay.next_seq, seq + 1);
    const std::string event = Text(j, "event");
    if (event == "begin" && seq >= 0) {
      StepSubject s;
      s.op = Text(j, "op");
      s.gpu = static_cast<int>(Integer(j, "gpu", 0));
      s.profile = Text(j, "profile");
      s.start = static_cast<int>(Integer(j, "start", 0));
      s.detail = Text(j, "detail");
      replay.open[seq] = s;
    } else if (event == "end") {
      replay.open.erase(Integer(j, "of", -1));
    }
  }
  return replay;
}

}  // namespace

Result<Journal> Journal::Open(const std::string& dir, std::vector<OpenStep>* open_steps) {
  const std::string path = dir + "/journal.jsonl";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && st.st_size > kRotateBytes) {
    // The open steps of the old file are carried over: replay it first.
    Result<std::string> old = ReadTextFile(path);
    if (!old.ok()) return old.status();
    const Replay replay = ReplayJournal(*old);
    if (::rename(path.c_str(), (path + ".1").c_str()) != 0) return Errno("cannot rotate", path);
    Result<Journal> journal = Open(dir, nullptr);
    if (!journal.ok()) return journal;
    journal->next_seq_ = replay.next_seq;
    for (const auto& [seq, subject] : replay.open) {
      if (open_steps) open_steps->push_back({seq, subject});
    }
    return journal;
  }
  Replay replay;
  if (::access(path.c_str(), F_OK) == 0) {
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return text.status();
    replay = ReplayJournal(*text);
    if (replay.whole_bytes < static_cast<off_t>(text->size()) &&
        ::truncate(path.c_str(), replay.whole_bytes) != 0) {
      return Errno("cannot cut its torn last line", path);
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot open the journal", path);
  if (open_steps) {
    for (const auto& [seq, subject] : replay.open) open_steps->push_back({seq, subject});
  }
  return Journal(path, fd, replay.next_seq);
}

Journal::Journal(std::string path, int fd, long long next_seq)
    : path_(std::move(path)), fd_(fd), next_seq_(next_seq) {}

Journal::Journal(Journal&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), next_seq_(other.next_seq_) {
  other.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::Append(const std::string& line) {
  const std::string whole = line + "\n";
  size_t done = 0;
  while (done < whole.size()) {
    const ssize_t n = ::write(fd_, whole.data() + done, whole.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write the journal", path_);
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) return Errno("cannot flush the journal", path_);
  return Status::Ok();
}

Result<long long> Journal::Begin(const StepSubject& subject) {
  const long long seq = next_seq_++;
  nlohmann::ordered_json j;
  j["seq"] = seq;
  j["time"] = NowUtc();
  j["event"] = "begin";
  j["op"] = subject.op;
  j["gpu"] = subject.gpu;
  j["profile"] = subject.profile;
  j["start"] = subject.start;
  j["detail"] = subject.detail;
  TESSERA_RETURN_IF_ERROR(Append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  return seq;
}

Status Journal::End(long long seq, bool ok, const std::string& detail, bool interrupted) {
  nlohmann::ordered_json j;
  j["seq"] = next_seq_++;
  j["time"] = NowUtc();
  j["event"] = "end";
  j["of"] = seq;
  j["ok"] = ok;
  if (interrupted) j["interrupted"] = true;
  j["detail"] = detail;
  return Append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Status Journal::Record(const std::string& event, const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json j;
  j["seq"] = next_seq_++;
  j["time"] = NowUtc();
  j["event"] = event;
  for (const auto& [key, value] : fields.items()) j[key] = value;
  return Append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace tessera::agent
