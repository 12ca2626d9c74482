// The CUDA simulator's texture objects (cuTexObjectCreate/cuTexObjectDestroy): the handle a kernel
// receives is the address of a dcsim_texture (shim/dcsim_abi.h) that the shim's tex1Dfetch/tex2D read
// (shim/dcsim_device.h). Linear and pitch2D resources; CUDA arrays are not simulated.
#include <cstring>
#include <deque>
#include <mutex>

#include "sim.hpp"
#include "sim_api.h"

using namespace dcsim_lib;

// The driver API's descriptors, field for field (cuda.h's CUDA_RESOURCE_DESC / CUDA_TEXTURE_DESC).
struct ResourceDesc {
  int type;  // CUresourcetype: 0 array, 1 mipmapped array, 2 linear, 3 pitch2D
  union {
    struct {
      CUdeviceptr ptr;
      int format;
      unsigned channels;
      size_t bytes;
    } linear;
    struct {
      CUdeviceptr ptr;
      int format;
      unsigned channels;
      size_t width, height, pitch;
    } pitch2d;
    int reserved[32];
  } res;
  unsigned flags;
};
struct TextureDesc {
  int address[3];  // CUaddress_mode: 0 wrap, 1 clamp, 2 mirror, 3 border
  int filter;      // CUfilter_mode: 0 point, 1 linear
  unsigned flags;  // CU_TRSF_*
  unsigned max_anisotropy;
  int mipmap_filter;
  float mipmap_bias, min_mipmap_clamp, max_mipmap_clamp;
  float border[4];
  int reserved[12];
};

namespace {
// Texture objects live until the process ends: a destroyed one keeps its memory with the magic
// cleared, so a kernel still holding the handle fails its fetch instead of reading freed memory.
std::mutex g_textures_mutex;
std::deque<dcsim_texture>& textures() {
  static auto* t = new std::deque<dcsim_texture>();
  return *t;
}
size_t format_bytes(int format) {
  switch (format) {
    case 0x01: case 0x08: return 1;  // unsigned/signed int8
    case 0x02: case 0x09: return 2;  // int16
    case 0x03: case 0x0a: case 0x20: return 4;  // int32, float
    default: return 0;  // half and the rest: not simulated
  }
}
}  // namespace

// What a GPU checks and the simulator with it: linear memory and pitch2D (no CUDA arrays, no
// mipmaps), 1/2/4 channels of 8/16/32-bit integers or float, a pitch that is a multiple of 32
// bytes (the texture pitch alignment), no linear filtering of values read as integers.
DCSIM_EXPORT CUresult cuTexObjectCreate(unsigned long long* out, const ResourceDesc* r, const TextureDesc* t,
                                        const void* view) {
  if (!sim()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!out || !r || !t) return CUDA_ERROR_INVALID_VALUE;
  if (view) return fail(CUDA_ERROR_NOT_SUPPORTED, "cuTexObjectCreate: resource views are not simulated");
  dcsim_texture d{};
  CUdeviceptr ptr = 0;
  int format = 0;
  unsigned channels = 0;
  if (r->type == 2) {
    ptr = r->res.linear.ptr;
    format = r->res.linear.format;
    channels = r->res.linear.channels;
    const size_t texel = format_bytes(format) * channels;
    if (texel == 0 || r->res.linear.bytes % texel)
      return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: sizeInBytes is not a whole number of texels");
    d.width = r->res.linear.bytes / texel;
    d.height = 1;
    d.pitch = r->res.linear.bytes;
  } else if (r->type == 3) {
    ptr = r->res.pitch2d.ptr;
    format = r->res.pitch2d.format;
    channels = r->res.pitch2d.channels;
    d.width = r->res.pitch2d.width;
    d.height = r->res.pitch2d.height;
    d.pitch = r->res.pitch2d.pitch;
    if (d.pitch % 32 || d.pitch < d.width * format_bytes(format) * channels)
      return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: pitchInBytes must hold a row and be a multiple of "
                                            "32 bytes (the texture pitch alignment)");
  } else {
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuTexObjectCreate: only linear and pitch2D resources are simulated "
                                          "(no CUDA arrays or mipmapped arrays)");
  }
  if (format_bytes(format) == 0 || !(channels == 1 || channels == 2 || channels == 4))
    return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: the format must be 1, 2 or 4 channels of 8/16/32-bit "
                                          "integers or float (half is not simulated)");
  if (d.width == 0 || d.height == 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: an empty resource");
  const bool as_integer = ((t->flags & 1) && format != 0x20) || format == 0x03 || format == 0x0a;
  if (t->filter == 1 && as_integer)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: linear filtering needs values read as float");
  for (int i = 0; i < 2; ++i)
    if (t->address[i] < 0 || t->address[i] > 3) return CUDA_ERROR_INVALID_VALUE;
  if (t->filter < 0 || t->filter > 1) return CUDA_ERROR_INVALID_VALUE;
  d.data = reinterpret_cast<const unsigned char*>(
      resolve(ptr, (d.height - 1) * d.pitch + d.width * format_bytes(format) * channels));
  if (!d.data) return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectCreate: the texels are not inside one device allocation");
  d.kind = static_cast<uint32_t>(r->type);
  d.format = static_cast<uint32_t>(format);
  d.channels = channels;
  d.address[0] = static_cast<uint32_t>(t->address[0]);
  d.address[1] = static_cast<uint32_t>(t->address[1]);
  d.filter = static_cast<uint32_t>(t->filter);
  d.flags = t->flags & 3u;
  std::memcpy(d.border, t->border, sizeof d.border);
  d.magic = DCSIM_TEXTURE_MAGIC;
  std::lock_guard<std::mutex> lock(g_textures_mutex);
  textures().push_back(d);
  *out = reinterpret_cast<uintptr_t>(&textures().back());  // a deque keeps its elements in place
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuTexObjectDestroy(unsigned long long handle) {
  if (!sim()) return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> lock(g_textures_mutex);
  for (auto& d : textures())
    if (reinterpret_cast<uintptr_t>(&d) == handle && d.magic == DCSIM_TEXTURE_MAGIC) {
      d.magic = 0;
      return CUDA_SUCCESS;
    }
  return fail(CUDA_ERROR_INVALID_VALUE, "cuTexObjectDestroy: not a live texture object");
}
