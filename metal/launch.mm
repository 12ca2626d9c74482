// Launches: one compute encoder per launch, arguments bound exactly as the emitted MSL
// declares them (expanded parameter i is [[buffer(i)]]: buffers by setBuffer:offset:, scalars
// by setBytes:, work-group memory arguments by setThreadgroupMemoryLength:), dispatched with
// dispatchThreads (non-uniform threadgroups) where the GPU family has it, else with
// dispatchThreadgroups when the threadgroup size divides the grid.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "state.h"

namespace dcmtl {

namespace {

// A threadgroup shape within `limit` threads, not larger than the grid.
void choose_group(const uint64_t* grid, uint32_t dims, uint32_t limit, bool must_divide, uint64_t* group) {
  group[0] = group[1] = group[2] = 1;
  uint64_t budget = std::max<uint32_t>(limit, 1);
  // the fastest dimension first (the emitted kernels index dimension 0 contiguously)
  for (uint32_t d = 0; d < dims; ++d) {
    uint64_t want = d + 1 < dims ? std::min<uint64_t>(budget, d == 0 ? 32 : 8) : budget;
    uint64_t g = std::min<uint64_t>(grid[d], std::max<uint64_t>(want, 1));
    if (must_divide) {
      while (g > 1 && grid[d] % g != 0) --g;
    }
    group[d] = std::max<uint64_t>(g, 1);
    budget = std::max<uint64_t>(budget / group[d], 1);
  }
}

}  // namespace

dc_status launch(dc_stream s, dc_kernel k, const dc_launch_config* config_in, const dc_kernel_arg* args,
                 uint32_t nargs) {
  return guarded([&] {
    Stream* st = reinterpret_cast<Stream*>(s);
    Kernel* kern = reinterpret_cast<Kernel*>(k);
    if (st == nullptr || kern == nullptr || config_in == nullptr || (args == nullptr && nargs > 0)) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: null argument");
    }
    // The struct_size rule: fields the caller's struct does not cover read as 0.
    const uint32_t min_size = static_cast<uint32_t>(offsetof(dc_launch_config, flags));
    if (config_in->struct_size < min_size) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: dc_launch_config.struct_size " +
                                                 std::to_string(config_in->struct_size) + " is too small");
    }
    dc_launch_config copy;
    std::memset(&copy, 0, sizeof copy);
    std::memcpy(&copy, config_in, std::min<size_t>(config_in->struct_size, sizeof copy));
    const dc_launch_config* config = &copy;
    if (config->dims < 1 || config->dims > 3) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: dims must be 1 to 3, got " + std::to_string(config->dims));
    }
    Device* dev = st->device;
    if (kern->module->device != dev) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch: the kernel was built for another Metal device");
    }
    id<MTLComputePipelineState> ps = kern->pipeline.get();
    uint64_t grid[3] = {1, 1, 1};
    for (uint32_t d = 0; d < config->dims; ++d) grid[d] = config->global_size[d];
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return DC_OK;  // nothing to run
    uint32_t limit = static_cast<uint32_t>(std::min<NSUInteger>([ps maxTotalThreadsPerThreadgroup], dev->max_threads));
    uint64_t group[3] = {1, 1, 1};
    bool chosen = config->local_size[0] == 0 && config->local_size[1] == 0 && config->local_size[2] == 0;
    if (chosen) {
      choose_group(grid, config->dims, limit, !dev->nonuniform, group);
    } else {
      for (uint32_t d = 0; d < 3; ++d) group[d] = d < config->dims ? std::max<uint32_t>(config->local_size[d], 1) : 1;
    }
    uint64_t threads = group[0] * group[1] * group[2];
    if (threads > limit) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "launch of " + kern->name + ": a threadgroup of " +
                                                 std::to_string(threads) + " threads exceeds the pipeline's limit of " +
                                                 std::to_string(limit));
    }
    if (!dev->nonuniform) {
      for (uint32_t d = 0; d < 3; ++d) {
        if (grid[d] % group[d] != 0) {
          return fail(DC_ERROR_UNSUPPORTED,
                      "launch of " + kern->name + ": this GPU family has no non-uniform threadgroups, so the global "
                      "size must be a multiple of the local size (dimension " + std::to_string(d) + ": " +
                      std::to_string(grid[d]) + " vs " + std::to_string(group[d]) + ")");
        }
      }
    }
    // Threadgroup memory: the pipeline's own (`threadgroup T x[N];`) plus every length set below must
    // fit the device's maximum, else Metal's validation stops the process (or the encoder faults): a
    // clear error instead, naming the lengths (RawKernel(shared_mem=) sets [[threadgroup(0)]]'s).
    uint64_t threadgroup_bytes = [ps staticThreadgroupMemoryLength];
    const uint64_t dynamic_bytes = (static_cast<uint64_t>(config->dynamic_shared_bytes) + 15u) & ~uint64_t(15);
    threadgroup_bytes += dynamic_bytes;
    for (uint32_t i = 0; i < nargs; ++i)
      if (args[i].kind == DC_ARG_LOCAL) threadgroup_bytes += (static_cast<uint64_t>(args[i].size) + 15u) & ~uint64_t(15);
    const uint64_t threadgroup_max = [dev->device.get() maxThreadgroupMemoryLength];
    if (threadgroup_bytes > threadgroup_max) {
      return fail(DC_ERROR_LAUNCH, "launch of " + kern->name + ": " + std::to_string(threadgroup_bytes) +
                                       " bytes of threadgroup memory (" + std::to_string(dynamic_bytes) +
                                       " for [[threadgroup(0)]] from shared_mem, " +
                                       std::to_string([ps staticThreadgroupMemoryLength]) +
                                       " declared in the kernel) exceed the device's " +
                                       std::to_string(threadgroup_max));
    }
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
    [enc setComputePipelineState:ps];
    NSUInteger threadgroup_index = 0;
    if (config->dynamic_shared_bytes > 0) {
      // Metal wants threadgroup memory lengths in multiples of 16 bytes.
      [enc setThreadgroupMemoryLength:(config->dynamic_shared_bytes + 15u) & ~15u atIndex:threadgroup_index++];
    }
    for (uint32_t i = 0; i < nargs; ++i) {
      const dc_kernel_arg& a = args[i];
      switch (a.kind) {
        case DC_ARG_BUFFER: {
          id<MTLBuffer> b = nil;
          uint64_t off = 0;
          if (dc_status r = find_buffer(dev, a.value.buffer, &b, &off); r != DC_OK) {
            [enc endEncoding];
            return fail(r, "launch of " + kern->name + ", argument " + std::to_string(i) + ": " + last_error());
          }
          [enc setBuffer:b offset:static_cast<NSUInteger>(off) atIndex:i];
          break;
        }
        case DC_ARG_BUFFER_REGION: {  // a view: the same MTLBuffer, bound at the view's offset
          id<MTLBuffer> b = nil;
          uint64_t off = 0;
          dc_status r = a.value.region == nullptr ? DC_ERROR_INVALID_ARGUMENT
                                                  : find_buffer(dev, a.value.region->buffer, &b, &off);
          if (r == DC_OK && off + a.value.region->offset + a.value.region->bytes > [b length]) {
            r = DC_ERROR_INVALID_ARGUMENT;
          }
          if (r != DC_OK) {
            [enc endEncoding];
            return fail(r, "launch of " + kern->name + ", argument " + std::to_string(i) +
                               ": the buffer region is not inside one buffer of this device");
          }
          [enc setBuffer:b offset:static_cast<NSUInteger>(off + a.value.region->offset) atIndex:i];
          break;
        }
        case DC_ARG_SCALAR:
          if (a.value.scalar == nullptr || a.size == 0) {
            [enc endEncoding];
            return fail(DC_ERROR_INVALID_ARGUMENT, "launch of " + kern->name + ": scalar argument " +
                                                       std::to_string(i) + " has no bytes");
          }
          [enc setBytes:a.value.scalar length:a.size atIndex:i];  // copied now, as the ABI asks
          break;
        case DC_ARG_LOCAL:
          [enc setThreadgroupMemoryLength:(a.size + 15u) & ~15u atIndex:threadgroup_index++];
          break;
        default:
          [enc endEncoding];
          return fail(DC_ERROR_INVALID_ARGUMENT, "launch: unknown argument kind " + std::to_string(a.kind));
      }
    }
    MTLSize tg = MTLSizeMake(group[0], group[1], group[2]);
    if (dev->nonuniform) {
      [enc dispatchThreads:MTLSizeMake(grid[0], grid[1], grid[2]) threadsPerThreadgroup:tg];
    } else {
      [enc dispatchThreadgroups:MTLSizeMake(grid[0] / group[0], grid[1] / group[1], grid[2] / group[2])
          threadsPerThreadgroup:tg];
    }
    [enc endEncoding];
    commit(st, cb);
    return DC_OK;
  });
}

}  // namespace dcmtl
