// Running the host compiler for the simulator's kernel builds (host_build.hpp).
#include "host_build.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "shim_files.hpp"

namespace dcsim_lib {

using dcsupport::remove_tree;
using dcsupport::temp_root;

int run(const std::vector<std::string>& argv, const std::string& dir, const std::string& log_path, std::string& log) {
  dcsupport::ProcessResult result;
  std::string error;
  if (!dcsupport::run_process(argv, dir, log_path, result, error)) {
    log = error;
    return -1;
  }
  log = std::move(result.output);
  for (size_t at; (at = log.find(dir + "/")) != std::string::npos;) log.erase(at, dir.size() + 1);
  return result.signal != 0 ? 128 + result.signal : result.exit_code;
}

const std::vector<std::pair<std::string, std::string>>& shim_files() {
  static const std::vector<std::pair<std::string, std::string>> files = [] {
    std::vector<std::pair<std::string, std::string>> out;
    const char* dir = std::getenv("DOTCOMPUTE_CUDA_SIM_SHIM_DIR");
    for (const ShimFile* f = kShimFiles; f->name; ++f) {
      std::string text = f->text;
      if (dir && *dir) {
        std::ifstream in(std::string(dir) + "/" + f->name, std::ios::binary);
        if (in) {
          std::stringstream ss;
          ss << in.rdbuf();
          text = ss.str();
        }
      }
      out.emplace_back(f->name, std::move(text));
    }
    return out;
  }();
  return files;
}

void write_shim_files(const std::string& dir) {
  mkdir((dir + "/include").c_str(), 0700);
  for (const auto& f : shim_files()) {
    const std::string& name = f.first;
    // a header in a folder of its own (include/cooperative_groups/reduce.h): make the folder first
    for (size_t slash = name.find('/', 8); slash != std::string::npos; slash = name.find('/', slash + 1))
      mkdir((dir + "/" + name.substr(0, slash)).c_str(), 0700);
    write_file(dir + "/" + name, f.second);
  }
}

namespace {

// Folders named dcsim-pch-<pid>- whose process is gone (killed before its exit handlers ran): removed
// when a process makes its own, so a crashed test run does not leave its .gch files behind for good.
void remove_orphaned_pch_dirs() {
  const std::string base = temp_root();
  DIR* d = opendir(base.c_str());
  if (!d) return;
  const std::string prefix = "dcsim-pch-";
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    struct stat st {};
    const std::string full = base + "/" + name;
    if (pid <= 0 || lstat(full.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) remove_tree(full);
  }
  closedir(d);
}

struct SharedState {
  std::mutex mu;
  long owner = 0;  // the process the files below belong to (a forked child makes its own)
  bool dir_failed = false;
  std::map<std::vector<std::string>, int> builds;         // plain builds seen per flag set
  std::map<std::vector<std::string>, SharedShim> ready;  // made (or tried) per flag set
};

SharedState& shared_state() {
  static SharedState* s = new SharedState;  // never destroyed: kernels may build while the process exits
  return *s;
}

// The folder of the shared files: a static whose destructor removes it at exit.
TempDir& shared_dir() {
  static TempDir dir;
  return dir;
}

}  // namespace

SharedShim shared_shim(const std::vector<std::string>& flags) {
  SharedState& s = shared_state();
  std::lock_guard<std::mutex> lock(s.mu);
  const long pid = static_cast<long>(getpid());
  if (s.owner != pid) {  // first use, or a forked child: its parent's folder may go before it does
    s.owner = pid;
    s.dir_failed = false;
    s.builds.clear();
    s.ready.clear();
  }
  if (auto it = s.ready.find(flags); it != s.ready.end()) return it->second;
  if (++s.builds[flags] < 3 || s.dir_failed) return {};
  TempDir& dir = shared_dir();
  if (dir.path().empty() || dir.owner() != pid) {
    remove_orphaned_pch_dirs();
    std::string error;
    if (!dir.create("dcsim-pch-" + std::to_string(pid) + "-", error)) {
      s.dir_failed = true;
      return {};
    }
  }
  // each flag set in a folder of its own, with its own copy of the headers
  const std::string sub = dir.path() + "/" + std::to_string(s.ready.size());
  SharedShim& made = s.ready[flags];
  if (mkdir(sub.c_str(), 0700) != 0) return made;
  write_shim_files(sub);
  std::string log;
  std::vector<std::string> argv = flags;
  argv.insert(argv.end(), {"-DDCSIM_SPLIT_RUNTIME", "-I" + sub, "-I" + sub + "/include"});
  std::vector<std::string> runtime = argv;
  write_file(sub + "/runtime.cpp", "#include \"dcsim_cuda.h\"\n");
  runtime.insert(runtime.end(), {"-c", "-o", sub + "/runtime.o", sub + "/runtime.cpp"});
  if (run(runtime, sub, sub + "/runtime.log", log) != 0) return made;
  made.runtime_object = sub + "/runtime.o";
  // built under another name and renamed: a build never sees half a file
  argv.insert(argv.end(), {"-DDCSIM_KERNEL_ONLY", "-x", "c++-header", "-o", sub + "/partial.gch", sub + "/dcsim_cuda.h"});
  if (run(argv, sub, sub + "/pch.log", log) == 0 &&
      rename((sub + "/partial.gch").c_str(), (sub + "/dcsim_cuda.h.gch").c_str()) == 0)
    made.pch = sub + "/dcsim_cuda.h.gch";
  return made;
}

}  // namespace dcsim_lib
