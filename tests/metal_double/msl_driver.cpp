// MSL → CPU shared object for the Metal test double (see msl_driver.h).
#include "msl_driver.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#ifndef DC_MTL_SHIM_DIR
#error "build.sh defines DC_MTL_SHIM_DIR: the folder of tests/support/metal_shim/metal_stdlib"
#endif

namespace mtldouble {
namespace {

const char* const kBuiltins[][2] = {
    {"thread_position_in_grid", "gid"},       {"thread_position_in_threadgroup", "lid"},
    {"threadgroup_position_in_grid", "grp"},  {"threads_per_grid", "gsz"},
    {"threads_per_threadgroup", "lsz"},
    // SIMD-groups of 32 by linear thread index (metal_stdlib's simd_* functions)
    {"thread_index_in_simdgroup", "sgl"},     {"threads_per_simdgroup", "sgw"},
    {"simdgroup_index_in_threadgroup", "sgi"},
};

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char ch : text) {
    if (ch == '(' || ch == '[' || ch == '<') ++depth;
    if (ch == ')' || ch == ']' || ch == '>') --depth;
    if (ch == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (cur.find_first_not_of(" \t\r\n") != std::string::npos) parts.push_back(cur);
  return parts;
}

// The generic part of the driver: one work-group at a time. Barrier kernels run each work-item
// as a fiber (ucontext) on the calling thread: threadgroup_barrier (dc_shim_barrier) switches
// back to the scheduler, which resumes the group only once every item has arrived, so barrier
// semantics are exact and no OS thread is made per work-item. A barrier that some items of a
// group never reach (they returned first) fails the dispatch instead of hanging.
const char* const kCommonGlue = R"GLUE(
#include <sys/mman.h>
#include <ucontext.h>
namespace dc_double {
template <int I, class... P> struct nth;
template <class H, class... P> struct nth<0, H, P...> { typedef H type; };
template <int I, class H, class... P> struct nth<I, H, P...> { typedef typename nth<I - 1, P...>::type type; };
template <class F> struct params;
template <class R, class... P> struct params<R (*)(P...)> {
  template <int I> using at = typename nth<I, P...>::type;
};
template <class P> struct conv { static P get(void* p) { return *static_cast<P*>(p); } };
template <class T> struct conv<T*> { static T* get(void* p) { return static_cast<T*>(p); } };
template <class T> struct conv<T&> { static T& get(void* p) { return *static_cast<T*>(p); } };
template <class P> struct bconv { static P get(metal::uint3 v) { return P(v); } };
template <> struct bconv<uint> { static uint get(metal::uint3 v) { return v.x; } };
template <> struct bconv<ushort> { static ushort get(metal::uint3 v) { return ushort(v.x); } };
struct Item { void** args; metal::uint3 gid, lid, grp, gsz, lsz, sgl, sgw, sgi; unsigned linear; };
typedef void (*CallFn)(const Item&);
enum { kReady = 0, kAtBarrier = 1, kDone = 2 };
struct Fiber { ucontext_t ctx; Item item; int state; };
struct Sched { ucontext_t main; Fiber* fibers; unsigned current, count; CallFn call; unsigned long long* slots; };
static thread_local Sched* sched = nullptr;
static const size_t kStack = 512 * 1024;
static void fiber_main() {
  Sched* s = sched;
  Fiber& f = s->fibers[s->current];
  s->call(f.item);
  f.state = kDone;  // uc_link returns to the scheduler
}
// Runs one group's `count` items as fibers; 0, or 2 when a barrier was not reached by all.
static int run_fibers(CallFn call, Fiber* fibers, unsigned count, char* stacks, unsigned long long* slots) {
  Sched s;
  s.fibers = fibers;
  s.call = call;
  s.current = 0;
  s.count = count;
  s.slots = slots;
  Sched* saved = sched;
  sched = &s;
  for (unsigned i = 0; i < count; ++i) {
    getcontext(&fibers[i].ctx);
    fibers[i].ctx.uc_stack.ss_sp = stacks + size_t(i) * kStack;
    fibers[i].ctx.uc_stack.ss_size = kStack;
    fibers[i].ctx.uc_link = &s.main;
    fibers[i].state = kReady;
    makecontext(&fibers[i].ctx, fiber_main, 0);
  }
  int rc = 0;
  for (;;) {
    for (unsigned i = 0; i < count; ++i) {
      if (fibers[i].state == kDone) continue;
      fibers[i].state = kReady;
      s.current = i;
      swapcontext(&s.main, &fibers[i].ctx);
    }
    unsigned done = 0, waiting = 0;
    for (unsigned i = 0; i < count; ++i) {
      done += fibers[i].state == kDone;
      waiting += fibers[i].state == kAtBarrier;
    }
    if (waiting == 0) break;  // every item finished
    if (done > 0) { rc = 2; break; }  // some wait at a barrier the others never reach
  }
  sched = saved;
  return rc;
}
static int run(CallFn call, void** args, const unsigned long long* gsz, const unsigned long long* lsz,
               int threaded, char* err, int errlen) {
  unsigned long long ng[3];
  for (int d = 0; d < 3; ++d) ng[d] = (gsz[d] + lsz[d] - 1) / lsz[d];
  metal::uint3 grid = metal::uint3((uint)gsz[0], (uint)gsz[1], (uint)gsz[2]);
  unsigned long long most = lsz[0] * lsz[1] * lsz[2];
  Fiber* fibers = new Fiber[most];
  unsigned long long* slots = new unsigned long long[most];  // the SIMD-group functions' exchange
  char* stacks = nullptr;
  if (threaded) {
    void* m = mmap(nullptr, size_t(most) * kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) { delete[] fibers; snprintf(err, errlen, "no memory for %llu fiber stacks", most); return 1; }
    stacks = static_cast<char*>(m);
  }
  int rc = 0;
  for (unsigned long long gz = 0; gz < ng[2] && rc == 0; ++gz)
    for (unsigned long long gy = 0; gy < ng[1] && rc == 0; ++gy)
      for (unsigned long long gx = 0; gx < ng[0] && rc == 0; ++gx) {
        unsigned long long g[3] = {gx, gy, gz}, sz[3];
        for (int d = 0; d < 3; ++d) { unsigned long long r = gsz[d] - g[d] * lsz[d]; sz[d] = r < lsz[d] ? r : lsz[d]; }
        unsigned count = unsigned(sz[0] * sz[1] * sz[2]);
        unsigned n = 0;
        for (unsigned long long z = 0; z < sz[2]; ++z)
          for (unsigned long long y = 0; y < sz[1]; ++y)
            for (unsigned long long x = 0; x < sz[0]; ++x, ++n) {
              Item& it = fibers[n].item;
              it.args = args;
              it.lid = metal::uint3(uint(x), uint(y), uint(z));
              it.grp = metal::uint3(uint(gx), uint(gy), uint(gz));
              it.gid = metal::uint3(uint(gx * lsz[0] + x), uint(gy * lsz[1] + y), uint(gz * lsz[2] + z));
              it.gsz = grid;
              it.lsz = metal::uint3(uint(sz[0]), uint(sz[1]), uint(sz[2]));
              it.linear = n;  // x fastest
              it.sgl = metal::uint3(n % 32u, 0u, 0u);
              it.sgw = metal::uint3(32u, 0u, 0u);
              it.sgi = metal::uint3(n / 32u, 0u, 0u);
            }
        if (!threaded) {
          for (unsigned i = 0; i < count; ++i) call(fibers[i].item);
          continue;
        }
        if (run_fibers(call, fibers, count, stacks, slots) != 0) {
          snprintf(err, errlen, "threadgroup (%llu, %llu, %llu): not every thread reached threadgroup_barrier() "
                   "(a barrier in non-uniform control flow)", gx, gy, gz);
          rc = 2;
        }
      }
  if (stacks) munmap(stacks, size_t(most) * kStack);
  delete[] fibers;
  delete[] slots;
  return rc;
}
}  // namespace dc_double
extern "C" void dc_shim_barrier(void) {
  dc_double::Sched* s = dc_double::sched;
  if (!s) return;  // not a fiber: a kernel without barriers in its source never gets here
  dc_double::Fiber& f = s->fibers[s->current];
  f.state = dc_double::kAtBarrier;
  swapcontext(&f.ctx, &s->main);
}
extern "C" unsigned dc_shim_linear_id(void) {
  dc_double::Sched* s = dc_double::sched;
  return s ? s->fibers[s->current].item.linear : 0u;
}
extern "C" unsigned dc_shim_group_items(void) { return dc_double::sched ? dc_double::sched->count : 1u; }
extern "C" unsigned long long* dc_shim_slots(void) {
  static unsigned long long single[1];  // not a fiber: a group of one
  return dc_double::sched ? dc_double::sched->slots : single;
}
)GLUE";

// `threadgroup T name[N];` → `static T name[N];`: one copy for the group (groups run one at a time).
std::string threadgroup_arrays_static(const std::string& msl) {
  static const std::regex re(R"(\bthreadgroup\b(?=\s+[\w:<>]+\s+\w+\s*\[))");
  return std::regex_replace(msl, re, "static");
}

std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// FNV-1a over two seeds: a cache name, not a security boundary.
std::string content_key(const std::string& text) {
  uint64_t a = 1469598103934665603ull, b = 1099511628211ull * 31u;
  for (unsigned char c : text) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
  }
  return hex64(a) + hex64(b);
}

std::string compiler() {
  if (const char* c = getenv("DOTCOMPUTE_SHIM_CXX"); c && *c) return c;
  return access("/usr/bin/clang++", X_OK) == 0 ? "/usr/bin/clang++" : "c++";
}

std::string cache_dir() {
  std::string dir;
  if (const char* d = getenv("DOTCOMPUTE_SHIM_CACHE"); d && *d) {
    dir = d;
  } else {
    const char* tmp = getenv("TMPDIR");
    dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/dotcompute-metal-double-" + std::to_string(getuid());
  }
  mkdir(dir.c_str(), 0700);
  return dir;
}

// Runs `cmd` through the shell; returns its exit status and its combined output.
int run_command(const std::string& cmd, std::string* output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    *output = "popen failed";
    return -1;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

bool parse_kernels(const std::string& msl, std::vector<KernelDecl>* out, std::string* error) {
  static const std::regex head(R"(\bkernel\s+void\s+(\w+)\s*\()");
  static const std::regex attr(R"(\[\[\s*(\w+)\s*(?:\(\s*(\d+)\s*\))?\s*\]\])");
  bool threaded = msl.find("threadgroup_barrier") != std::string::npos ||
                  msl.find("simdgroup_barrier") != std::string::npos || msl.find("simd_") != std::string::npos;
  for (auto it = std::sregex_iterator(msl.begin(), msl.end(), head); it != std::sregex_iterator(); ++it) {
    KernelDecl k;
    k.name = (*it)[1];
    k.threaded = threaded;
    size_t j = static_cast<size_t>(it->position() + it->length());
    int depth = 1;
    size_t start = j;
    while (depth > 0 && j < msl.size()) {
      if (msl[j] == '(') ++depth;
      if (msl[j] == ')') --depth;
      ++j;
    }
    std::string plist = msl.substr(start, j - 1 - start);
    std::string calls;
    int pos = 0;
    for (const std::string& p : split_top_level(plist)) {
      std::smatch m;
      if (!std::regex_search(p, m, attr)) {
        *error = "kernel " + k.name + ": parameter without an attribute: " + p;
        return false;
      }
      std::string kind = m[1];
      std::string at = "params<F>::at<" + std::to_string(pos) + ">";
      if (!calls.empty()) calls += ", ";
      if (kind == "buffer") {
        int index = std::stoi(m[2]);
        k.buffer_slots = std::max(k.buffer_slots, index + 1);
        calls += "conv<" + at + ">::get(it.args[" + std::to_string(index) + "])";
      } else {
        const char* field = nullptr;
        for (auto& b : kBuiltins)
          if (kind == b[0]) field = b[1];
        if (field == nullptr) {
          *error = "kernel " + k.name + ": the Metal test double cannot bind [[" + kind + "]] parameters";
          return false;
        }
        calls += std::string("bconv<") + at + ">::get(it." + field + ")";
      }
      ++pos;
    }
    k.call_args = calls;
    out->push_back(k);
  }
  if (out->empty()) {
    *error = "no `kernel void NAME(...)` function in the source";
    return false;
  }
  return true;
}

std::string driver_source(const std::string& msl, const std::vector<KernelDecl>& kernels) {
  std::ostringstream s;
  s << "#include <pthread.h>\n#include <stdio.h>\n#include <metal_stdlib>\n#pragma GCC poison double\n";
  s << "#line 1 \"program_source\"\n" << threadgroup_arrays_static(msl) << "\n#line 1 \"double_driver\"\n";
  s << kCommonGlue;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string& n = kernels[i].name;
    s << "namespace dc_double {\nstatic void call_" << n << "(const Item& it) {\n  typedef decltype(&::" << n
      << ") F;\n  (void)sizeof(F);\n  ::" << n << "(" << kernels[i].call_args << ");\n}\n}\n";
    s << "extern \"C\" __attribute__((visibility(\"default\"))) int dc_run_" << n
      << "(void** a, const unsigned long long* g, const unsigned long long* l, int t, char* e, int n) {\n"
      << "  return dc_double::run(dc_double::call_" << n << ", a, g, l, t, e, n);\n}\n";
  }
  return s.str();
}

std::string compile_msl(const std::string& msl, std::vector<KernelDecl>* kernels, std::string* log) {
  std::vector<KernelDecl> parsed;
  if (!parse_kernels(msl, &parsed, log)) {
    *log = "program_source: error: " + *log;
    return "";
  }
  std::string src = driver_source(msl, parsed);
  std::string cxx = compiler();
  std::string shim = DC_MTL_SHIM_DIR;
  std::string flags = " -std=c++17 -O0 -ffp-contract=off -fPIC -shared -pthread -w -I'" + shim + "'";
  std::string header;
  {
    std::ifstream h(shim + "/metal_stdlib");
    std::stringstream ss;
    ss << h.rdbuf();
    header = ss.str();
  }
  std::string key = content_key(src + '\0' + cxx + flags + '\0' + header);
  std::string dir = cache_dir();
  std::string so = dir + "/" + key + ".so";
  *kernels = parsed;
  if (access(so.c_str(), R_OK) == 0) return so;
  std::string tag = std::to_string(getpid()) + "." + hex64(reinterpret_cast<uintptr_t>(&src));
  std::string cpp = dir + "/" + key + "." + tag + ".cpp", tmp = dir + "/" + key + "." + tag + ".so.tmp";
  {
    std::ofstream f(cpp);
    f << src;
  }
  std::string out;
  int rc = run_command("'" + cxx + "'" + flags + " -x c++ '" + cpp + "' -o '" + tmp + "'", &out);
  unlink(cpp.c_str());
  if (rc != 0) {
    unlink(tmp.c_str());
    *log = out.empty() ? "the host compiler failed (exit status " + std::to_string(rc) + ")" : out;
    return "";
  }
  if (rename(tmp.c_str(), so.c_str()) != 0) {  // atomic: a concurrent process never loads half a file
    unlink(tmp.c_str());
    *log = "cannot place " + so;
    return "";
  }
  return so;
}

}  // namespace mtldouble
