// Sleeps for args[0] milliseconds: a stand-in for a long kernel.
#include <stdint.h>
#include <time.h>

#include "dotcompute/cpu_kernel_abi.h"

extern "C" void sleep_ms(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t, void*) {
  if (group_begin != 0) return;
  const int64_t ms = *(const int64_t*)launch->args[0];
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}
