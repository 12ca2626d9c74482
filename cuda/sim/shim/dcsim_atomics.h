// The CUDA simulator's device atomics (atomicAdd ... atomicCAS and their _block/_system forms),
// included by dcsim_cuda.h.
#pragma once
namespace dcsim {
namespace {  // internal linkage: each kernel object keeps its own state (no GNU unique symbols)
template <class T, class F>
inline T atomic_update(T* p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T want = f(old);
  while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) want = f(old);
  return old;
}
}  // namespace
}  // namespace dcsim

template <class T>
inline T atomicAdd(T* p, T v) {
  if constexpr (std::is_integral_v<T>)
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  else
    return ::dcsim::atomic_update(p, [v](T old) { return old + v; });
}
template <class T>
inline T atomicSub(T* p, T v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
}
template <class T>
inline T atomicExch(T* p, T v) {
  T old;
  __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <class T>
inline T atomicMin(T* p, T v) {
  return ::dcsim::atomic_update(p, [v](T old) { return v < old ? v : old; });
}
template <class T>
inline T atomicMax(T* p, T v) {
  return ::dcsim::atomic_update(p, [v](T old) { return v > old ? v : old; });
}
template <class T>
inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <class T>
inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T>
inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <class T>
inline T atomicCAS(T* p, T compare, T v) {
  __atomic_compare_exchange(p, &compare, &v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;  // holds the old value whether or not the swap happened
}
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  return ::dcsim::atomic_update(p, [limit](unsigned old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
  return ::dcsim::atomic_update(p, [limit](unsigned old) { return (old == 0 || old > limit) ? limit : old - 1u; });
}
#define DCSIM_SCOPED(name)                                                \
  template <class T, class... R>                                          \
  inline T name##_block(T* p, R... r) { return name(p, r...); }           \
  template <class T, class... R>                                          \
  inline T name##_system(T* p, R... r) { return name(p, r...); }
DCSIM_SCOPED(atomicAdd)
DCSIM_SCOPED(atomicSub)
DCSIM_SCOPED(atomicExch)
DCSIM_SCOPED(atomicMin)
DCSIM_SCOPED(atomicMax)
DCSIM_SCOPED(atomicAnd)
DCSIM_SCOPED(atomicOr)
DCSIM_SCOPED(atomicXor)
DCSIM_SCOPED(atomicCAS)
#undef DCSIM_SCOPED
