// Process-wide state of the CPU backend, created by initialize() and torn
// down by shutdown().
#pragma once

#include <cstdint>

namespace dccpu {

class ThreadPool;
class Stream;

// The launch pool (created on first use; nullptr when it could not be).
ThreadPool* shared_pool();
uint32_t pool_participants();
uint32_t spin_microseconds();

}  // namespace dccpu
