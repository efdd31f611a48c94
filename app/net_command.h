// The subcommands that speak HTTP, `tessera serve` and `tessera agent
// --server`, run in tessera-net: the same CLI, built beside `tessera` with
// them in it (TESSERA_CLI_NET), linking cpp-httplib, OpenSSL and SQLite.
// `tessera` itself links none of these, so that every other subcommand
// starts without loading them (docs/architecture.md, "Start-up"): after
// parsing the flags as tessera-net would, it hands the whole command line
// over to tessera-net, which replaces it in the same process.
//
// Thread-safety: call from the main thread, with no other thread running.
#ifndef TESSERA_APP_NET_COMMAND_H_
#define TESSERA_APP_NET_COMMAND_H_

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

#include "tessera/status.h"

namespace tessera::cli {

// SIGINT and SIGTERM for a server subcommand that runs until one comes:
// blocked from construction on (before its threads start, so that none of
// them runs a handler), taken by Wait.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  // Blocks until SIGINT or SIGTERM; returns it.
  int Wait() const {
    int signal = 0;
    sigwait(&set_, &signal);
    return signal;
  }

 private:
  sigset_t set_;
};

// Set by SIGINT and SIGTERM once RunUntilStopped has installed its handler.
inline volatile std::sig_atomic_t g_stop_signal = 0;
inline void OnStopSignal(int) { g_stop_signal = 1; }

// Runs `run` (a daemon's loop) to its end; SIGINT or SIGTERM calls `stop`
// from a watcher thread (the handler only sets a flag), after which `run`
// is expected to return.
inline Status RunUntilStopped(const std::function<Status()>& run,
                              const std::function<void()>& stop) {
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done && !g_stop_signal) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (g_stop_signal) stop();
  });
  const Status s = run();
  done = true;
  watcher.join();
  return s;
}

// Replaces this process with tessera-net, found next to this executable,
// given this process's own arguments. Returns only when that fails:
// kExitInternal, with the reason printed.
int RunInNetBinary();

}  // namespace tessera::cli

#endif  // TESSERA_APP_NET_COMMAND_H_
