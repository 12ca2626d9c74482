// Blocking sections: code in the core that may wait (a stream drained in a destructor, a fence
// waited on before a block is freed) marks itself with a BlockingScope. An embedding language
// registers hooks that run around such waits; the Python bindings release the GIL there, so a
// destructor that waits for the device does not stop every other Python thread.
#pragma once

#include "dotcompute/export.hpp"

namespace dotcompute {

// `enter` returns a token that `leave` gets back (nullptr: nothing to undo).
using BlockingEnterHook = void* (*)();
using BlockingLeaveHook = void (*)(void* token);

DOTCOMPUTE_API void set_blocking_hooks(BlockingEnterHook enter, BlockingLeaveHook leave) noexcept;

class DOTCOMPUTE_API BlockingScope {
 public:
  BlockingScope() noexcept;
  ~BlockingScope();
  BlockingScope(const BlockingScope&) = delete;
  BlockingScope& operator=(const BlockingScope&) = delete;

 private:
  void* token_;
};

}  // namespace dotcompute
