// WatchStream: the decoder of a Kubernetes watch, apart from its transport
// (kube_client.cc). A watch's body is one JSON event per line ({"type":
// ADDED | MODIFIED | DELETED | BOOKMARK | ERROR, "object": ...}); the
// transport feeds it the body in chunks as they arrive, split anywhere.
// Each whole event goes to the caller's callback, in order; the stream
// keeps the last resourceVersion it saw, from which a new watch resumes.
//
// It ends, Feed returning false, when the callback returns false, at an
// ERROR event (the Status it carries: its HTTP code, else IoError), at a
// line that is not a JSON object with a string "type" (IoError quoting it)
// or at a line longer than kMaxWatchLineBytes. Internal to the k8s floor.
//
// Thread-safety: one stream per watch, used by one thread.
#ifndef TESSERA_K8S_WATCH_STREAM_H_
#define TESSERA_K8S_WATCH_STREAM_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/k8s/kube_client.h"
#include "tessera/status.h"

namespace tessera {

// A watch event (one line) larger than this is refused: a list of 100,000
// pods is one watch event per pod, never one line.
inline constexpr size_t kMaxWatchLineBytes = size_t{64} << 20;

class WatchStream {
 public:
  // `what` starts every error ("watch /api/v1/pods"); `resource_version` is
  // the one the watch started from.
  WatchStream(std::string what, std::string resource_version,
              std::function<bool(const WatchEvent&)> on_event);

  // The next chunk of the body. False once the watch is over.
  bool Feed(std::string_view chunk);
  // The end of the body: a last event without its newline is handled.
  void Finish();

  // Why the watch failed, if it did.
  const std::optional<Status>& error() const { return error_; }
  // True when the callback ended it.
  bool ended_by_caller() const { return ended_by_caller_; }
  // The last resourceVersion of an event's object, else the one started from.
  const std::string& last_version() const { return last_version_; }

 private:
  bool HandleLine(std::string_view line);

  std::string what_;
  std::string last_version_;
  std::function<bool(const WatchEvent&)> on_event_;
  std::string buffer_;  // the start of an event whose line has not ended
  std::optional<Status> error_;
  bool ended_by_caller_ = false;
};

}  // namespace tessera

#endif  // TESSERA_K8S_WATCH_STREAM_H_
