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

#include <csignal>

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

// Replaces this process with tessera-net, found next to this executable,
// given this process's own arguments. Returns only when that fails:
// kExitInternal, with the reason printed.
int RunInNetBinary();

}  // namespace tessera::cli

#endif  // TESSERA_APP_NET_COMMAND_H_
