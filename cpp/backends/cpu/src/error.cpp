#include "error.h"

#include <pthread.h>

#include <new>
#include <utility>

namespace dccpu {

namespace {

// The per-thread message lives under a pthread key rather than in a
// `thread_local`: a dlopen'ed library's static TLS pins it in memory (C++
// thread_local destructors) and trips LeakSanitizer's DTLS scan on glibc 2.35+.
class ErrorSlot {
 public:
  ErrorSlot() { ok_ = pthread_key_create(&key_, [](void* p) { delete static_cast<std::string*>(p); }) == 0; }
  // After unloading, the key's destructor would point into unmapped code; the
  // few strings of threads still alive are leaked instead.
  ~ErrorSlot() {
    if (ok_) pthread_key_delete(key_);
  }
  std::string* get(bool create) {
    if (!ok_) return nullptr;
    auto* s = static_cast<std::string*>(pthread_getspecific(key_));
    if (s == nullptr && create) {
      s = new (std::nothrow) std::string();
      if (s != nullptr && pthread_setspecific(key_, s) != 0) {
        delete s;
        s = nullptr;
      }
    }
    return s;
  }

 private:
  pthread_key_t key_{};
  bool ok_ = false;
};

ErrorSlot g_slot;

}  // namespace

dc_status fail(dc_status status, std::string message) {
  try {
    if (std::string* s = g_slot.get(true)) *s = std::move(message);
  } catch (...) {
    // Keeping the status is more important than the text when memory is gone.
  }
  return status;
}

const char* last_error_text() {
  const std::string* s = g_slot.get(false);
  return s != nullptr ? s->c_str() : "";
}

}  // namespace dccpu
