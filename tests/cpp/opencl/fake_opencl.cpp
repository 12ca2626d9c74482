// A library named libOpenCL.so.1 that is not an ICD loader: it has one entry
// point of the many the plugin needs. Tests put its folder first on
// LD_LIBRARY_PATH to check the plugin refuses it with a reason.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) int32_t clGetPlatformIDs(uint32_t, void*, uint32_t* count) {
  if (count != nullptr) *count = 0;
  return -1001;
}
