#include "error.h"

#include <new>
#include <utility>

namespace dccpu {

namespace {
thread_local std::string t_last_error;
}

dc_status fail(dc_status status, std::string message) {
  try {
    t_last_error = std::move(message);
  } catch (...) {
    // Keeping the status is more important than the text when memory is gone.
  }
  return status;
}

const char* last_error_text() { return t_last_error.c_str(); }

}  // namespace dccpu
