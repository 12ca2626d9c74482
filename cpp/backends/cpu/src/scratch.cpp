#include "scratch.h"

#include <cstdlib>
#include <new>

namespace dccpu {

Scratch::~Scratch() { std::free(data_); }

void* Scratch::get(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes > capacity_) {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* fresh = std::aligned_alloc(64, rounded);
    if (fresh == nullptr) throw std::bad_alloc();
    std::free(data_);
    data_ = fresh;
    capacity_ = rounded;
  }
  return data_;
}

}  // namespace dccpu
