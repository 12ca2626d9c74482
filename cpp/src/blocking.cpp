#include "dotcompute/blocking.hpp"

#include <atomic>

namespace dotcompute {

namespace {
std::atomic<BlockingEnterHook> g_enter{nullptr};
std::atomic<BlockingLeaveHook> g_leave{nullptr};
}  // namespace

void set_blocking_hooks(BlockingEnterHook enter, BlockingLeaveHook leave) noexcept {
  g_leave.store(leave);
  g_enter.store(enter);
}

BlockingScope::BlockingScope() noexcept : token_(nullptr) {
  if (BlockingEnterHook enter = g_enter.load()) token_ = enter();
}

BlockingScope::~BlockingScope() {
  if (token_ == nullptr) return;
  if (BlockingLeaveHook leave = g_leave.load()) leave(token_);
}

}  // namespace dotcompute
