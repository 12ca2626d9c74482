// Ownership of Objective-C objects from C++, written once for both builds: ARC on macOS
// (-fobjc-arc) and manual retain/release against the Linux test double (-fno-objc-arc).
//
// Owned<T> holds one strong reference. Under ARC the compiler does the counting for the
// strong member; under MRR the constructor, copy and destructor retain and release by hand.
// `Owned<T>::adopt(x)` takes over a +1 reference (results of new…/copy…/alloc); the
// constructor from a plain pointer retains (for autoreleased results such as commandBuffer).
#ifndef DOTCOMPUTE_METAL_OBJC_OWNED_H
#define DOTCOMPUTE_METAL_OBJC_OWNED_H

#import <Foundation/Foundation.h>

#include <utility>

#if __has_feature(objc_arc)
#define DC_OBJC_ARC 1
#define DC_RETAIN(x) (x)
#define DC_RELEASE(x) ((void)0)
#else
#define DC_OBJC_ARC 0
#define DC_RETAIN(x) [(x) retain]
#define DC_RELEASE(x) [(x) release]
#endif

namespace dcmtl {

template <class T>
class Owned {
 public:
  Owned() = default;
  explicit Owned(T obj) : obj_(obj) { (void)DC_RETAIN(obj_); }
  static Owned adopt(T obj) {
    Owned o;
    o.obj_ = obj;  // already +1: under ARC the transfer happened at the call (ns_returns_retained)
    return o;
  }
  Owned(const Owned& other) : obj_(other.obj_) { (void)DC_RETAIN(obj_); }
  Owned(Owned&& other) noexcept : obj_(other.obj_) { other.obj_ = nil; }
  Owned& operator=(Owned other) noexcept {
    std::swap(obj_, other.obj_);
    return *this;
  }
  ~Owned() { DC_RELEASE(obj_); }
  T get() const { return obj_; }
  explicit operator bool() const { return obj_ != nil; }

 private:
  T obj_ = nil;
};

}  // namespace dcmtl

#endif
