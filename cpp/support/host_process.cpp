// host_process.hpp: spawning a host program and its private folder.
#include "host_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace dcsupport {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// posix_spawn file actions, released on every path out.
class SpawnActions {
 public:
  SpawnActions() { ok_ = posix_spawn_file_actions_init(&actions_) == 0; }
  ~SpawnActions() {
    if (ok_) posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  bool ok() const { return ok_; }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  bool ok_ = false;
};

}  // namespace

void remove_tree(const std::string& path) {
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string child = path + "/" + name;
      struct stat st {};
      if (lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        remove_tree(child);
      } else {
        unlink(child.c_str());
      }
    }
    closedir(dir);
  }
  rmdir(path.c_str());
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) return "";
    if (name[0] == '/') return name;
    char* resolved = realpath(name.c_str(), nullptr);
    if (resolved == nullptr) return "";
    std::string abs = resolved;
    std::free(resolved);
    return abs;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream parts(path);
  std::string dir;
  while (std::getline(parts, dir, ':')) {
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return "";
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  out = buf.str();
  return !in.bad();
}

bool write_file(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return false;
  out.write(data, static_cast<std::streamsize>(size));
  out.close();
  return !out.fail();
}

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  return (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
}

TempDir::~TempDir() {
  if (!path_.empty() && owner_ == static_cast<long>(getpid())) remove_tree(path_);
}

bool TempDir::create(const std::string& prefix, std::string& error) {
  std::string pattern = temp_root() + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    error = "cannot create a temporary directory under " + temp_root() + ": " + std::strerror(errno) +
            " (set TMPDIR to a writable directory)";
    return false;
  }
  path_ = pattern;
  owner_ = static_cast<long>(getpid());
  // As the kernel cache checks its folder: a directory (not a link), ours, and no one else's to
  // write into, or nothing is built there.
  struct stat st {};
  if (lstat(path_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    error = "the temporary directory " + path_ + " is not a private directory of this user's";
    return false;
  }
  return true;
}

bool run_process(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path,
                 ProcessResult& result, std::string& error) {
  if (argv.empty()) {
    error = "empty command line";
    return false;
  }
  SpawnActions actions;
  if (!actions.ok()) {
    error = "posix_spawn_file_actions_init failed";
    return false;
  }
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(actions.get(), 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(actions.get(), 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(actions.get(), cwd.c_str());
#else
  (void)cwd;  // callers pass absolute paths there, so the working directory only affects log text
#endif
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), actions.get(), nullptr, args.data(), environ);
  if (rc != 0) {
    error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      error = "waitpid for " + argv[0] + " failed: " + std::strerror(errno);
      return false;
    }
  }
  result = ProcessResult{};
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.signal = WTERMSIG(status);
  }
  read_file(log_path, result.output);
  return true;
}

}  // namespace dcsupport
