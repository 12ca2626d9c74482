// Symbol visibility for the public C++ API of libdotcompute.
//
// The library is built with hidden visibility by default; every public class
// is marked so that its typeinfo (needed to catch dotcompute exceptions in
// another shared object, e.g. the Python module) and methods are exported.
#pragma once

#if defined(_WIN32)
#define DOTCOMPUTE_API
#else
#define DOTCOMPUTE_API __attribute__((visibility("default")))
#endif
