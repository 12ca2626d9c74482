// Device memory of the simulator: one reserved, inaccessible address range per
// device whose pages become readable and writable only while allocated, handed
// out first-fit in 256-byte units and addressed by fake device addresses.
#include <sys/mman.h>
#include <unistd.h>

#include <iterator>

#include "sim.hpp"

namespace dcsim_lib {

namespace {
constexpr uint64_t kAlign = 256;  // cuMemAlloc's alignment guarantee
// Left unused after each allocation when the free block has room: an access one past the end (or a
// few elements past it) then lands in no other allocation, so a trace build's memcheck sees it.
constexpr uint64_t kRedZone = 256;
}  // namespace

Arena::~Arena() {
  if (host_) munmap(host_, capacity_);
}

bool Arena::reserve() {
  if (host_) return true;
  void* p = mmap(nullptr, capacity_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  host_ = static_cast<char*>(p);
  free_[0] = capacity_;
  return true;
}

CUresult Arena::alloc(uint64_t bytes, CUdeviceptr* out) {
  if (!out || bytes == 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc of 0 bytes");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reserve())
    return fail(CUDA_ERROR_OUT_OF_MEMORY, "cannot reserve " + std::to_string(capacity_) +
                                              " bytes of address space for simulated device memory");
  const uint64_t size = (bytes + kAlign - 1) / kAlign * kAlign;
  // First fit among the free blocks with room for the red zone too; only when none has, the first
  // that holds the bytes alone.
  auto it = free_.begin();
  while (it != free_.end() && it->second < size + kRedZone) ++it;
  if (it == free_.end()) it = free_.begin();
  for (; it != free_.end(); ++it) {
    if (it->second < size) continue;
    const uint64_t taken = it->second >= size + kRedZone ? size + kRedZone : size;
    const uint64_t offset = it->first, left = it->second - taken;
    free_.erase(it);
    if (left) free_[offset + taken] = left;
    const uint64_t ps = page_size();
    const uint64_t lo = offset / ps * ps, hi = (offset + taken + ps - 1) / ps * ps;
    if (mprotect(host_ + lo, hi - lo, PROT_READ | PROT_WRITE) != 0) {
      free_[offset] = taken;  // give it back (neighbours stay uncoalesced: harmless)
      return fail(CUDA_ERROR_OUT_OF_MEMORY, "the host cannot commit " + std::to_string(size) + " bytes");
    }
    used_[offset] = taken;
    asked_[offset] = bytes;
    in_use_ += taken;
    *out = kDeviceBase + (static_cast<uint64_t>(device_) << kDeviceShift) + offset;
    return CUDA_SUCCESS;
  }
  return fail(CUDA_ERROR_OUT_OF_MEMORY, "simulated device " + std::to_string(device_) + " has " +
                                            std::to_string(capacity_ - in_use_) + " of " + std::to_string(capacity_) +
                                            " bytes free, not " + std::to_string(bytes) + " in one piece");
}

CUresult Arena::free(CUdeviceptr p) {
  const uint64_t base = kDeviceBase + (static_cast<uint64_t>(device_) << kDeviceShift);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.find(p - base);
  if (p < base || it == used_.end())
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree of an address that is not the start of an allocation");
  uint64_t offset = it->first, size = it->second;
  used_.erase(it);
  asked_.erase(offset);
  in_use_ -= size;
  // Coalesce with free neighbours, then return whole free pages to the host and make them inaccessible,
  // so a use after free faults rather than reading stale data.
  auto next = free_.find(offset + size);
  if (next != free_.end()) {
    size += next->second;
    free_.erase(next);
  }
  auto prev = free_.lower_bound(offset);
  if (prev != free_.begin()) {
    --prev;
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[offset] = size;
  const uint64_t ps = page_size();
  const uint64_t lo = (offset + ps - 1) / ps * ps, hi = (offset + size) / ps * ps;
  if (hi > lo) {
    madvise(host_ + lo, hi - lo, MADV_DONTNEED);
    mprotect(host_ + lo, hi - lo, PROT_NONE);
  }
  return CUDA_SUCCESS;
}

char* Arena::translate(CUdeviceptr p, uint64_t bytes) const {
  const uint64_t base = kDeviceBase + (static_cast<uint64_t>(device_) << kDeviceShift);
  if (p < base) return nullptr;
  const uint64_t offset = p - base;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.upper_bound(offset);
  if (it == used_.begin()) return nullptr;
  --it;
  if (offset + bytes > it->first + it->second) return nullptr;
  return host_ + offset;
}

bool Arena::host_range(uintptr_t* lo, uintptr_t* hi) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!host_) return false;
  *lo = reinterpret_cast<uintptr_t>(host_);
  *hi = *lo + capacity_;
  return true;
}

bool Arena::find(uintptr_t p, uintptr_t* host, uint64_t* bytes, uint64_t* span, uint64_t* device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const uintptr_t base = reinterpret_cast<uintptr_t>(host_);
  if (!host_ || p < base || p >= base + capacity_) return false;
  const uint64_t offset = p - base;
  auto it = used_.upper_bound(offset);
  if (it == used_.begin()) return false;
  --it;
  if (offset >= it->first + it->second) return false;
  auto asked = asked_.find(it->first);
  *host = base + it->first;
  *bytes = asked == asked_.end() ? it->second : asked->second;
  *span = it->second;
  *device = kDeviceBase + (static_cast<uint64_t>(device_) << kDeviceShift) + it->first;
  return true;
}

namespace {
uint32_t services_arenas(uintptr_t* lo, uintptr_t* hi, uint32_t max) {
  Sim* s = sim();
  uint32_t n = 0;
  if (!s) return 0;
  for (const auto& d : s->devices)
    if (n < max && d->arena && d->arena->host_range(&lo[n], &hi[n])) ++n;
  return n;
}
int services_allocation(uintptr_t p, uintptr_t* host, uint64_t* bytes, uint64_t* span, uint64_t* device) {
  Sim* s = sim();
  if (!s) return 0;
  for (const auto& d : s->devices)
    if (d->arena && d->arena->find(p, host, bytes, span, device)) return 1;
  return 0;
}
}  // namespace

const dcsim_host_services* host_services() {
  static const dcsim_host_services services{1, &services_arenas, &services_allocation};
  return &services;
}

uint64_t Arena::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

char* resolve(CUdeviceptr p, uint64_t bytes, int* device) {
  Sim* s = sim();
  if (!s || p == 0) return nullptr;
  if ((p & 0xffff000000000000ull) == kDeviceBase) {
    const uint64_t d = (p - kDeviceBase) >> kDeviceShift;
    if (d >= s->devices.size() || !s->devices[d]->arena) return nullptr;
    if (device) *device = static_cast<int>(d);
    return s->devices[d]->arena->translate(p, bytes);
  }
  if (is_pinned(reinterpret_cast<const void*>(p), bytes)) {
    if (device) *device = -1;
    return reinterpret_cast<char*>(p);
  }
  {
    // A module's variable: its device address is its host address in the loaded object.
    std::lock_guard<std::mutex> lock(s->mutex);
    auto it = s->global_ranges.upper_bound(static_cast<uintptr_t>(p));
    if (it != s->global_ranges.begin() && p + bytes <= std::prev(it)->first + std::prev(it)->second) {
      if (device) *device = -1;
      return reinterpret_cast<char*>(p);
    }
  }
  return nullptr;
}

bool is_pinned(const void* host, uint64_t bytes) {
  Sim* s = sim();
  if (!s) return false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(host);
  std::lock_guard<std::mutex> lock(s->mutex);
  auto it = s->host_ranges.upper_bound(a);
  if (it == s->host_ranges.begin()) return false;
  --it;
  return a + bytes <= it->first + it->second;
}

}  // namespace dcsim_lib
