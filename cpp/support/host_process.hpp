// Running a host program (a C++ compiler) without a shell, in a private folder: what the CPU
// backend's kernel builds and the CUDA simulator's host builds both need. A static library linked
// into each plugin (cpp/support/CMakeLists.txt); it includes nothing of dotcompute's own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dcsupport {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, if one did
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (an absolute path) with argv in `cwd` (where glibc can change directory for a
// spawned child), stdin from /dev/null and stdout+stderr written to `log_path`, then read back into
// result.output. Returns false with `error` set when the program could not be started or waited for.
bool run_process(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path,
                 ProcessResult& result, std::string& error);

// Absolute path of an executable: `name` itself when it contains '/', else the first match on
// PATH; "" when none is executable.
std::string find_executable(const std::string& name);

bool read_file(const std::string& path, std::string& out);
bool write_file(const std::string& path, const char* data, size_t size);
inline bool write_file(const std::string& path, const std::string& text) {
  return write_file(path, text.data(), text.size());
}

// $TMPDIR, or /tmp when it is unset or empty.
std::string temp_root();

// Removes `path` and everything under it (links are removed, not followed).
void remove_tree(const std::string& path);

// A fresh private folder under temp_root() (mkdtemp: mode 0700), removed with its contents when the
// object goes -- by the process that made it only: a forked child leaves its parent's folder alone.
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  // prefix: the folder's name before mkdtemp's random part. Refuses (false, `error` set) a folder
  // that is not a directory of this user's that no one else may write into.
  bool create(const std::string& prefix, std::string& error);
  const std::string& path() const { return path_; }
  long owner() const { return owner_; }  // the pid that made it

 private:
  std::string path_;
  long owner_ = 0;
};

}  // namespace dcsupport
