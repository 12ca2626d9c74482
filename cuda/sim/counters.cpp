// GPU-model counters (DOTCOMPUTE_CUDA_SIM_COUNTERS=1): the library's side. A counters-mode host
// object (shim/dcsim_counters.h) counts warp-level memory requests of the blocks each worker thread
// ran and hands them to counters_sink at the end of every dcsim_run; here they are summed per
// kernel and launch shape, with what the device code says about the kernel (its registers and
// static shared memory, read from the CUBIN NVRTC produced), and handed to Python as JSON
// (dcsimCounters; python/dotcompute/profile/gpu_model.py turns them into the model's figures).
#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <sstream>

#include "shim/dcsim_counters_abi.h"
#include "sim.hpp"

namespace dcsim_lib {

namespace {

struct Totals {
  std::string kernel;
  int device = 0;
  unsigned block[3] = {1, 1, 1};
  uint64_t dynamic_shared = 0;
  int static_shared = 0;
  int registers = 0;
  uint64_t launches = 0;
  uint64_t grid_blocks = 0;  // blocks of every launch, summed
  dcsim_counters counts{};
};

std::mutex g_mutex;
std::vector<Totals> g_totals;

const Function* function_of(const dcsim_kernel_entry* entry) {
  Sim* s = sim();
  if (!s) return nullptr;
  std::lock_guard<std::mutex> lock(s->mutex);
  for (const auto& m : s->modules)
    for (const auto& f : m.second->functions)
      if (f->entry == entry) return f.get();
  return nullptr;
}

void counters_sink(const dcsim_launch* L, const dcsim_counters* c) {
  const Function* f = function_of(L->kernel);
  const std::string name = f ? f->symbol : L->kernel->name;
  std::lock_guard<std::mutex> lock(g_mutex);
  Totals* t = nullptr;
  for (auto& e : g_totals)
    if (e.kernel == name && std::memcmp(e.block, L->block, sizeof e.block) == 0 &&
        e.dynamic_shared == L->dynamic_shared_bytes)
      t = &e;
  if (!t) {
    g_totals.emplace_back();
    t = &g_totals.back();
    t->kernel = name;
    std::memcpy(t->block, L->block, sizeof t->block);
    t->dynamic_shared = L->dynamic_shared_bytes;
    if (f) {
      t->device = f->module->device;
      t->static_shared = f->static_shared;
      t->registers = f->registers;
    }
  }
  // each launch runs its blocks in ranges, exactly one of which starts at block 0
  if (L->block_begin == 0) {
    t->launches += 1;
    t->grid_blocks += static_cast<uint64_t>(L->grid[0]) * L->grid[1] * L->grid[2];
  }
  uint64_t* to = reinterpret_cast<uint64_t*>(&t->counts);
  const uint64_t* from = reinterpret_cast<const uint64_t*>(c);
  for (size_t i = 0; i < sizeof(dcsim_counters) / sizeof(uint64_t); ++i) to[i] += from[i];
}

std::string json_text() {
  std::ostringstream out;
  std::lock_guard<std::mutex> lock(g_mutex);
  out << "[";
  bool first = true;
  for (const auto& t : g_totals) {
    const dcsim_counters& c = t.counts;
    out << (first ? "" : ",") << "{\"kernel\":\"";
    for (char ch : t.kernel)
      if (ch != '"' && ch != '\\' && static_cast<unsigned char>(ch) >= 0x20) out << ch;
    out << "\",\"device\":" << t.device << ",\"block\":[" << t.block[0] << "," << t.block[1] << "," << t.block[2]
        << "],\"dynamic_shared\":" << t.dynamic_shared << ",\"static_shared\":" << t.static_shared
        << ",\"registers\":" << t.registers << ",\"launches\":" << t.launches << ",\"grid_blocks\":" << t.grid_blocks
        << ",\"global_requests\":[" << c.global_requests[0] << "," << c.global_requests[1] << "]"
        << ",\"global_sectors\":[" << c.global_sectors[0] << "," << c.global_sectors[1] << "]"
        << ",\"global_bytes\":[" << c.global_bytes[0] << "," << c.global_bytes[1] << "]"
        << ",\"shared_requests\":[" << c.shared_requests[0] << "," << c.shared_requests[1] << "]"
        << ",\"shared_wavefronts\":[" << c.shared_wavefronts[0] << "," << c.shared_wavefronts[1] << "]"
        << ",\"shared_ideal\":[" << c.shared_ideal[0] << "," << c.shared_ideal[1] << "]"
        << ",\"mem_instructions\":" << c.mem_instructions << ",\"mem_active_lanes\":" << c.mem_active_lanes
        << ",\"warp_syncs\":" << c.warp_syncs << ",\"warp_sync_lanes\":" << c.warp_sync_lanes
        << ",\"blocks\":" << c.blocks << ",\"threads\":" << c.threads << "}";
    first = false;
  }
  out << "]";
  return out.str();
}

}  // namespace

void counters_attach(Module& m) {
  if (auto bind = reinterpret_cast<dcsim_counters_bind_fn>(dlsym(m.handle, "dcsim_counters_bind")))
    bind(&counters_sink);
}

// Registers per thread of `symbol` from the CUBIN's .nv.info attributes (EIATTR_REGCOUNT, 0x2f: a
// symbol index and the count, what ptxas allocated); 0 when the device code is not a CUBIN or has none.
int cubin_registers(const void* cubin, uint64_t size, const std::string& symbol) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(cubin, ELFMAG, SELFMAG) != 0) return 0;
  const auto* bytes = static_cast<const unsigned char*>(cubin);
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
      eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > size)
    return 0;
  auto section = [&](unsigned i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr names = section(eh.e_shstrndx);
  if (names.sh_offset + names.sh_size > size) return 0;
  // the symbol's index in .symtab
  long index = -1;
  for (unsigned i = 0; i < eh.e_shnum && index < 0; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_offset + sh.sh_size > size) continue;
    const Elf64_Shdr strs = section(sh.sh_link);
    if (strs.sh_offset + strs.sh_size > size) continue;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      if (sym.st_name >= strs.sh_size) continue;
      const char* n = reinterpret_cast<const char*>(bytes + strs.sh_offset + sym.st_name);
      if (strnlen(n, strs.sh_size - sym.st_name) == symbol.size() && symbol == n) {
        index = static_cast<long>(k);
        break;
      }
    }
  }
  if (index < 0) return 0;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.sh_size || sh.sh_offset + sh.sh_size > size) continue;
    const char* name = reinterpret_cast<const char*>(bytes + names.sh_offset + sh.sh_name);
    if (std::strncmp(name, ".nv.info", 8) != 0) continue;
    // attributes: a format byte, an attribute byte, then (format 4: a 16-bit size and that many
    // bytes; else a 16-bit value)
    for (uint64_t at = 0; at + 4 <= sh.sh_size;) {
      const unsigned char* a = bytes + sh.sh_offset + at;
      const unsigned format = a[0], attribute = a[1];
      const unsigned length = format == 4 ? static_cast<unsigned>(a[2] | (a[3] << 8)) : 0;
      if (format == 4 && attribute == 0x2f && length >= 8 && at + 4 + length <= sh.sh_size) {
        uint32_t sym = 0, regs = 0;
        std::memcpy(&sym, a + 4, 4);
        std::memcpy(&regs, a + 8, 4);
        if (static_cast<long>(sym) == index) return static_cast<int>(regs);
      }
      at += 4 + length;
    }
  }
  return 0;
}

}  // namespace dcsim_lib

// The counts so far, as a JSON array (one object per kernel and launch shape), into buf when cap is
// enough; returns the length the text needs (without its terminating zero).
extern "C" __attribute__((visibility("default"))) size_t dcsimCounters(char* buf, size_t cap) {
  const std::string text = dcsim_lib::json_text();
  if (buf && cap > text.size()) std::memcpy(buf, text.c_str(), text.size() + 1);
  return text.size();
}
