// Building a simulator image: the kernel's CUDA C++ is adapted in a few places
// (dynamic shared memory, kernel registration), compiled for the host with the
// shim header by the host C++ compiler, and packed with the source and the
// device code into one image.
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "host_build.hpp"
#include "image.hpp"
#include "sim.hpp"
#include "sim_api.h"


namespace dcsim_lib {

namespace {

// ---- the host compiler: DOTCOMPUTE_CXX, else CXX, else c++, g++, clang++ on PATH ----

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string full = (dir.empty() ? "." : dir) + "/" + name;
    if (access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

std::vector<std::string> split(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> host_compiler(std::string& error) {
  for (const char* var : {"DOTCOMPUTE_CXX", "CXX"}) {
    const char* v = std::getenv(var);
    if (!v || !*v) continue;
    auto words = split(v);
    if (!words.empty()) {
      const std::string exe = find_on_path(words[0]);
      if (!exe.empty()) {
        words[0] = exe;
        return words;
      }
    }
    if (std::string(var) == "DOTCOMPUTE_CXX") {
      error = std::string("DOTCOMPUTE_CXX='") + v + "' is not an executable";
      return {};
    }
  }
  for (const char* name : {"c++", "g++", "clang++"}) {
    const std::string exe = find_on_path(name);
    if (!exe.empty()) return {exe};
  }
  error = "the CUDA simulator needs a host C++ compiler to run kernels (looked for $DOTCOMPUTE_CXX, $CXX, c++, "
          "g++ and clang++ on PATH); install one (e.g. apt-get install g++) or set DOTCOMPUTE_CXX";
  return {};
}

// A trace build (the kernel checks of raw kernels, dcsim_trace.h) needs clang's SanitizerCoverage
// load/store callbacks, which GCC does not have: DOTCOMPUTE_CXX or CXX when that is clang, else
// clang++ (or a versioned clang++-N) on PATH.
std::string trace_compiler(const std::vector<std::string>& cxx, const std::string& version_line) {
  if (!cxx.empty() && version_line.find("clang") != std::string::npos) return cxx[0];
  for (const char* name : {"clang++", "clang++-19", "clang++-18", "clang++-17", "clang++-16", "clang++-15", "clang++-14"}) {
    const std::string exe = find_on_path(name);
    if (!exe.empty()) return exe;
  }
  return "";
}

// The line the host puts in a kernel's source to ask for a trace build (a comment to NVRTC, and a
// different source, hence a different cache entry, from the plain build).
const char kTraceMarker[] = "//!dotcompute-sim-trace";

// DOTCOMPUTE_CUDA_SIM_COUNTERS=1 (read once): every kernel is a trace build with the GPU-model
// counters' observer (shim/dcsim_counters.h), under an identity of its own (other cache entries).
bool counters_mode() {
  static const bool on = [] {  // on for 1/true/yes/on, as DOTCOMPUTE_CUDA_SIM (cuda/driver.cpp)
    const char* v = std::getenv("DOTCOMPUTE_CUDA_SIM_COUNTERS");
    for (const char* yes : {"1", "true", "yes", "on"})
      if (v && strcasecmp(v, yes) == 0) return true;
    return false;
  }();
  return on;
}

std::string& trace_compiler_cache() {
  static std::string exe;
  return exe;
}

const std::vector<std::string> kFlags = {"-std=c++17", "-O2", "-fPIC", "-shared", "-pthread",
                                         "-fno-strict-aliasing", "-fno-math-errno", "-w"};




// ---- source adaptation ----

// A copy of `src` with comments, string and character literals blanked (same length and lines),
// so that scanning for declarations never matches inside them.
std::string blank_comments(const std::string& src) {
  std::string s = src;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') s[i++] = ' ';
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? s.size() : end + 2;
      for (; i < stop; ++i)
        if (s[i] != '\n') s[i] = ' ';
    } else if (s[i] == '"' || s[i] == '\'') {
      const char q = s[i++];
      while (i < s.size() && s[i] != q && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size()) s[i++] = ' ';
        s[i++] = ' ';
      }
      ++i;
    } else {
      ++i;
    }
  }
  return s;
}

struct Adapted {
  std::string prelude;   // before the source: file-scope dynamic shared memory macros
  std::string source;    // the source with function-scope dynamic shared memory rewritten
  std::string epilogue;  // registration of each kernel
  bool fibers = false;
};

// The namespace path of each '{' nesting level ("" for extern "C" blocks, "?" for anything else).
std::vector<std::string> scopes_at(const std::string& scan, size_t pos) {
  std::vector<std::string> stack;
  static const std::regex ns(R"((namespace\s+(\w*)\s*|extern\s*"?C?"?\s*)$)");
  for (size_t i = 0; i < pos; ++i) {
    if (scan[i] == '{') {
      const size_t from = i > 200 ? i - 200 : 0;
      std::smatch m;
      const std::string before = scan.substr(from, i - from);
      // extern "C" blocks were blanked to `extern "  "`; both spellings count.
      static const std::regex ext(R"(extern\s*"\s*"\s*$)");
      static const std::regex name(R"(namespace\s+(\w*)\s*$)");
      if (std::regex_search(before, m, name))
        stack.push_back(m[1].str().empty() ? "" : m[1].str());
      else if (std::regex_search(before, ext))
        stack.push_back("");
      else
        stack.push_back("?");
    } else if (scan[i] == '}' && !stack.empty()) {
      stack.pop_back();
    }
  }
  (void)ns;
  return stack;
}

// The lines of preprocessor output `in` that come from `file` (by its line markers, `# 12 "file"`):
// the user's source with its macros expanded, without the headers it included.
std::string main_file_lines(std::istream& in, const std::string& file) {
  std::string out, line;
  bool mine = true;
  const std::string quoted = "\"" + file + "\"";
  while (std::getline(in, line)) {
    if (line.size() > 2 && line[0] == '#' && line[1] == ' ' && std::isdigit(static_cast<unsigned char>(line[2]))) {
      const size_t q = line.find('"');
      mine = q != std::string::npos && line.compare(q, quoted.size(), quoted) == 0;
      continue;
    }
    if (mine) out += line + "\n";
  }
  return out;
}

// True when `pos` lies on a preprocessor line (a #define's body included, over its continuations).
bool on_directive(const std::string& text, size_t pos) {
  size_t begin = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
  begin = begin == std::string::npos ? 0 : begin + 1;
  while (begin >= 2 && text[begin - 2] == '\\') {
    const size_t prev = text.rfind('\n', begin - 2);
    begin = prev == std::string::npos ? 0 : prev + 1;
  }
  const size_t first = text.find_first_not_of(" \t", begin);
  return first != std::string::npos && text[first] == '#';
}

// Whether the file-scope __shared__ variable `name` can become a macro (below): the name is not
// declared again (a local or parameter shadowing it: `float tile = ...`, `int* tile)`) nor used as a
// member (`x.tile`, `p->tile`), where the macro's expansion would not compile.
bool macro_safe(const std::string& scan, const std::string& name, size_t decl_begin, size_t decl_end) {
  const std::regex other(R"((?:[A-Za-z_]\w*[\s*&]+|\.\s*|->\s*|::\s*))" + name + R"(\b)");
  for (auto it = std::sregex_iterator(scan.begin(), scan.end(), other); it != std::sregex_iterator(); ++it) {
    const size_t at = static_cast<size_t>(it->position(0));
    if (at >= decl_begin && at < decl_end) continue;  // the declaration itself
    const std::string prefix = it->str(0).substr(0, it->str(0).size() - name.size());
    // `return tile[i]`, `sizeof tile`: keywords before the name are uses, not declarations
    static const std::regex keyword(R"(^(?:return|sizeof|case|else|do|throw|co_return)\b)");
    if (std::regex_search(prefix, keyword)) continue;
    return false;
  }
  return true;
}

// `__shared__ T name[N]...;` inside a function  ->  a reference into the block's shared window
// (dcsim_cuda.h, shared_var): poisoned for every block, bounded by a guard page. At file scope (or
// in an extern "C" block) the name becomes a macro for the same per-block lookup, so those are
// poisoned and guarded too. Declarations in a named namespace or a macro, with several declarators
// or an initialiser, and file-scope ones whose name is declared again or used as a member
// (macro_safe), keep the shim's `static thread_local` (one copy per OS thread, neither poisoned nor
// guarded).
std::string rewrite_static_shared(const std::string& src) {
  const std::string scan = blank_comments(src);
  static const std::regex decl(
      R"(((?:\b(?:static|volatile|const)\s+)*)__shared__\s+((?:__align__\s*\(\s*(\w+)\s*\)\s*)?)([^;={}()\[\]"#]*?)\s*\b([A-Za-z_]\w*)\s*((?:\[[^\[\];{}]*\]\s*)*);)");
  std::string out;
  size_t copied = 0;
  int n = 0;
  for (auto it = std::sregex_iterator(scan.begin(), scan.end(), decl); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const size_t pos = static_cast<size_t>(m.position(0));
    size_t w = pos;
    while (w > 0 && std::isspace(static_cast<unsigned char>(scan[w - 1]))) --w;
    if (w >= 6 && scan.compare(w - 6, 6, "extern") == 0) continue;
    if (on_directive(scan, pos)) continue;
    auto piece = [&](int g) {
      return src.substr(static_cast<size_t>(m.position(g)), static_cast<size_t>(m.length(g)));
    };
    const std::string type = piece(4);
    if (type.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    int angle = 0;
    bool several = false;
    for (char c : type) {
      angle += c == '<' ? 1 : (c == '>' ? -1 : 0);
      several = several || (c == ',' && angle == 0);
    }
    if (several) continue;
    int depth = 0;
    for (size_t i = 0; i < pos; ++i) depth += scan[i] == '{' ? 1 : (scan[i] == '}' ? -1 : 0);
    bool in_function = false, in_namespace = false;
    if (depth > 0)
      for (const auto& s : scopes_at(scan, pos)) {
        in_function = in_function || s == "?";
        in_namespace = in_namespace || (s != "" && s != "?");
      }
    const std::string qualifiers = std::regex_replace(piece(1), std::regex(R"(\bstatic\b)"), "");
    const std::string align = m.length(3) ? piece(3) : "16";
    const std::string whole = piece(0);
    if (!in_function) {
      if (in_namespace || !macro_safe(scan, piece(5), pos, pos + whole.size())) continue;
      const std::string id = std::to_string(n++);
      // the type and tag where the declaration was; the name a macro (on a line of its own, after
      // which #line puts the numbering back: assert's __LINE__ and compiler messages stay the user's)
      const size_t line = 1 + static_cast<size_t>(std::count(src.begin(), src.begin() + static_cast<long>(pos), '\n')) +
                          static_cast<size_t>(std::count(whole.begin(), whole.end(), '\n'));
      std::string declared = "using dcsim_shared_t" + id + " = " + qualifiers + " " + type + " " + piece(6) +
                             "; static char dcsim_shared_tag" + id + ";";
      std::replace(declared.begin(), declared.end(), '\n', ' ');
      out += src.substr(copied, pos - copied) + declared + "\n#define " + piece(5) +
             " (::dcsim::shared_var<dcsim_shared_t" + id + ", " + align + ">(&dcsim_shared_tag" + id + ", \"" +
             piece(5) + "\"))\n#line " + std::to_string(line) + " \"kernel.cu\"\n";
      copied = pos + whole.size();
      continue;
    }
    const std::string id = std::to_string(n++);
    std::string replacement = "using dcsim_shared_t" + id + " = " + qualifiers + " " + type + " " + piece(6) +
                              "; static char dcsim_shared_tag" + id + "; dcsim_shared_t" + id + "& " + piece(5) +
                              " = ::dcsim::shared_var<dcsim_shared_t" + id + ", " + align + ">(&dcsim_shared_tag" +
                              id + ", \"" + piece(5) + "\");";
    std::replace(replacement.begin(), replacement.end(), '\n', ' ');
    replacement += std::string(static_cast<size_t>(std::count(whole.begin(), whole.end(), '\n')), '\n');
    out += src.substr(copied, pos - copied) + replacement;
    copied = pos + whole.size();
  }
  out += src.substr(copied);
  return out;
}

// `kernels_in`: the text __global__ functions are looked for in -- the source itself, or, when macros
// define kernels, the source after the preprocessor (expanded_kernels).
bool adapt(const std::string& src, const std::string& kernels_in, Adapted& out, std::string& error) {
  const std::string scan = blank_comments(src);
  // cooperative groups synchronise and shuffle through the same intrinsics (cooperative_groups.h)
  static const std::regex barrier(
      R"(__syncthreads|__syncwarp|__shfl|_sync\s*\(|__activemask|bar\.sync|this_thread_block|tiled_partition|coalesced_threads)");
  out.fibers = std::regex_search(scan, barrier);

  // extern __shared__ T name[];  ->  a pointer to this block's dynamic shared memory. nvcc takes the
  // qualifiers in any order (extern T __shared__ x[], extern volatile __shared__ T x[], __align__(n)
  // before or after): the words before __shared__ (group 1) and after it (group 2) make the type.
  std::string text = src;
  static const std::regex dyn(
      R"re(extern\s+((?:__align__\s*\(\s*\w+\s*\)|[^;\[\]{}()"])*?)\b__shared__\b\s*([^;\[\]]*?)\s*\b(\w+)\s*\[\s*\]\s*;)re");
  static const std::regex align(R"(__align__\s*\(\s*\w+\s*\))");
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<std::string> replacements;
  for (auto it = std::sregex_iterator(scan.begin(), scan.end(), dyn); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const size_t pos = static_cast<size_t>(m.position(0));
    const std::string type = std::regex_replace(src.substr(static_cast<size_t>(m.position(1)), m.length(1)) + " " +
                                                    src.substr(static_cast<size_t>(m.position(2)), m.length(2)),
                                                align, "");
    const std::string name = m[3].str();
    int depth = 0;
    for (size_t i = 0; i < pos; ++i) depth += scan[i] == '{' ? 1 : (scan[i] == '}' ? -1 : 0);
    const bool file_scope = depth == 0 || [&] {
      for (const auto& s : scopes_at(scan, pos))
        if (s == "?") return false;
      return true;
    }();
    if (file_scope) {
      out.prelude += "#define " + name + " (::dcsim::dynamic_shared<" + type + ">())\n";
      replacements.push_back("");
    } else {
      replacements.push_back(type + "* const " + name + " = ::dcsim::dynamic_shared<" + type + ">();");
    }
    spans.emplace_back(pos, static_cast<size_t>(m.length(0)));
  }
  for (size_t i = spans.size(); i-- > 0;) text.replace(spans[i].first, spans[i].second, replacements[i]);
  out.source = rewrite_static_shared(text);

  // Every non-template __global__ function is registered under its (qualified) name; the exported
  // symbol (found with dladdr when the module loads) is what cuModuleGetFunction matches.
  const std::string& ksrc = kernels_in;
  const std::string kscan = &kernels_in == &src ? scan : blank_comments(kernels_in);
  static const std::regex global(R"(\b__global__\b)");
  static const std::regex bounds(R"(__launch_bounds__\s*\([^()]*\))");
  struct Kernel {
    std::string qualified, name, params;
  };
  std::vector<Kernel> kernels;
  for (auto it = std::sregex_iterator(kscan.begin(), kscan.end(), global); it != std::sregex_iterator(); ++it) {
    const size_t pos = static_cast<size_t>(it->position(0));
    // template <...> __global__: instantiations have no name we could take the address of.
    size_t start = pos;
    while (start > 0 && kscan[start - 1] != ';' && kscan[start - 1] != '}' && kscan[start - 1] != '{') --start;
    if (std::regex_search(kscan.substr(start, pos - start), std::regex(R"(\btemplate\b)"))) continue;
    const size_t paren_search_end = std::min(kscan.size(), pos + 2000);
    // __launch_bounds__(...) blanked in place (same length: offsets into `after` are offsets into src)
    std::string after = kscan.substr(pos + 10, paren_search_end - pos - 10);
    for (std::smatch b; std::regex_search(after, b, bounds);)
      after.replace(static_cast<size_t>(b.position(0)), static_cast<size_t>(b.length(0)),
                    static_cast<size_t>(b.length(0)), ' ');
    const size_t paren = after.find('(');
    if (paren == std::string::npos) continue;
    size_t e = paren;
    while (e > 0 && std::isspace(static_cast<unsigned char>(after[e - 1]))) --e;
    size_t b = e;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(after[b - 1])) || after[b - 1] == '_')) --b;
    const std::string name = after.substr(b, e - b);
    if (name.empty()) continue;
    std::string qualified;
    bool reachable = true;
    for (const auto& s : scopes_at(kscan, pos)) {
      if (s == "?") reachable = false;
      if (!s.empty() && s != "?") qualified += s + "::";
    }
    if (!reachable) continue;
    qualified += name;
    // The parameter list as written (names included, which a function type allows), to tell overloads
    // apart: `&k` of an overloaded kernel is ambiguous, `static_cast<void (*)(float* x)>(&k)` is not.
    // Matched in the whole (comment-free) text, not in `after`: a generated kernel's parameter list
    // can be far longer than the window the name is looked for in.
    const size_t open_at = pos + 10 + paren;  // `after` starts 10 characters past __global__
    int depth = 0;
    size_t close = open_at;
    for (; close < kscan.size(); ++close) {
      if (kscan[close] == '(') ++depth;
      if (kscan[close] == ')' && --depth == 0) break;
    }
    if (close >= kscan.size()) continue;
    kernels.push_back({qualified, name, ksrc.substr(open_at + 1, close - open_at - 1)});
  }
  // The same parameter list with whitespace and parameter names ignored is one kernel (a prototype and
  // its definition); differing lists of one name are overloads, each registered through a cast.
  auto shape = [](const std::string& params) {
    std::string plain = std::regex_replace(params, std::regex(R"(\b\w+\s*(,|$|\[))"), "$1");
    plain.erase(std::remove_if(plain.begin(), plain.end(), [](unsigned char c) { return std::isspace(c); }),
                plain.end());
    return plain;
  };
  // Under #if the alternatives may be one kernel written twice, only one of which survives the
  // preprocessor: a cast to the other would not compile, so such a source keeps the plain `&name`.
  static const std::regex conditional(R"((^|\n)[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else)\b)");
  const bool has_conditionals = std::regex_search(kscan, conditional);
  std::map<std::string, std::set<std::string>> shapes;
  for (const auto& k : kernels) shapes[k.qualified].insert(has_conditionals ? std::string() : shape(k.params));
  std::set<std::string> seen;
  int n = 0;
  for (const auto& k : kernels) {
    const bool overloaded = shapes[k.qualified].size() > 1;
    if (!seen.insert(overloaded ? k.qualified + "(" + shape(k.params) + ")" : k.qualified).second) continue;
    const std::string address =
        overloaded ? "static_cast<void (*)(" + k.params + ")>(&" + k.qualified + ")" : "&" + k.qualified;
    out.epilogue += "static ::dcsim::Registrar dcsim_registrar_" + std::to_string(n++) + "(" + address + ", \"" +
                    k.name + "\");\n";
  }
  // Template kernels are instantiated for the name expressions the plugin was asked for (the same
  // lines NVRTC got as name expressions): `&MatrixMul<32>` names one specialization, which the host
  // compiler mangles as NVRTC does, so the lowered name finds it.
  const std::string marker = "//!dotcompute-name-expression ";
  for (size_t at = src.find(marker); at != std::string::npos; at = src.find(marker, at + 1)) {
    if (at != 0 && src[at - 1] != '\n') continue;
    const size_t begin = at + marker.size();
    size_t end = src.find('\n', begin);
    if (end == std::string::npos) end = src.size();
    std::string expr = src.substr(begin, end - begin);
    while (!expr.empty() && std::isspace(static_cast<unsigned char>(expr.back()))) expr.pop_back();
    if (expr.empty() || expr.find('"') != std::string::npos || expr.find('\\') != std::string::npos) continue;
    out.epilogue += "static ::dcsim::Registrar dcsim_registrar_" + std::to_string(n++) + "(&" + expr + ", \"" +
                    expr + "\");\n";
  }
  (void)error;
  return true;
}


std::string& identity_cache() {
  static std::string id;
  return id;
}

// Whether the host compiler is GCC (its --version line does not name clang), found with the identity.
bool& host_is_gcc() {
  static bool gcc = false;
  return gcc;
}

// The flags a GCC build of a kernel adds (the trace build is clang's). -fno-gnu-unique: GCC makes
// static variables of inline functions "unique" symbols, which the dynamic linker merges across
// every loaded object even under RTLD_LOCAL (and which make an object impossible to unload): two
// kernels' __shared__ variables in inline device functions would then be one. On x86-64, TLS
// descriptors. A kernel reaches its thread's simulated state (threadIdx, the fiber,
// the block: inline thread_locals of the shim) through the dynamic TLS model of a shared object,
// one __tls_get_addr call per access by default (10.6 % of a radix-sort test's samples in perf);
// with descriptors the common case is an offset load (that test: 3.87-4.37 s instead of 4.52-4.92).
std::vector<std::string> gcc_kernel_flags() {
  if (!host_is_gcc()) return {};
#if defined(__x86_64__)
  return {"-fno-gnu-unique", "-mtls-dialect=gnu2"};
#else
  return {"-fno-gnu-unique"};
#endif
}

}  // namespace

CUresult build_identity(std::string& out) {
  static std::once_flag once;
  static CUresult status = CUDA_SUCCESS;
  static std::string detail;
  std::call_once(once, [] {
    std::string error;
    const auto cxx = host_compiler(error);
    if (cxx.empty()) {
      status = CUDA_ERROR_NOT_SUPPORTED;
      detail = error;
      return;
    }
    TempDir dir;
    std::string log;
    std::vector<std::string> argv = cxx;
    argv.push_back("--version");
    if (!dir.create("dcsim-", log) || run(argv, dir.path(), dir.path() + "/version.txt", log) != 0) {
      status = CUDA_ERROR_NOT_SUPPORTED;
      detail = "the host C++ compiler " + cxx[0] + " does not run";
      return;
    }
    host_is_gcc() = log.find("clang") == std::string::npos;
    std::string flags;
    for (const auto& f : kFlags) flags += " " + f;
    for (const auto& f : gcc_kernel_flags()) flags += " " + f;
    // The shim headers' own text (FNV-1a over every embedded file's name and contents) names the
    // build: any edit of dcsim_cuda.h or a header beside it gives new cache keys, with no version
    // number to remember to bump.
    uint64_t hash = 0xcbf29ce484222325ull;
    for (const auto& f : shim_files())
      for (const char* part : {f.first.c_str(), "\n", f.second.c_str(), "\n"})
        for (const char* c = part; *c; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
    char shim[17];
    std::snprintf(shim, sizeof shim, "%016llx", static_cast<unsigned long long>(hash));
    trace_compiler_cache() = trace_compiler(cxx, log.substr(0, log.find('\n')));
    identity_cache() = "dcsim shim abi " + std::to_string(DCSIM_ABI_VERSION) + " image " +
                       std::to_string(kImageVersion) + " shim " + shim + " | " + cxx[0] + " | " +
                       log.substr(0, log.find('\n')) + " |" + flags + " | trace " + trace_compiler_cache() +
                       (counters_mode() ? " | counters" : "");
  });
  if (status != CUDA_SUCCESS) return fail(status, detail);
  out = identity_cache();
  return CUDA_SUCCESS;
}

CUresult build_image(const std::string& source, const std::string& options, int sm, const void* device_code,
                     size_t device_code_size, std::string& image, std::string& log) {
  std::string id;
  if (CUresult r = build_identity(id); r != CUDA_SUCCESS) {
    log = error_text(r);
    return r;
  }
  std::string error;
  auto cxx = host_compiler(error);
  bool trace = false;
  for (size_t at = source.find(kTraceMarker); at != std::string::npos; at = source.find(kTraceMarker, at + 1))
    trace = trace || at == 0 || source[at - 1] == '\n';
  trace = trace || counters_mode();
  if (trace) {
    if (trace_compiler_cache().empty() && counters_mode()) {
      log = "DOTCOMPUTE_CUDA_SIM_COUNTERS=1 needs clang++ (14 or later: its -fsanitize-coverage=trace-loads,"
            "trace-stores instrumentation; GCC has none): install the Debian/Ubuntu package clang (apt-get install "
            "clang), or point DOTCOMPUTE_CXX at a clang++";
      return fail(kErrorInvalidSource, log);
    }
    if (trace_compiler_cache().empty()) {
      log = "the kernel checks of raw CUDA kernels on the CUDA simulator need clang++ (its "
            "-fsanitize-coverage=trace-loads,trace-stores instrumentation; GCC has none): install the Debian/Ubuntu "
            "package clang (apt-get install clang), or point DOTCOMPUTE_CXX at a clang++";
      return fail(kErrorInvalidSource, log);
    }
    cxx = {trace_compiler_cache()};
  }
  TempDir dir;
  if (!dir.create("dcsim-", log)) {
    log = "cannot create a private temporary folder: " + log;
    return fail(kErrorOperatingSystem, log);
  }
  write_shim_files(dir.path());
  // The include and macro options NVRTC was given mean the same to the host compiler; the rest (arch,
  // fast math, language standard) do not apply.
  std::vector<std::string> user_flags;
  const auto words = split(options);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "-D" || w == "-U" || w == "-I") && i + 1 < words.size()) {
      user_flags.push_back(w + words[++i]);
    } else if (w.rfind("-D", 0) == 0 || w.rfind("-U", 0) == 0 || w.rfind("-I", 0) == 0) {
      user_flags.push_back(w);
    } else if (w.rfind("--define-macro=", 0) == 0) {
      user_flags.push_back("-D" + w.substr(15));
    } else if (w.rfind("--include-path=", 0) == 0) {
      user_flags.push_back("-I" + w.substr(15));
    }
  }
  std::vector<std::string> include_flags = {"-D__CUDA_ARCH__=" + std::to_string(sm * 10), "-I" + dir.path(),
                                            "-I" + dir.path() + "/include"};
  include_flags.insert(include_flags.end(), user_flags.begin(), user_flags.end());
  // Kernels a macro defines (`#define KERNEL(name) __global__ void name(...)`) have their names only
  // after the preprocessor, and under #if/#else only the preprocessor knows which definitions are
  // alternatives and which overloads: in such sources kernels are looked for in the preprocessed text
  // (with the macros the shim defines, so the same branches are taken).
  std::string kernels_in;
  static const std::regex macro_kernel(R"((^|\n)[ \t]*#[ \t]*define\b([^\n]*\\\n)*[^\n]*\b__global__\b)");
  static const std::regex conditional(R"((^|\n)[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else)\b)");
  if (std::regex_search(source, macro_kernel) ||
      (source.find("__global__") != std::string::npos && std::regex_search(source, conditional))) {
    write_file(dir.path() + "/kernel.cu", source);
    std::vector<std::string> argv = cxx;
    argv.insert(argv.end(), {"-E", "-x", "c++", "-std=c++17", "-D__CUDACC__=1", "-D__CUDACC_RTC__=1"});
    argv.insert(argv.end(), include_flags.begin(), include_flags.end());
    argv.insert(argv.end(), {"-o", dir.path() + "/kernel.ii", dir.path() + "/kernel.cu"});
    if (run(argv, dir.path(), dir.path() + "/preprocess.log", log) != 0)
      return fail(kErrorInvalidSource, "the host C++ preprocessor rejected the kernel:\n" + log);
    std::ifstream in(dir.path() + "/kernel.ii", std::ios::binary);
    kernels_in = main_file_lines(in, dir.path() + "/kernel.cu");
  }
  Adapted a;
  if (!adapt(source, kernels_in.empty() ? source : kernels_in, a, error)) {
    log = error;
    return fail(kErrorInvalidSource, error);
  }
  // counters mode: the counters' observer registers itself with the trace build (dcsim_counters.h)
  const std::string kernel = "#include \"dcsim_cuda.h\"\n" +
                             std::string(counters_mode() ? "#include \"dcsim_counters.h\"\n" : "") + a.prelude + "#line 1 \"kernel.cu\"\n" + a.source +
                             "\n#line 1 \"dcsim-registration\"\n" + a.epilogue;
  write_file(dir.path() + "/kernel.cpp", kernel);

  std::vector<std::string> argv = cxx;
  SharedShim shared;
  if (trace) {
    // Compiled with the load/store callbacks and line tables (-g: the checks name source lines), at
    // -O1 so that accesses stay where the source has them; linked without -fsanitize (which would
    // pull in a sanitizer runtime: the callbacks are the shim's own).
    for (const auto& f : kFlags)
      if (f != "-O2" && f != "-shared") argv.push_back(f);
    argv.insert(argv.end(), {"-O1", "-g", "-DDCSIM_TRACE=1", "-fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores",
                             "-c"});
    if (counters_mode()) argv.push_back("-DDCSIM_COUNTERS=1");
  } else {
    argv.insert(argv.end(), kFlags.begin(), kFlags.end());
    for (const auto& f : gcc_kernel_flags()) argv.push_back(f);
    if (host_is_gcc()) {
      // the shim's runtime and its header made once for these options (host_build.hpp)
      std::vector<std::string> shared_flags = cxx;
      for (const auto& f : kFlags)
        if (f != "-shared") shared_flags.push_back(f);
      for (const auto& f : gcc_kernel_flags()) shared_flags.push_back(f);
      shared_flags.push_back(include_flags[0]);  // -D__CUDA_ARCH__
      shared_flags.insert(shared_flags.end(), user_flags.begin(), user_flags.end());
      shared = shared_shim(shared_flags);
      if (!shared.runtime_object.empty()) argv.insert(argv.end(), {"-DDCSIM_SPLIT_RUNTIME", "-DDCSIM_KERNEL_ONLY"});
      if (!shared.pch.empty()) symlink(shared.pch.c_str(), (dir.path() + "/dcsim_cuda.h.gch").c_str());
    }
  }
  argv.insert(argv.end(), include_flags.begin(), include_flags.end());
  argv.insert(argv.end(), {"-o", dir.path() + (trace ? "/kernel.o" : "/kernel.so"), dir.path() + "/kernel.cpp"});
  if (!shared.runtime_object.empty()) argv.push_back(shared.runtime_object);
  int status = run(argv, dir.path(), dir.path() + "/compile.log", log);
  if (status != 0 && !shared.runtime_object.empty()) {
    // The shared runtime is only a shortcut: a kernel it fails for (or whose object went missing) is
    // built whole, as without it, and what that build says is what the user sees.
    std::vector<std::string> whole;
    for (const auto& w : argv)
      if (w != "-DDCSIM_SPLIT_RUNTIME" && w != "-DDCSIM_KERNEL_ONLY" && w != shared.runtime_object) whole.push_back(w);
    unlink((dir.path() + "/dcsim_cuda.h.gch").c_str());
    status = run(whole, dir.path(), dir.path() + "/compile.log", log);
  }
  if (status == 0 && trace) {
    const std::vector<std::string> link = {cxx[0], "-shared", "-pthread", "-o", dir.path() + "/kernel.so",
                                           dir.path() + "/kernel.o"};
    status = run(link, dir.path(), dir.path() + "/link.log", log);
  }
  if (status != 0) {
    if (status < 0) log = "could not run the host C++ compiler " + argv[0];
    return fail(kErrorInvalidSource, "the host C++ compiler rejected the kernel:\n" + log);
  }
  std::ifstream in(dir.path() + "/kernel.so", std::ios::binary);
  std::stringstream so;
  so << in.rdbuf();
  const std::string host = so.str();
  if (host.empty()) return fail(kErrorInvalidSource, "the host C++ compiler produced no object");

  ImageHeader h{};
  std::memcpy(h.magic, kImageMagic, sizeof kImageMagic);
  h.version = kImageVersion;
  h.flags = a.fibers || trace ? kImageFibers : 0;  // a trace build runs every thread as a fiber
  h.source_bytes = source.size();
  h.device_code_bytes = device_code ? device_code_size : 0;
  h.host_bytes = host.size();
  image.assign(reinterpret_cast<const char*>(&h), sizeof h);
  image += source;
  if (device_code) image.append(static_cast<const char*>(device_code), device_code_size);
  image += host;
  return CUDA_SUCCESS;
}

}  // namespace dcsim_lib
