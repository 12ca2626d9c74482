// MSL → CPU shared object (see msl_runner.h): the signature parser, the private cache folder, the
// compiler call and the fault guard. The generated driver (the scheduler of work-items) is in
// msl_glue.inc, compiled into every kernel object.
#include "msl_runner.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#ifndef DC_MTL_SHIM_DIR
#error "the build defines DC_MTL_SHIM_DIR: the folder of tests/support/metal_shim/metal_stdlib"
#endif

// ------------------------------------------------------------------------------ fault guard
namespace {

thread_local sigjmp_buf* t_jump = nullptr;
thread_local int t_signal = 0;
thread_local void* t_address = nullptr;
struct sigaction g_previous[4];
const int kSignals[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

void forward(int sig, siginfo_t* info, void* context) {
  for (int i = 0; i < 4; ++i) {
    if (kSignals[i] != sig) continue;
    const struct sigaction& old = g_previous[i];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
      old.sa_sigaction(sig, info, context);
      return;
    }
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      old.sa_handler(sig);
      return;
    }
  }
  signal(sig, SIG_DFL);  // the default action, when the fault repeats on return
}

void on_fault(int sig, siginfo_t* info, void* context) {
  if (t_jump != nullptr) {
    t_signal = sig;
    t_address = info ? info->si_addr : nullptr;
    sigjmp_buf* jump = t_jump;
    t_jump = nullptr;
    siglongjmp(*jump, 1);
  }
  forward(sig, info, context);  // not inside a kernel: whoever handled it before
}

void guard_enter(sigjmp_buf* jump) {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
  });
  // A stack overflow faults with no stack left: the handler runs on its own, one per thread.
  struct AltStack {
    std::vector<char> bytes;
    AltStack() : bytes(64 * 1024) {
      stack_t ss;
      memset(&ss, 0, sizeof ss);
      ss.ss_sp = bytes.data();
      ss.ss_size = bytes.size();
      sigaltstack(&ss, nullptr);
    }
    ~AltStack() {
      stack_t ss;
      memset(&ss, 0, sizeof ss);
      ss.ss_flags = SS_DISABLE;
      sigaltstack(&ss, nullptr);
    }
  };
  thread_local AltStack alt;
  (void)alt;
  t_signal = 0;
  t_jump = jump;
}

void guard_leave(void) { t_jump = nullptr; }

void guard_describe(char* out, int n) {
  const char* what = t_signal == SIGFPE   ? "an arithmetic fault (integer division by zero?)"
                     : t_signal == SIGILL ? "an illegal instruction"
                                          : "an illegal memory access (out of bounds, or a stack overflow)";
  snprintf(out, size_t(n), "%s at address %p (signal %d)", what, t_address, t_signal);
}

const DcMslHost kHost = {1, guard_enter, guard_leave, guard_describe};

}  // namespace

namespace mslrun {
std::string cache_dir(std::string* error);
}

extern "C" __attribute__((visibility("default"))) const DcMslHost* dc_msl_host(void) { return &kHost; }

namespace mslrun {
namespace {

#include "msl_glue.inc"  // kGlue: the generated driver's fixed part

struct Builtin {
  const char* attr;
  const char* expr;  // a metal::uint3 from the driver's Item `it`
};
const Builtin kBuiltins[] = {
    {"thread_position_in_grid", "it.gid"},
    {"thread_position_in_threadgroup", "it.lid"},
    {"threadgroup_position_in_grid", "it.grp"},
    {"threads_per_grid", "it.gsz"},
    {"grid_size", "it.gsz"},
    {"grid_origin", "U3(0u)"},
    {"threads_per_threadgroup", "it.lsz"},
    {"dispatch_threads_per_threadgroup", "it.dlsz"},
    {"threadgroups_per_grid", "it.ngrp"},
    {"thread_index_in_threadgroup", "U3(it.linear)"},
    {"thread_index_in_simdgroup", "U3(it.linear % 32u)"},
    {"simdgroup_index_in_threadgroup", "U3(it.linear / 32u)"},
    {"threads_per_simdgroup", "U3(32u)"},
    {"thread_execution_width", "U3(32u)"},
    {"simdgroups_per_threadgroup", "U3((it.count + 31u) / 32u)"},
    {"dispatch_simdgroups_per_threadgroup", "U3((it.dcount + 31u) / 32u)"},
    {"thread_index_in_quadgroup", "U3(it.linear % 4u)"},
    {"quadgroup_index_in_threadgroup", "U3(it.linear / 4u)"},
    {"quadgroups_per_threadgroup", "U3((it.count + 3u) / 4u)"},
    {"dispatch_quadgroups_per_threadgroup", "U3((it.dcount + 3u) / 4u)"},
};

// Comments blanked out (same length, newlines kept) so the parser sees only code.
std::string strip_comments(const std::string& s) {
  std::string r = s;
  size_t i = 0;
  while (i < r.size()) {
    if (r[i] == '"') {  // a string literal (host_name("...")): skip it whole
      for (++i; i < r.size() && r[i] != '"'; ++i)
        if (r[i] == '\\') ++i;
      ++i;
    } else if (r.compare(i, 2, "//") == 0) {
      while (i < r.size() && r[i] != '\n') r[i++] = ' ';
    } else if (r.compare(i, 2, "/*") == 0) {
      size_t end = r.find("*/", i + 2);
      end = end == std::string::npos ? r.size() : end + 2;
      for (; i < end; ++i)
        if (r[i] != '\n') r[i] = ' ';
    } else {
      ++i;
    }
  }
  return r;
}

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

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool is_word(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The index just past the bracket matching the one at `i` ('(' / '<' / '['), or npos.
size_t match_close(const std::string& s, size_t i) {
  char open = s[i], close = open == '(' ? ')' : open == '<' ? '>' : ']';
  int depth = 0;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] == open) ++depth;
    if (s[j] == close && --depth == 0) return j + 1;
  }
  return std::string::npos;
}

size_t skip_space(const std::string& s, size_t i) {
  while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// Parses one parameter list into `k`; false with `error` set.
bool parse_params(const std::string& plist, KernelDecl* k, std::string* error) {
  static const std::regex attr_re(R"(\[\[\s*(\w+)\s*(?:\(\s*(\d+)\s*\))?\s*\]\])");
  static const std::regex name_re(R"(\b\w+\s*$)");
  static const std::regex tg_word(R"(\bthreadgroup\b)");
  static const std::regex refused(R"(\b(texture\w*|sampler|depth\w*|array<|acceleration_structure\w*|visible_function_table|intersection_function_table|indirect_command_buffer|imageblock)\b)");
  std::vector<Param> params;
  std::set<int> used_buffers, used_groups;
  int pos = 0;
  for (const std::string& raw : split_top_level(plist)) {
    Param p;
    p.position = pos++;
    std::string text = raw, kind;
    std::smatch m;
    int explicit_index = -1;
    while (std::regex_search(text, m, attr_re)) {  // the binding attribute; others are dropped
      std::string a = m[1];
      bool known = a == "buffer" || a == "threadgroup";
      for (const Builtin& b : kBuiltins) known = known || a == b.attr;
      if (known && kind.empty()) {
        kind = a;
        if (m[2].matched) explicit_index = std::stoi(m[2]);
      } else if (!known && a != "function_constant" && a != "raster_order_group") {
        *error = "kernel " + k->name + ": the Metal test double cannot bind [[" + a + "]] parameters (" +
                 trim(raw) + ")";
        return false;
      }
      text = m.prefix().str() + " " + m.suffix().str();
    }
    std::smatch nm;
    std::string stripped = trim(text);
    if (std::regex_search(stripped, nm, name_re)) p.name = trim(nm[0]);
    std::string decl = trim(std::regex_replace(stripped, name_re, ""));
    if (std::regex_search(decl, m, refused)) {
      *error = "kernel " + k->name + ": the Metal test double has no " + m[1].str() + " (" + trim(raw) + ")";
      return false;
    }
    p.type = decl;
    if (kind.empty()) kind = std::regex_search(decl, tg_word) ? "threadgroup" : "buffer";
    if (kind == "buffer" || kind == "threadgroup") {
      p.kind = kind;
      p.index = explicit_index;
      if (explicit_index >= 0) (kind == "buffer" ? used_buffers : used_groups).insert(explicit_index);
    } else {
      p.kind = "builtin";
      p.builtin = kind;
    }
    params.push_back(p);
  }
  // Metal gives the parameters without an index the lowest free ones, in declaration order.
  for (Param& p : params) {
    if (p.kind == "builtin" || p.index >= 0) continue;
    std::set<int>& used = p.kind == "buffer" ? used_buffers : used_groups;
    int i = 0;
    while (used.count(i)) ++i;
    p.index = i;
    used.insert(i);
  }
  for (const Param& p : params) {
    if (p.kind == "buffer") k->buffer_slots = std::max(k->buffer_slots, p.index + 1);
    if (p.kind == "threadgroup") k->threadgroup_slots = std::max(k->threadgroup_slots, p.index + 1);
  }
  if (k->threadgroup_slots > DC_MSL_MAX_THREADGROUP_ARGS) {
    *error = "kernel " + k->name + ": more than " + std::to_string(DC_MSL_MAX_THREADGROUP_ARGS) +
             " threadgroup parameters";
    return false;
  }
  k->params = params;
  return true;
}

std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// FNV-1a over two seeds: a cache name (the folder is private, so not a security boundary).
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

// The CUDA simulator's shim folder: its dcsim_check.h is the kernel checks' engine, shared.
std::string engine_dir() { return std::string(DC_MTL_SHIM_DIR) + "/../../../cuda/sim/shim"; }

// Every header of the shim folder (metal_stdlib, metal_compute, ...), name and text: a change to
// any of them is a new cache identity.
std::string shim_headers_text() {
  std::string dir = DC_MTL_SHIM_DIR, all;
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if ((n.rfind("metal_", 0) == 0 && n.find('.') == std::string::npos) || n == "msl_launch.h" || n == "msl_check.h") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    std::ifstream h(dir + "/" + n);
    std::stringstream ss;
    ss << h.rdbuf();
    all += n + '\0' + ss.str() + '\0';
  }
  return all;
}

// A folder this user owns, not a link, that nobody else may write or read.
bool private_dir_ok(const std::string& dir, std::string* error) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    *error = "cannot stat " + dir + ": " + strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0) {
    *error = dir + " is not a private folder of this user (it must be a directory, owned by uid " +
             std::to_string(getuid()) + ", mode 0700): refusing to load code from it";
    return false;
  }
  return true;
}

bool make_dirs(const std::string& path, mode_t mode) {
  size_t i = 1;
  while (i != std::string::npos) {
    i = path.find('/', i + 1);
    std::string part = path.substr(0, i);
    if (mkdir(part.c_str(), mode) != 0 && errno != EEXIST) return false;
  }
  return true;
}

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

// `threadgroup T name[N]...;` → a reference into the running threadgroup's memory (per dispatch,
// per threadgroup, poisoned at the group's start), keyed by the declaration's site number.
std::string threadgroup_variables(const std::string& msl, const std::string& code) {
  static const std::regex re(
      R"(\bthreadgroup\s+((?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^;<>]*>)?)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*);)");
  std::string out;
  size_t last = 0;
  int site = 0;
  // matched on the comment-free text, replaced in the original at the same offsets
  for (auto it = std::sregex_iterator(code.begin(), code.end(), re); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    size_t at = static_cast<size_t>(m.position());
    out += msl.substr(last, at - last);
    std::string dims = m[3];
    dims.erase(std::remove_if(dims.begin(), dims.end(), [](char c) { return isspace(static_cast<unsigned char>(c)); }),
               dims.end());
    std::string text = m[0];
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    out += "auto& " + m[2].str() + " = *dc_shim_tg_get<" + m[1].str() + dims + ">(" + std::to_string(site++) + ");" +
           std::string(lines, '\n');
    last = at + static_cast<size_t>(m.length());
  }
  return out + msl.substr(last);
}

}  // namespace

std::vector<std::string> threadgroup_sites(const std::string& msl) {
  static const std::regex re(
      R"(\bthreadgroup\s+((?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^;<>]*>)?)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*);)");
  const std::string code = strip_comments(msl);
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[2].str());
  return out;
}

namespace {

// The source with its own macros expanded (MLX instantiates its templates through macros), the
// Metal headers standing in as empty files; the source as it is when that fails (an include of a
// header that is not here: the compile then reports it).
std::string preprocess(const std::string& msl) {
  // only sources with macros or conditionals need it (a compiler run each time otherwise)
  static const std::regex directives(R"((^|\n)[ \t]*#[ \t]*(define|if|ifdef|ifndef)\b)");
  if (!std::regex_search(msl, directives)) return msl;
  std::string error;
  std::string dir = cache_dir(&error);
  if (dir.empty()) return msl;
  std::string inc = dir + "/preprocess-include";
  mkdir(inc.c_str(), 0700);
  static const char* const kHeaders[] = {"metal_stdlib", "metal_compute", "metal_simdgroup", "metal_atomic",
                                         "metal_math", "metal_integer", "metal_common", "metal_geometric",
                                         "metal_relational", "simd/simd.h"};
  mkdir((inc + "/simd").c_str(), 0700);
  for (const char* h : kHeaders) {
    std::string path = inc + "/" + h;
    if (access(path.c_str(), R_OK) != 0) std::ofstream(path).flush();
  }
  std::string tag = std::to_string(getpid()) + "." + hex64(reinterpret_cast<uintptr_t>(&msl));
  std::string src = dir + "/pp." + tag + ".metal";
  {
    std::ofstream f(src);
    f << msl;
  }
  std::string out;
  int rc = run_command("'" + compiler() + "' -E -P -x c++ -std=c++17 -nostdinc -D__METAL_VERSION__=300 -D__METAL__=1 -I'" +
                           inc + "' -w '" + src + "'",
                       &out);
  unlink(src.c_str());
  return rc == 0 ? out : msl;
}

// The kernel's name: [[host_name("...")]] among its attributes ("a" "b", a stringized macro
// argument, is "ab"), else its C++ name.
std::string host_name(const std::string& attrs, const std::string& name) {
  static const std::regex host_re(R"RE(\[\[\s*host_name\s*\(\s*((?:"[^"]*"\s*)+)\)\s*\]\])RE");
  static const std::regex piece(R"RE("([^"]*)")RE");
  std::smatch nm;
  if (!std::regex_search(attrs, nm, host_re)) return name;
  std::string lits = nm[1], out;
  for (auto p = std::sregex_iterator(lits.begin(), lits.end(), piece); p != std::sregex_iterator(); ++p)
    out += (*p)[1].str();
  return out;
}

bool uses_fibers(const std::string& code) {
  static const std::regex re(R"(\b(threadgroup_barrier|simdgroup_barrier|simd_\w+|quad_\w+)\s*\()");
  return std::regex_search(code, re);
}

}  // namespace

bool parse_kernels(const std::string& msl, std::vector<KernelDecl>* out, std::string* error) {
  const std::string code = strip_comments(preprocess(msl));
  static const std::regex kw(R"((\[\[\s*kernel\s*\]\])|\bkernel\b)");
  const bool threaded = uses_fibers(code);
  std::map<std::string, std::string> definitions;  // template name → its parameter list
  struct Found { KernelDecl k; std::string plist; std::string typedef_name; };
  std::vector<Found> found;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kw); it != std::sregex_iterator(); ++it) {
    size_t at = static_cast<size_t>(it->position()), end = at + static_cast<size_t>(it->length());
    if (!(*it)[1].matched && at > 0 && (is_word(code[at - 1]) || code[at - 1] == '.')) continue;
    // what comes before: attributes, then `template` (an instance) or `template <...>` (a definition)
    size_t b = at;
    std::string before_attrs;
    for (;;) {
      while (b > 0 && isspace(static_cast<unsigned char>(code[b - 1]))) --b;
      if (b >= 2 && code.compare(b - 2, 2, "]]") == 0) {
        size_t open = code.rfind("[[", b - 2);
        if (open == std::string::npos) break;
        before_attrs = code.substr(open, b - open) + before_attrs;
        b = open;
        continue;
      }
      break;
    }
    bool definition = false;  // `template <...>` right before: a template, not a kernel yet
    if (b > 0 && code[b - 1] == '>') {
      int depth = 0;
      size_t k = b;
      while (k > 0) {
        --k;
        if (code[k] == '>') ++depth;
        if (code[k] == '<' && --depth == 0) break;
      }
      while (k > 0 && isspace(static_cast<unsigned char>(code[k - 1]))) --k;
      definition = k >= 8 && code.compare(k - 8, 8, "template") == 0;
    }
    bool instance = b >= 8 && code.compare(b - 8, 8, "template") == 0 && (b == 8 || !is_word(code[b - 9]));
    // after: attributes, the return type (void, or a typedef of the kernel's type), the name
    size_t j = end;
    std::string after_attrs;
    for (;;) {
      j = skip_space(code, j);
      if (code.compare(j, 2, "[[") == 0) {
        size_t close = code.find("]]", j);
        if (close == std::string::npos) break;
        after_attrs += code.substr(j, close + 2 - j);
        j = close + 2;
        continue;
      }
      break;
    }
    static const std::regex head(R"(^(\w+)\s+(\w+)\s*)");
    // MLX's instance form: `template [[host_name("x")]] [[kernel]] decltype(k<T>) k<T>;`
    static const std::regex decl_head(R"(^decltype\s*\(\s*(\w+)\s*<[^;]*?\)\s*(\w+)\s*)");
    std::smatch hm;
    std::string rest = code.substr(j, 400);
    if (instance && std::regex_search(rest, hm, decl_head) && hm[1] == hm[2]) {
      j += static_cast<size_t>(hm.length());
      std::string name = hm[2], targs;
      if (j < code.size() && code[j] == '<') {
        size_t close = match_close(code, j);
        if (close == std::string::npos) continue;
        targs = code.substr(j, close - j);
      }
      Found f;
      f.k.name = host_name(before_attrs + after_attrs, name);
      f.k.target = "::" + name + targs;
      f.k.threaded = threaded;
      f.typedef_name = name;  // parameters from the template's definition
      found.push_back(f);
      continue;
    }
    if (!std::regex_search(rest, hm, head)) continue;
    std::string ret = hm[1], name = hm[2];
    j += static_cast<size_t>(hm.length());
    std::string targs;
    if (j < code.size() && code[j] == '<') {
      size_t close = match_close(code, j);
      if (close == std::string::npos) continue;
      targs = code.substr(j, close - j);
      j = skip_space(code, close);
    }
    std::string plist;
    if (j < code.size() && code[j] == '(') {
      size_t close = match_close(code, j);
      if (close == std::string::npos) continue;
      plist = code.substr(j + 1, close - j - 2);
    } else if (!(instance && ret != "void")) {
      continue;
    }
    if (definition) {
      definitions[name] = plist;
      continue;
    }
    Found f;
    f.k.name = host_name(before_attrs + after_attrs, name);
    f.k.target = "::" + name + targs;
    f.k.threaded = threaded;
    f.plist = plist;
    if (instance && ret != "void") f.typedef_name = name;  // ggml: `kernel kernel_t kernel_x<...>;`
    if (instance && plist.empty() && ret == "void") f.typedef_name = name;
    found.push_back(f);
  }
  for (Found& f : found) {
    if (!f.typedef_name.empty()) {  // parameters from the template's definition
      auto d = definitions.find(f.typedef_name);
      if (d == definitions.end()) {
        *error = "kernel " + f.k.name + ": no template definition of " + f.typedef_name + " before it";
        return false;
      }
      f.plist = d->second;
    }
    if (!parse_params(f.plist, &f.k, error)) return false;
    f.k.symbol = "dc_run_" + std::to_string(out->size());
    out->push_back(f.k);
  }
  if (out->empty()) {
    *error = "no kernel function (`kernel void NAME(...)`, `[[kernel]] void NAME(...)` or a template instance "
             "with [[host_name]]) in the source";
    return false;
  }
  return true;
}

std::string driver_source(const std::string& msl, const std::vector<KernelDecl>& kernels, bool check) {
  std::ostringstream s;
  if (check)  // the checks' core and what it needs, before the shim's address-space macros exist
    s << "#define DC_MSL_CHECK 1\n#include <dlfcn.h>\n#include <sched.h>\n#include <vector>\n#include \"msl_check.h\"\n";
  s << "#include <setjmp.h>\n#include <stdio.h>\n#include <string.h>\n#include <sys/mman.h>\n#include <ucontext.h>\n"
    << "#include <unistd.h>\n#include \"msl_launch.h\"\n#include <metal_stdlib>\n#pragma GCC poison double\n";
  // C++ allows no attributes in an explicit instantiation: `template [[host_name("x")]] [[kernel]] void
  // k<float>(...)` loses them (the parser has read the names already)
  static const std::regex instance_attrs(R"(\btemplate\s*((?:\[\[[^\]]*\]\]\s*)+))");
  std::string body = std::regex_replace(threadgroup_variables(msl, strip_comments(msl)), instance_attrs, "template ");
  // `threadgroup` is an empty macro in the shim: [[threadgroup(1)]] would become [[(1)]]
  static const std::regex tg_attr(R"(\[\[\s*threadgroup\s*\()");
  body = std::regex_replace(body, tg_attr, "[[dc_threadgroup(");
  s << "#line 1 \"program_source\"\n" << body
    << "\n#line 1 \"double_driver\"\n";
  s << kGlue;
  for (const KernelDecl& k : kernels) {
    std::string calls;
    for (const Param& p : k.params) {
      std::string at = "params<F>::at<" + std::to_string(p.position) + ">";
      if (!calls.empty()) calls += ", ";
      if (p.kind == "buffer") {
        calls += "conv<" + at + ">::get(it.args[" + std::to_string(p.index) + "])";
      } else if (p.kind == "threadgroup") {
        calls += "conv<" + at + ">::get(it.group->tg[" + std::to_string(p.index) + "])";
      } else {
        for (const Builtin& b : kBuiltins)
          if (p.builtin == b.attr) calls += std::string("bconv<") + at + ">::get(" + b.expr + ")";
      }
    }
    // checked builds: never inlined into the (uninstrumented) scheduler, which would drop the kernel's
    // load/store tracing with it
    s << "namespace dc_double {\nstatic " << (check ? "__attribute__((noinline)) " : "") << "void call_" << k.symbol
      << "(const Item& it) {\n  typedef decltype(&"
      << k.target << ") F;\n  (void)sizeof(F);\n  " << k.target << "(" << calls << ");\n}\n";
    // the element size of each threadgroup parameter (a checked run's reports count elements)
    std::string elems;
    if (check) {
      std::vector<std::string> by_index(size_t(k.threadgroup_slots), "1ul");
      for (const Param& p : k.params)
        if (p.kind == "threadgroup")
          by_index[size_t(p.index)] = "sizeof(typename dc_pointee<params<decltype(&" + k.target + ")>::at<" +
                                      std::to_string(p.position) + ">>::type)";
      s << "static const unsigned long elems_" << k.symbol << "[] = {";
      for (const std::string& e : by_index) s << e << ", ";
      s << "0ul};\n";
      elems = "dc_double::elems_" + k.symbol;
    }
    s << "}\n";
    s << "extern \"C\" __attribute__((visibility(\"default\"))) int " << k.symbol
      << "(DcMslLaunch* L) {\n  return dc_double::run(dc_double::call_" << k.symbol << ", L, "
      << k.threadgroup_slots << ", " << (check ? elems : std::string("nullptr")) << ");\n}\n";
  }
  return s.str();
}

std::string cache_dir(std::string* error) {
  std::string dir;
  if (const char* d = getenv("DOTCOMPUTE_SHIM_CACHE"); d && *d) {
    dir = d;
  } else if (const char* k = getenv("DOTCOMPUTE_CACHE_DIR"); k && *k == '/') {
    dir = std::string(k) + "/metal-shim";  // beside the kernel cache, which only touches its *.dck files
  } else {
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    if (xdg && *xdg == '/') {
      dir = std::string(xdg) + "/dotcompute/metal-shim";
    } else if (home && *home == '/') {
      dir = std::string(home) + "/.cache/dotcompute/metal-shim";
    } else {
      *error = "no private folder for compiled MSL: set DOTCOMPUTE_SHIM_CACHE (or HOME)";
      return "";
    }
  }
  if (!make_dirs(dir, 0700)) {
    *error = "cannot create " + dir + ": " + strerror(errno);
    return "";
  }
  return private_dir_ok(dir, error) ? dir : "";
}

std::string compile_msl(const std::string& msl, std::vector<KernelDecl>* kernels, std::string* log, bool fast_math,
                        bool check) {
  std::vector<KernelDecl> parsed;
  if (!parse_kernels(msl, &parsed, log)) {
    *log = "program_source: error: " + *log;
    return "";
  }
  std::string src = driver_source(msl, parsed, check);
  std::string cxx = compiler();
  std::string shim = DC_MTL_SHIM_DIR;
  // -fstack-clash-protection: a large per-thread array touches every page of its frame, so it
  // meets the stack's guard page (a fault, reported) instead of jumping over it into other memory
  // Fast math: -O1 (nothing is contracted at -O0) for the host's FMA (-march=native), and -ffast-math's
  // parts rather than the flag, which would link crtfastmath.o's flush-to-zero into the process.
  std::string math = fast_math ? "-O1 -march=native -ffp-contract=fast -fno-math-errno -fno-trapping-math "
                                 "-fno-signed-zeros -fassociative-math -freciprocal-math -ffinite-math-only"
                               : "-O0 -ffp-contract=off";
  if (check) {  // -O1: inlined shim functions keep their call's MSL line; no contraction either way
    math = fast_math ? math : "-O1 -ffp-contract=off";
    math += " -g -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores -I'" + engine_dir() + "'";
  }
  std::string flags = " -std=c++17 " + math + " -fPIC -shared -fvisibility=hidden "
                      "-fstack-clash-protection -w -I'" + shim + "'";
  std::string headers = shim_headers_text();
  if (check) {  // the checks' engine, which msl_check.h includes
    std::ifstream engine(engine_dir() + "/dcsim_check.h");
    std::stringstream es;
    es << engine.rdbuf();
    headers += "dcsim_check.h" + std::string(1, '\0') + es.str();
  }
  std::string key = content_key(src + '\0' + cxx + flags + '\0' + headers);
  std::string dir = cache_dir(log);
  if (dir.empty()) return "";
  std::string so = dir + "/" + key + ".so";
  *kernels = parsed;
  struct stat st;
  if (lstat(so.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 022) == 0) return so;
    *log = so + " is not this user's private file: refusing to load it";
    return "";
  }
  std::string tag = std::to_string(getpid()) + "." + hex64(reinterpret_cast<uintptr_t>(&src));
  std::string cpp = dir + "/" + key + "." + tag + ".cpp", tmp = dir + "/" + key + "." + tag + ".so.tmp";
  {
    std::ofstream f(cpp);
    f << src;
  }
  std::string out;
  int rc;
  if (check) {
    // SanitizerCoverage at compile time only: at link time the driver would add its runtime, and the
    // object defines the callbacks itself
    std::string o = dir + "/" + key + "." + tag + ".o";
    std::string cflags = flags;
    cflags.replace(cflags.find(" -shared"), 8, "");
    rc = run_command("'" + cxx + "'" + cflags + " -c -x c++ '" + cpp + "' -o '" + o + "'", &out);
    if (rc == 0) rc = run_command("'" + cxx + "' -shared -fPIC '" + o + "' -o '" + tmp + "'", &out);
    unlink(o.c_str());
  } else {
    rc = run_command("'" + cxx + "'" + flags + " -x c++ '" + cpp + "' -o '" + tmp + "'", &out);
  }
  unlink(cpp.c_str());
  if (rc != 0) {
    unlink(tmp.c_str());
    *log = out.empty() ? "the host compiler failed (exit status " + std::to_string(rc) + ")" : out;
    return "";
  }
  chmod(tmp.c_str(), 0700);
  if (rename(tmp.c_str(), so.c_str()) != 0) {  // atomic: a concurrent process never loads half a file
    unlink(tmp.c_str());
    *log = "cannot place " + so;
    return "";
  }
  return so;
}

}  // namespace mslrun

// ---------------------------------------------------------------- C entry points for runner.py
namespace {

// The listing the compile entry points return (see below); `named` adds each parameter's name and
// the "site" lines of dc_msl_compile2, which dc_msl_compile's older readers do not expect.
char* compile_listing(const char* msl, bool fast_math, bool instrumented, bool named) {
  std::vector<mslrun::KernelDecl> kernels;
  std::string log, text, src = msl ? msl : "";
  std::string so = mslrun::compile_msl(src, &kernels, &log, fast_math, instrumented);
  if (so.empty()) {
    text = "ERROR\n" + log;
  } else {
    text = "OK\n" + so + "\n";
    for (const auto& k : kernels) {
      text += "kernel\t" + k.name + "\t" + k.symbol + "\t" + (k.threaded ? "1" : "0") + "\n";
      for (const auto& p : k.params) {
        text += "param\t" + std::to_string(p.position) + "\t" + p.kind + "\t" + std::to_string(p.index) + "\t" +
                (p.builtin.empty() ? "-" : p.builtin) + "\t" + p.type;
        if (named) text += "\t" + (p.name.empty() ? std::string("-") : p.name);
        text += "\n";
      }
    }
    if (named) {
      std::vector<std::string> sites = mslrun::threadgroup_sites(src);
      for (size_t i = 0; i < sites.size(); ++i) text += "site\t" + std::to_string(i) + "\t" + sites[i] + "\n";
    }
  }
  char* r = static_cast<char*>(malloc(text.size() + 1));
  memcpy(r, text.c_str(), text.size() + 1);
  return r;
}

}  // namespace

// dc_msl_compile: "OK\n<object path>\n" then per kernel "kernel\t<name>\t<symbol>\t<threaded>" and
// per parameter "param\t<pos>\t<kind>\t<index>\t<builtin>\t<type>"; or "ERROR\n<log>". Free with
// dc_msl_free.
extern "C" __attribute__((visibility("default"))) char* dc_msl_compile(const char* msl) {
  return compile_listing(msl, false, false, false);
}

// dc_msl_compile2: as dc_msl_compile, for `flags` (1: fast math, 2: instrumented for the kernel checks);
// each parameter line ends with "\t<name>", and "site\t<n>\t<name>" lines name the threadgroup variables.
extern "C" __attribute__((visibility("default"))) char* dc_msl_compile2(const char* msl, int flags) {
  return compile_listing(msl, (flags & 1) != 0, (flags & 2) != 0, true);
}

extern "C" __attribute__((visibility("default"))) void dc_msl_free(char* p) { free(p); }
