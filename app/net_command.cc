#include "net_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "cli_output.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {

int RunInNetBinary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string net = (self.parent_path() / "tessera-net").string();
  // This process's arguments, each ended by a NUL.
  Result<std::string> cmdline =
      ec ? Result<std::string>(Status::IoError(ec.message())) : ReadTextFile("/proc/self/cmdline");
  if (!cmdline.ok()) {
    PrintMessage("tessera: internal error: cannot read this process's command line: " +
                 cmdline.status().message() + "\n");
    return kExitInternal;
  }
  std::vector<std::string> args = {net};
  size_t start = cmdline->find('\0');  // past argv[0], which becomes tessera-net
  while (start != std::string::npos && start + 1 < cmdline->size()) {
    const size_t end = cmdline->find('\0', start + 1);
    args.push_back(cmdline->substr(start + 1, end - start - 1));
    start = end;
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::fflush(nullptr);
  execv(net.c_str(), argv.data());
  const int error = errno;
  PrintMessage("tessera: internal error: cannot run " + QuoteForMessage(net) + " (tessera's " +
               "HTTP subcommands; it is built beside tessera): " + std::strerror(error) + "\n");
  return kExitInternal;
}

}  // namespace tessera::cli
