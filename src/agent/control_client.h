// ControlClient: the HTTP client of the programs that work under `tessera
// serve` (the node agent, remote_agent.h; the router agent,
// router_agent.h): plain HTTP to "http://HOST[:PORT]", a bearer token, and
// every request retried on a network error or a 5xx answer with capped
// exponential backoff (each retry a progress line) until an answer below
// 500 or Stop.
//
// Replicas: `server` may list several replicas of `tessera serve`
// ("http://a:8080,http://b:8080,http://c:8080"). A request that cannot
// reach one, or gets a 5xx, is retried on the next; a follower's 307 is
// followed to the leader its Location names (which becomes the server the
// next requests go to). So the client follows the leader through a
// failover.
//
// Thread-safety: Send from one thread at a time; Stop and Sleep's wake-up
// from any other (a signal watcher): Stop cuts a pending request or backoff
// short.
#ifndef TESSERA_AGENT_CONTROL_CLIENT_H_
#define TESSERA_AGENT_CONTROL_CLIENT_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace httplib {
class Client;
}

namespace tessera {

struct ControlClientOptions {
  // "http://HOST[:PORT]" (a trailing '/' is allowed), or several,
  // comma-separated.
  std::string server;
  std::string token;  // bearer token; empty: none
  int read_timeout_s = 45;
  double backoff_first_s = 0.5;  // first retry delay; doubles per failure
  double backoff_max_s = 30;     // its cap
  // Waits `seconds` before a retry; empty: a real wait that Stop cuts short.
  std::function<void(double seconds)> sleep;
  std::function<void(const std::string&)> say;  // progress lines; may be empty
};

struct ControlReply {
  int status = 0;
  std::string body;
};

class ControlClient {
 public:
  // InvalidArgument naming --server for a URL that is not
  // http://HOST[:PORT][/] (https, a path, a bad port), or an empty list.
  static Result<std::unique_ptr<ControlClient>> Create(ControlClientOptions options);
  ~ControlClient();

  // The answer (status < 500), or nullopt once stopped.
  std::optional<ControlReply> Send(const std::string& method, const std::string& path,
                                   const std::string& body);
  // POSTs a status report (JSON) to `path`: the answer's status, 200 or 409
  // (the step it reports no longer runs), or 0 once stopped; NotFound for
  // a 404 and InvalidArgument for another 4xx, naming the path and the
  // server's message.
  Result<int> PostStatus(const std::string& path, const std::string& body);
  // Waits `seconds` (the options' sleep when given); Stop ends it early.
  void Sleep(double seconds);
  void Stop();
  bool Stopping() const { return stopping_.load(); }
  // The server requests go to now ("http://HOST:PORT").
  std::string server() const;

 private:
  struct Server {
    std::string url;  // without a trailing '/'
    std::string host;
    int port = 80;
  };
  ControlClient(ControlClientOptions options, std::vector<Server> servers);
  // Sends the next requests to `server` (a new connection).
  void Connect(const Server& server);
  // Follows a 307 to the server its Location names; false when it names
  // none this client can reach.
  bool Follow(const std::string& location);

  ControlClientOptions options_;
  std::vector<Server> servers_;
  Server current_;
  std::unique_ptr<httplib::Client> client_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
};

// The message of an API error body ({"error": {"message"}}), else the body
// (cut at 200 characters).
std::string ApiErrorText(const std::string& body);

}  // namespace tessera

#endif  // TESSERA_AGENT_CONTROL_CLIENT_H_
