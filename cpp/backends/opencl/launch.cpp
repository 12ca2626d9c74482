// launch(): argument marshalling, work sizes and the NDRange enqueue.
#include <mutex>
#include <vector>

#include "objects.h"
#include "ops.h"
#include "status.h"
#include "work_size.h"

namespace dcl {
namespace {

std::string kernel_label(const dc_kernel_s& k) { return "kernel '" + k.name + "' on " + k.device->name; }

dc_status set_arg(dc_kernel_s& k, cl_uint index, size_t size, const void* value, const char* kind) {
  cl_int err = api().clSetKernelArg(k.kernel.get(), index, size, value);
  if (err == CL_SUCCESS) return DC_OK;
  return fail_cl("clSetKernelArg", err, DC_ERROR_LAUNCH,
                 kernel_label(k) + ": argument " + std::to_string(index) + " (" + kind + ", " +
                     std::to_string(size) + " bytes) does not fit the parameter");
}

// A buffer view as a kernel argument: a sub-buffer of the allocation (OpenCL has no pointer
// offsets for kernel arguments). Its origin must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN;
// anything else is refused: a copy would take the kernel's writes and lose them.
dc_status sub_buffer(dc_kernel_s& k, uint32_t index, const dc_buffer_region* region, std::vector<Mem>* keep,
                     cl_mem* out) {
  if (region == nullptr || region->bytes == 0) {
    return fail(DC_ERROR_INVALID_ARGUMENT, kernel_label(k) + ": buffer region argument " + std::to_string(index) +
                                               " is empty or missing");
  }
  const uint64_t align = k.device->base_addr_align_bytes;
  if (align > 1 && region->offset % align != 0) {
    return fail(DC_ERROR_UNSUPPORTED,
                kernel_label(k) + ": argument " + std::to_string(index) + " is a buffer view starting " +
                    std::to_string(region->offset) + " bytes into its buffer; OpenCL sub-buffers on this device "
                    "must start at a multiple of " + std::to_string(align) +
                    " bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN), so the view cannot be passed without a copy");
  }
  cl_buffer_region r{static_cast<size_t>(region->offset), static_cast<size_t>(region->bytes)};
  cl_int err = CL_SUCCESS;
  cl_mem parent = reinterpret_cast<cl_mem>(static_cast<uintptr_t>(region->buffer));
  cl_mem sub = api().clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  if (err != CL_SUCCESS || sub == nullptr) {
    return fail_cl("clCreateSubBuffer", err, err == CL_MISALIGNED_SUB_BUFFER_OFFSET ? DC_ERROR_UNSUPPORTED : DC_ERROR_LAUNCH,
                   kernel_label(k) + ": argument " + std::to_string(index) + " (a buffer view of " +
                       std::to_string(region->bytes) + " bytes from byte " + std::to_string(region->offset) + ")");
  }
  keep->emplace_back(sub);
  *out = sub;
  return DC_OK;
}

// Sets every argument; `local_bytes` gets the work-group memory they ask for. Sub-buffers made
// for views go to `keep`: released once the launch is enqueued (the command holds its own
// reference until it has run).
dc_status set_args(dc_kernel_s& k, const dc_kernel_arg* args, uint32_t nargs, uint64_t* local_bytes,
                   std::vector<Mem>* keep) {
  for (uint32_t i = 0; i < nargs; ++i) {
    const dc_kernel_arg& a = args[i];
    dc_status st = DC_OK;
    switch (a.kind) {
      case DC_ARG_BUFFER: {
        cl_mem mem = reinterpret_cast<cl_mem>(static_cast<uintptr_t>(a.value.buffer));
        st = set_arg(k, i, sizeof(mem), &mem, "buffer");
        break;
      }
      case DC_ARG_BUFFER_REGION: {
        cl_mem mem = nullptr;
        st = sub_buffer(k, i, a.value.region, keep, &mem);
        if (st == DC_OK) st = set_arg(k, i, sizeof(mem), &mem, "buffer view");
        break;
      }
      case DC_ARG_SCALAR:
        if (a.value.scalar == nullptr || a.size == 0) {
          return fail(DC_ERROR_INVALID_ARGUMENT,
                      kernel_label(k) + ": scalar argument " + std::to_string(i) + " has no value");
        }
        st = set_arg(k, i, a.size, a.value.scalar, "scalar");
        break;
      case DC_ARG_LOCAL:
        if (a.size == 0) {
          return fail(DC_ERROR_INVALID_ARGUMENT,
                      kernel_label(k) + ": __local argument " + std::to_string(i) + " has size 0");
        }
        *local_bytes += a.size;
        st = set_arg(k, i, a.size, nullptr, "__local");
        break;
      default:
        return fail(DC_ERROR_INVALID_ARGUMENT,
                    kernel_label(k) + ": argument " + std::to_string(i) + " has unknown kind " + std::to_string(a.kind));
    }
    if (st != DC_OK) return st;
  }
  return DC_OK;
}

}  // namespace

dc_status launch(dc_stream s, dc_kernel k, const dc_launch_config* given, const dc_kernel_arg* args,
                 uint32_t nargs) {
  return guarded([&] {
    if (s == nullptr || k == nullptr || given == nullptr || (nargs > 0 && args == nullptr)) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: null stream, kernel, config or arguments");
    }
    dc_launch_config normalized;  // the struct_size rule (backend_abi.h): absent fields are 0
    if (!dc_read_launch_config(given, &normalized)) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: dc_launch_config.struct_size (" +
                                                 std::to_string(given->struct_size) +
                                                 ") is smaller than DC_LAUNCH_CONFIG_MIN_SIZE");
    }
    const dc_launch_config* config = &normalized;
    if (s->device != k->device) {
      return fail(DC_ERROR_INVALID_ARGUMENT, kernel_label(*k) + " cannot run on a stream of another device");
    }
    // Dynamic work-group memory is the OpenCL form of CUDA's extern __shared__:
    // one trailing __local argument of that size.
    uint32_t expected = nargs + (config->dynamic_shared_bytes > 0 ? 1 : 0);
    if (expected != k->num_args) {
      return fail(DC_ERROR_LAUNCH, kernel_label(*k) + " takes " + std::to_string(k->num_args) + " arguments, " +
                                       std::to_string(expected) + " given" +
                                       (config->dynamic_shared_bytes > 0 ? " (counting the dynamic __local one)" : ""));
    }

    WorkLimits limits;
    limits.kernel_limit = k->work_group_limit;
    limits.preferred_multiple = k->preferred_multiple;
    limits.pow2_groups = k->device->builds_per_local_size;
    for (int d = 0; d < 3; ++d) limits.max_item_sizes[d] = k->device->max_work_item_sizes[d];
    WorkSizes sizes;
    std::string why;
    if (!choose_work_sizes(*config, limits, &sizes, &why)) return fail(DC_ERROR_LAUNCH, kernel_label(*k) + ": " + why);
    if (sizes.empty) return DC_OK;

    std::lock_guard<std::mutex> lock(k->launch_mutex);
    uint64_t local_bytes = k->static_local_bytes;
    std::vector<Mem> views;  // sub-buffers of view arguments, released after the enqueue
    if (dc_status st = set_args(*k, args, nargs, &local_bytes, &views); st != DC_OK) return st;
    if (config->dynamic_shared_bytes > 0) {
      local_bytes += config->dynamic_shared_bytes;
      if (dc_status st = set_arg(*k, nargs, config->dynamic_shared_bytes, nullptr, "dynamic __local");
          st != DC_OK) {
        return st;
      }
    }
    if (k->device->local_memory != 0 && local_bytes > k->device->local_memory) {
      return fail(DC_ERROR_LAUNCH, kernel_label(*k) + " needs " + std::to_string(local_bytes) +
                                       " bytes of work-group memory; the device has " +
                                       std::to_string(k->device->local_memory) + " (CL_DEVICE_LOCAL_MEM_SIZE)");
    }
    cl_int err = api().clEnqueueNDRangeKernel(s->queue.get(), k->kernel.get(), sizes.dims, nullptr, sizes.global,
                                              sizes.local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string shape = "global (" + std::to_string(sizes.global[0]) + ", " + std::to_string(sizes.global[1]) +
                          ", " + std::to_string(sizes.global[2]) + "), local (" + std::to_string(sizes.local[0]) +
                          ", " + std::to_string(sizes.local[1]) + ", " + std::to_string(sizes.local[2]) + ")";
      return fail_cl("clEnqueueNDRangeKernel", err, DC_ERROR_LAUNCH, kernel_label(*k) + " with " + shape);
    }
    return DC_OK;
  });
}

}  // namespace dcl
