// RemoteAgent: the node agent (node_agent.h) under a control plane, `tessera
// agent --server URL` (docs/control-plane.md). It long-polls
//   GET  /v1/nodes/{node}/plan?since=V&wait=W
// and acts on each NodeWork it gets:
//   - its NodePlan is the plan of the agent (NodeAgent::Open the first time,
//     SetPlan when it changes; a plan that does not fit the machine keeps the
//     last one and is reported as not converged);
//   - with a transition {id, phase, transition, steps} and steps for this
//     node, the agent runs that phase (NodeAgent::RunTransition) and posts
//       POST /v1/nodes/{node}/status
//       {"transition": {"id", "phase", "ok", "error"?}, "converged", "inventory"}
//     once per (id, phase) that succeeded; a 409 (the phase no longer runs)
//     means poll again. A node with no steps in the phase waits: it never
//     reconciles in the middle of a transition;
//   - without a transition it reconciles to the plan (NodeAgent::Reconcile)
//     and posts {"converged", "inventory"} when either, or the plan, differs
//     from what it last posted.
// It then polls again with since = the version it acted on, so it acts once
// per change (and once every `wait` seconds without one: a reconcile that
// finds drift). "inventory" is NodeAgent::Observe: [{"gpu" (cluster index),
// "profile", "start", "service"?, "ready"}].
//
// Errors: network errors and 5xx answers are retried with capped exponential
// backoff (each retry a progress line); Run returns an error only for what
// retrying does not mend: a 4xx answer to the poll (401: the token), a
// NodeWork that does not parse or names another node, a 4xx other than 409
// to a status post, or a NodeAgent that does not open (lock, NVML, plan).
//
// Thread-safety: Run and Round from one thread; Stop from any other (a
// signal watcher): it ends Run after the step in flight, and cuts a pending
// long-poll or backoff short.
#ifndef TESSERA_REMOTE_AGENT_H_
#define TESSERA_REMOTE_AGENT_H_

#include <functional>
#include <memory>
#include <string>

#include "tessera/agent/node_agent.h"
#include "tessera/nvml/nvml.h"
#include "tessera/status.h"

namespace tessera {

struct RemoteAgentOptions {
  std::string server;  // "http://HOST[:PORT]" (plain HTTP; a trailing '/' is allowed)
  std::string node;    // this node's name, as the control plane names it ("node-0")
  std::string token;   // bearer token for the posts and polls; empty: none
  std::string nvml_library = kDefaultNvmlLibrary;
  AgentOptions agent;            // state directory, command overrides, timeouts
  int poll_wait_s = 30;          // the long-poll's wait, 0..60
  double backoff_first_s = 0.5;  // first retry delay; doubles per failure
  double backoff_max_s = 30;     // its cap
  // Waits `seconds` before a retry; empty: a real wait that Stop cuts short.
  // Tests inject one that records the delay and returns at once.
  std::function<void(double seconds)> sleep;
};

class RemoteAgent {
 public:
  // Checks the options: the URL's form (InvalidArgument naming --server),
  // the node name, the poll wait. Connects to nothing yet.
  static Result<std::unique_ptr<RemoteAgent>> Create(RemoteAgentOptions options,
                                                     AgentProgress progress);
  ~RemoteAgent();

  // Rounds until Stop (then Ok) or an error (see the file comment).
  Status Run();
  // One round: polls (retrying until an answer or Stop), acts on the
  // NodeWork and posts what there is to post. Ok, doing nothing, once
  // stopped.
  Status Round();
  // Ends Run after the step in flight; callable from any thread.
  void Stop();

  class Impl;

 private:
  explicit RemoteAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_REMOTE_AGENT_H_
