// Children (children.h).
#include "serving/children.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

extern char** environ;

namespace tessera::serving {

Result<pid_t> Children::Spawn(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    return Status::IoError(fmt::format("cannot start {}: {}", argv[0], std::strerror(error)));
  }
  groups_.push_back(pid);
  return pid;
}

int Children::Wait(pid_t pid, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() > until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Children::Stop(pid_t pid) {
  const auto it = std::find(groups_.begin(), groups_.end(), pid);
  if (it == groups_.end()) return;
  groups_.erase(it);
  killpg(pid, SIGTERM);
  if (Wait(pid, 0.2) < 0) killpg(pid, SIGKILL);
  while (waitpid(-pid, nullptr, WNOHANG) > 0) {
  }
}

void Children::StopAll() {
  if (groups_.empty()) return;
  for (const pid_t group : groups_) killpg(group, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (const pid_t group : groups_) {
    killpg(group, SIGKILL);
    while (waitpid(-group, nullptr, WNOHANG) > 0) {
    }
  }
  groups_.clear();
}

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
  return text;
}

}  // namespace tessera::serving
