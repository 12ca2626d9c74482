// A growable, 64-byte aligned block of memory owned by one thread of
// execution: the dynamic work-group memory handed to kernels.
#pragma once

#include <cstddef>

namespace dccpu {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();
  // At least `bytes` bytes, or nullptr for 0. Throws std::bad_alloc.
  void* get(std::size_t bytes);

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace dccpu
