// GPU-model counters (DOTCOMPUTE_CUDA_SIM_COUNTERS=1): the library's side. A counters-mode host
// object (shim/dcsim_counters.h) counts warp-level memory requests of the blocks each worker thread
// ran and hands them to counters_sink at the end of every dcsim_run; here they are summed per
// kernel and launch shape, with what the device code says about the kernel (its registers and
// static shared memory, read from the CUBIN NVRTC produced), and handed to Python as JSON
// (dcsimCounters; python/dotcompute/profile/gpu_model.py turns them into the model's figures).
#include <dlfcn.h>

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
        << ",\"warp_collectives\":" << c.warp_collectives << ",\"warp_collective_lanes\":" << c.warp_collective_lanes
        << ",\"barrier_warps\":" << c.barrier_warps << ",\"barrier_lanes\":" << c.barrier_lanes
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

}  // namespace dcsim_lib

// The counts so far, as a JSON array (one object per kernel and launch shape), into buf when cap is
// enough; returns the length the text needs (without its terminating zero).
extern "C" __attribute__((visibility("default"))) size_t dcsimCounters(char* buf, size_t cap) {
  const std::string text = dcsim_lib::json_text();
  if (buf && cap > text.size()) std::memcpy(buf, text.c_str(), text.size() + 1);
  return text.size();
}
