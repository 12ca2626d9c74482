#include "dotcompute/launch_plan.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "dotcompute/accelerator.hpp"
#include "dotcompute/buffer.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/stream.hpp"

namespace dotcompute {

namespace {

// Storage for one converted scalar or extent; the plugin copies it before
// launch() returns.
union ScalarSlot {
  int64_t i64;
  uint64_t u64;
  double f64;
  float f32;
  unsigned char bytes[8];
};

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
  if (exp >= 31) return uint16_t(sign | 0x7c00u);                                            // overflow -> inf
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);  // underflow -> signed zero
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct rounding
  return uint16_t(half);
}

[[noreturn]] void arg_error(const Kernel& k, const ParamSpec& p, const std::string& what) {
  throw InvalidArgumentError("argument '" + p.name + "' of kernel '" + k.name() + "': " + what, p.name);
}

const char* value_kind(const ArgValue& v) {
  switch (v.index()) {
    case 0: return "a device buffer";
    case 1: return "an array";
    case 2: return "an int";
    case 3: return "a float";
    default: return "a bool";
  }
}

template <typename T>
void store(ScalarSlot& slot, T v) {
  std::memcpy(slot.bytes, &v, sizeof v);
}

// Converts a Python-level scalar to the parameter's dtype; returns its size.
uint32_t convert_scalar(const Kernel& k, const ParamSpec& p, const ArgValue& v, ScalarSlot& slot) {
  const DType t = p.dtype;
  if (const bool* b = std::get_if<bool>(&v)) {
    switch (t) {
      case DType::Bool: store<uint8_t>(slot, *b ? 1 : 0); return 1;
      case DType::Float16: store<uint16_t>(slot, float_to_half(*b ? 1.0f : 0.0f)); return 2;
      case DType::Float32: store<float>(slot, *b ? 1.0f : 0.0f); return 4;
      case DType::Float64: store<double>(slot, *b ? 1.0 : 0.0); return 8;
      default: break;
    }
    // Integers take a bool as 0/1, like Python.
    store<int64_t>(slot, *b ? 1 : 0);
    return static_cast<uint32_t>(itemsize(t));  // little-endian: the low bytes hold the value
  }
  if (const int64_t* i = std::get_if<int64_t>(&v)) {
    const int64_t x = *i;
    switch (t) {
      case DType::Bool: arg_error(k, p, "expected a bool, got an int");
      case DType::Float16: store<uint16_t>(slot, float_to_half(static_cast<float>(x))); return 2;
      case DType::Float32: store<float>(slot, static_cast<float>(x)); return 4;
      case DType::Float64: store<double>(slot, static_cast<double>(x)); return 8;
      default: break;
    }
    int64_t lo = 0;
    uint64_t hi = 0;
    switch (t) {
      case DType::Int8: lo = INT8_MIN; hi = INT8_MAX; break;
      case DType::UInt8: hi = UINT8_MAX; break;
      case DType::Int16: lo = INT16_MIN; hi = INT16_MAX; break;
      case DType::UInt16: hi = UINT16_MAX; break;
      case DType::Int32: lo = INT32_MIN; hi = INT32_MAX; break;
      case DType::UInt32: hi = UINT32_MAX; break;
      case DType::Int64: lo = INT64_MIN; hi = INT64_MAX; break;
      default: lo = INT64_MIN; hi = UINT64_MAX; break;  // UInt64: the int64 carries the value's 64 bits
      // (2**63 and more arrive negative; the Python layer, which sees the real value, checks the sign)
    }
    if (x < lo || (x >= 0 && static_cast<uint64_t>(x) > hi)) {
      arg_error(k, p, "the value " + std::to_string(x) + " does not fit in " + dtype_name(t));
    }
    store<int64_t>(slot, x);
    return static_cast<uint32_t>(itemsize(t));
  }
  const double d = std::get<double>(v);
  switch (t) {
    case DType::Float16: store<uint16_t>(slot, float_to_half(static_cast<float>(d))); return 2;
    case DType::Float32: store<float>(slot, static_cast<float>(d)); return 4;
    case DType::Float64: store<double>(slot, d); return 8;
    default: break;
  }
  arg_error(k, p, std::string("expected ") + (t == DType::Bool ? "a bool" : std::string("an int (") + dtype_name(t) + ")") +
                      ", got a float");
}

uint32_t untyped_scalar(const ArgValue& v, ScalarSlot& slot) {
  if (const bool* b = std::get_if<bool>(&v)) {
    store<uint8_t>(slot, *b ? 1 : 0);
    return 1;
  }
  if (const int64_t* i = std::get_if<int64_t>(&v)) {
    store<int64_t>(slot, *i);
    return 8;
  }
  store<double>(slot, std::get<double>(v));
  return 8;
}

}  // namespace

LaunchPlan::LaunchPlan(std::shared_ptr<Kernel> kernel, std::vector<ParamSpec> params, bool raw)
    : kernel_(std::move(kernel)), params_(std::move(params)), raw_(raw), untyped_(raw && params_.empty()) {
  for (const auto& p : params_) {
    if (p.kind == ParamKind::Buffer) {
      if (!raw_ && (p.ndim < 1 || p.ndim > 3)) {
        throw InvalidArgumentError("buffer parameter '" + p.name + "' of kernel '" + kernel_->name() +
                                       "' must have 1 to 3 dimensions, has " + std::to_string(p.ndim),
                                   p.name);
      }
      expanded_ += 1 + (raw_ ? 0 : static_cast<size_t>(p.ndim));
    } else {
      expanded_ += 1;
    }
  }
}

bool LaunchPlan::indices_fit(const LaunchConfig& config, const ArgValue* args, size_t nargs) const noexcept {
  for (const IndexFact& f : facts_) {
    if (f.arg >= nargs) return false;
    Buffer* const* bp = std::get_if<Buffer*>(&args[f.arg]);
    if (bp == nullptr || *bp == nullptr) return false;
    const Shape& shape = (*bp)->shape();
    if (f.dim >= shape.size()) continue;
    const uint64_t g = f.gid < config.dims ? config.global_size[f.gid] : 1;
    // 128 bits: scale * (g - 1) of a huge launch must not wrap into an index that looks in range
    const __int128 top = static_cast<__int128>(f.scale) * static_cast<__int128>(g - 1) + f.offset;
    if (top >= static_cast<__int128>(shape[f.dim])) return false;
  }
  return true;
}

void LaunchPlan::launch(const LaunchConfig& config, const ArgValue* args, size_t nargs, Stream* stream) {
  Accelerator& acc = kernel_->accelerator();
  Stream& s = stream ? *stream : acc.default_stream();
  if (!untyped_ && nargs != params_.size()) {
    throw InvalidArgumentError("kernel '" + kernel_->name() + "' takes " + std::to_string(params_.size()) +
                               " arguments, got " + std::to_string(nargs));
  }
  const size_t total = untyped_ ? nargs : expanded_;
  // Fixed stack storage covers every realistic signature; only a huge one allocates.
  dc_kernel_arg inline_args[kInlineArgs];
  ScalarSlot inline_slots[kInlineArgs];
  std::unique_ptr<dc_kernel_arg[]> heap_args;
  std::unique_ptr<ScalarSlot[]> heap_slots;
  // Regions of buffer views (written only for a view at an offset; left uninitialised otherwise).
  dc_buffer_region inline_regions[kInlineArgs];
  std::unique_ptr<dc_buffer_region[]> heap_regions;
  dc_kernel_arg* packed = inline_args;
  ScalarSlot* slots = inline_slots;
  dc_buffer_region* regions = inline_regions;
  if (total > kInlineArgs) {
    heap_args.reset(new dc_kernel_arg[total]);
    heap_slots.reset(new ScalarSlot[total]);
    heap_regions.reset(new dc_buffer_region[total]);
    packed = heap_args.get();
    slots = heap_slots.get();
    regions = heap_regions.get();
  }

  static const ParamSpec kAny{};
  bool host_arrays = false;
  size_t n = 0;
  for (size_t i = 0; i < nargs; ++i) {
    const ArgValue& v = args[i];
    const ParamSpec& p = untyped_ ? kAny : params_[i];
    const bool want_buffer = untyped_ ? (v.index() <= 1) : p.kind == ParamKind::Buffer;
    if (want_buffer) {
      dc_devptr ptr = 0;
      int ndim = 0;
      const int64_t* shape = nullptr;
      DType dtype = DType::Float32;
      if (Buffer* const* bp = std::get_if<Buffer*>(&v)) {
        Buffer* b = *bp;
        if (b == nullptr) arg_error(*kernel_, p, "expected a buffer, got None");
        if (&b->accelerator() != &acc) {
          arg_error(*kernel_, p, "the buffer lives on " + b->accelerator().id() + ", the kernel runs on " + acc.id());
        }
        dtype = b->dtype();
        ndim = b->ndim();
        shape = b->shape().data();
        ptr = 0;  // taken after the checks, as it may enqueue an upload
      } else if (const HostArray* h = std::get_if<HostArray>(&v)) {
        if (!acc.unified_memory() || !h->contiguous) {
          throw NeedsStaging("argument '" + p.name + "' of kernel '" + kernel_->name() + "' is a host array; " +
                                 (h->contiguous ? acc.id() + " has no unified memory" : "it is not C-contiguous"),
                             p.name, i);
        }
        if (!untyped_ && p.written && !h->writable) arg_error(*kernel_, p, "the kernel writes it, the array is read-only");
        dtype = h->dtype;
        ndim = h->ndim;
        shape = h->shape;
        ptr = static_cast<dc_devptr>(reinterpret_cast<uintptr_t>(h->data));
        host_arrays = true;
      } else {
        arg_error(*kernel_, p, std::string("expected a buffer or array, got ") + value_kind(v));
      }
      if (!untyped_) {
        if (dtype != p.dtype) {
          arg_error(*kernel_, p, std::string("expected ") + dtype_name(p.dtype) + " elements, got " + dtype_name(dtype));
        }
        if (!raw_ && ndim != p.ndim) {
          arg_error(*kernel_, p, "expected " + std::to_string(p.ndim) + " dimension(s), got " + std::to_string(ndim));
        }
      }
      uint64_t offset = 0;
      if (Buffer* const* bp = std::get_if<Buffer*>(&v)) {
        ptr = (*bp)->device_ptr(s);
        offset = (*bp)->byte_offset();  // a view's start in its root's block; 0 for every owning buffer
      }
      if (offset == 0) {
        packed[n].kind = DC_ARG_BUFFER;
        packed[n].size = sizeof(dc_devptr);
        packed[n].value.buffer = ptr;
      } else {
        regions[n] = dc_buffer_region{ptr, offset, std::get<Buffer*>(v)->nbytes()};
        packed[n].kind = DC_ARG_BUFFER_REGION;
        packed[n].size = sizeof(dc_buffer_region);
        packed[n].value.region = &regions[n];
      }
      ++n;
      if (!raw_) {
        for (int d = 0; d < ndim; ++d) {
          slots[n].i64 = shape[d];
          packed[n].kind = DC_ARG_SCALAR;
          packed[n].size = sizeof(int64_t);
          packed[n].value.scalar = slots[n].bytes;
          ++n;
        }
      }
    } else {
      if (v.index() <= 1) arg_error(*kernel_, p, std::string("expected a ") + dtype_name(p.dtype) + " scalar, got " + value_kind(v));
      uint32_t size = untyped_ ? untyped_scalar(v, slots[n]) : convert_scalar(*kernel_, p, v, slots[n]);
      packed[n].kind = DC_ARG_SCALAR;
      packed[n].size = size;
      packed[n].value.scalar = slots[n].bytes;
      ++n;
    }
  }

  kernel_->launch(config, packed, static_cast<uint32_t>(n), s);

  for (size_t i = 0; i < nargs; ++i) {
    if (Buffer* const* bp = std::get_if<Buffer*>(&args[i])) {
      // Raw kernels may write any buffer they get.
      const bool written = untyped_ || raw_ ? true : params_[i].written;
      if (written) {
        (*bp)->mark_device_dirty(s);
      } else {
        (*bp)->mark_used(s);
      }
    }
  }
  // Host arrays are the caller's memory: the results must be there on return.
  if (host_arrays) s.synchronize();
}

}  // namespace dotcompute
