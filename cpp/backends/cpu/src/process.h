// Running a child process (the host compiler) without a shell, and the small
// file-system helpers compilation needs.
#pragma once

#include <string>
#include <vector>

namespace dccpu {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (an absolute path) with argv in `cwd`, stdin from /dev/null and
// stdout+stderr captured through `log_path`. Returns false with `error` set
// when the process could not be started at all.
bool run_process(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path,
                 ProcessResult& result, std::string& error);

// Absolute path of an executable: `name` itself when it contains '/', else
// the first match on PATH; "" when none is executable.
std::string find_executable(const std::string& name);

bool read_file(const std::string& path, std::string& out);
bool write_file(const std::string& path, const char* data, size_t size);

// A fresh private directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  bool create(std::string& error);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string temp_root();

}  // namespace dccpu
