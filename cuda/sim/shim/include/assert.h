// The simulator's device-side assert (dcsim_cuda.h) stays in force after user includes.
#undef assert
#define assert(e) ((e) ? (void)0 : dcsim_assert_fail(#e, __FILE__, __LINE__))
