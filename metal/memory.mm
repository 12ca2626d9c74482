// Memory: MTLBuffers, and stream-ordered copies between them and the host.
//
// Storage mode, chosen per allocation:
//  - shared (the default, and always on unified memory, i.e. Apple silicon): the dc_devptr is the
//    buffer's `contents` address and mem_host_pointer returns it, so the core views and copies
//    the buffer in place (DC_FEATURE_HOST_VISIBLE_MEMORY): numpy views without copies;
//  - private, for allocations of at least kPrivateStorageMinBytes on a device without unified
//    memory (a discrete GPU in an Intel Mac): the buffer lives in the GPU's own memory, which its
//    kernels reach at full speed instead of across PCIe; the host cannot address it (`contents`
//    is NULL), so the core keeps a host mirror and every copy is a blit through a shared staging
//    buffer. Small allocations stay shared there: they are mostly results the host reads back
//    (a dc.sum), for which a staged round trip costs more than slow GPU reads.
#include <cstring>

#include "state.h"

namespace dcmtl {

namespace {

Stream* as_stream(dc_stream s) { return reinterpret_cast<Stream*>(s); }

// Private buffers' handles: bit 63 set (no user-space address has it), 4 KiB apart, never reused.
constexpr uintptr_t kPrivateBase = uintptr_t(1) << 63;
constexpr uintptr_t kPrivateAlign = 4096;

bool is_private(id<MTLBuffer> b) { return [b storageMode] == MTLStorageModePrivate; }

dc_status check_range(id<MTLBuffer> b, uint64_t offset, uint64_t bytes, const char* what) {
  if (offset > [b length] || bytes > [b length] - offset) {
    return fail(DC_ERROR_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " +
                                               std::to_string(offset) + " exceed a buffer of " +
                                               std::to_string([b length]) + " bytes");
  }
  return DC_OK;
}

}  // namespace

dc_status find_buffer(Device* dev, dc_devptr ptr, id<MTLBuffer>* buffer, uint64_t* offset) {
  std::lock_guard<std::mutex> lock(dev->buffers_mutex);
  auto it = dev->buffers.upper_bound(static_cast<uintptr_t>(ptr));
  if (it != dev->buffers.begin()) {
    --it;
    uint64_t off = ptr - it->first;
    if (off < std::max<uint64_t>([it->second.get() length], 1)) {
      *buffer = it->second.get();
      *offset = off;
      return DC_OK;
    }
  }
  return fail(DC_ERROR_INVALID_ARGUMENT, "0x" + [&] {
    char b[32];
    snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(ptr));
    return std::string(b);
  }() + " is not memory of this Metal device");
}

dc_status mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_alloc: out is null");
    id<MTLDevice> d = dev->device.get();
    if (bytes > [d maxBufferLength]) {
      return fail(DC_ERROR_OUT_OF_MEMORY, "Metal: " + std::to_string(bytes) + " bytes exceed the device's " +
                                              "largest buffer (" + std::to_string([d maxBufferLength]) + " bytes)");
    }
    // A zero-byte buffer has no contents address: allocate a small one.
    NSUInteger length = bytes == 0 ? 16 : static_cast<NSUInteger>(bytes);
    const bool private_storage = !dev->unified && bytes >= kPrivateStorageMinBytes;
    MTLResourceOptions storage = private_storage ? MTLResourceStorageModePrivate : MTLResourceStorageModeShared;
    Owned<id<MTLBuffer>> buf = Owned<id<MTLBuffer>>::adopt(
        [d newBufferWithLength:length options:storage | MTLResourceHazardTrackingModeDefault]);
    if (!buf) {
      return fail(DC_ERROR_OUT_OF_MEMORY, "Metal: newBufferWithLength failed for " + std::to_string(bytes) +
                                              " bytes (out of device memory)");
    }
    std::lock_guard<std::mutex> lock(dev->buffers_mutex);
    uintptr_t addr = 0;
    if (private_storage) {
      if (dev->next_private == 0) dev->next_private = kPrivateBase;
      addr = dev->next_private;
      dev->next_private += (length + kPrivateAlign - 1) / kPrivateAlign * kPrivateAlign;
      ++dev->private_buffers;
    } else {
      addr = reinterpret_cast<uintptr_t>([buf.get() contents]);
    }
    dev->allocated_bytes += length;
    dev->buffers[addr] = std::move(buf);
    *out = addr;
    return DC_OK;
  });
}

dc_status mem_free(int32_t device, dc_devptr ptr) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    std::lock_guard<std::mutex> lock(dev->buffers_mutex);
    auto it = dev->buffers.find(static_cast<uintptr_t>(ptr));
    if (it == dev->buffers.end()) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_free: not a Metal allocation");
    dev->allocated_bytes -= [it->second.get() length];
    if (is_private(it->second.get())) --dev->private_buffers;
    dev->buffers.erase(it);  // command buffers still using it hold their own reference
    return DC_OK;
  });
}

dc_status mem_host_pointer(int32_t device, dc_devptr ptr, void** out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_host_pointer: out is null");
    id<MTLBuffer> b = nil;
    uint64_t off = 0;
    if (dc_status r = find_buffer(dev, ptr, &b, &off); r != DC_OK) return r;
    *out = is_private(b) ? nullptr : static_cast<char*>([b contents]) + off;
    return DC_OK;
  });
}

// native_handle(): the MTLBuffer behind a dc_devptr (DC_NATIVE_BUFFER: DLPack's kDLMetal data pointer)
// and back (DC_NATIVE_BUFFER_ADDRESS: an imported MTLBuffer's allocation). Every device is searched:
// the call names no device. Streams and contexts have no handle here (no vendor library uses them).
dc_status native_handle(uint32_t kind, uint64_t object, uint64_t* out) {
  return guarded([&] {
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: out is null");
    if (kind == DC_NATIVE_BUFFER) {
      Device* dev = nullptr;
      for (int32_t i = 0; get_device(i, &dev) == DC_OK; ++i) {
        id<MTLBuffer> b = nil;
        uint64_t off = 0;
        if (find_buffer(dev, object, &b, &off) == DC_OK) {
          if (off != 0) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: not the start of a Metal allocation");
          *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b));
          return DC_OK;
        }
      }
      return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: not memory of a Metal device");
    }
    if (kind == DC_NATIVE_BUFFER_ADDRESS) {
      Device* dev = nullptr;
      for (int32_t i = 0; get_device(i, &dev) == DC_OK; ++i) {
        std::lock_guard<std::mutex> lock(dev->buffers_mutex);
        for (const auto& entry : dev->buffers) {
          if (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(entry.second.get())) == object) {
            *out = entry.first;
            return DC_OK;
          }
        }
      }
      return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: the MTLBuffer is not one of this plugin's allocations");
    }
    return fail(DC_ERROR_UNSUPPORTED, "native_handle: Metal has no native object of kind " + std::to_string(kind));
  });
}

dc_status memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr || (src == nullptr && bytes)) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_h2d: null");
    if (bytes == 0) return DC_OK;
    id<MTLBuffer> b = nil;
    uint64_t off = 0;
    if (dc_status r = find_buffer(st->device, dst + dst_offset, &b, &off); r != DC_OK) return r;
    if (dc_status r = check_range(b, off, bytes, "memcpy_h2d"); r != DC_OK) return r;
    // Stream order without blocking: the host bytes go to a staging buffer now and a blit
    // puts them in place after the work already queued.
    Owned<id<MTLBuffer>> staging = Owned<id<MTLBuffer>>::adopt(
        [st->device->device.get() newBufferWithBytes:src length:bytes options:MTLResourceStorageModeShared]);
    if (!staging) return fail(DC_ERROR_OUT_OF_MEMORY, "memcpy_h2d: no memory for a staging buffer");
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
    [blit copyFromBuffer:staging.get() sourceOffset:0 toBuffer:b destinationOffset:off size:bytes];
    [blit endEncoding];
    commit(st, cb);
    return DC_OK;
  });
}

dc_status memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr || (dst == nullptr && bytes)) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_d2h: null");
    if (bytes == 0) return DC_OK;
    id<MTLBuffer> b = nil;
    uint64_t off = 0;
    if (dc_status r = find_buffer(st->device, src + src_offset, &b, &off); r != DC_OK) return r;
    if (dc_status r = check_range(b, off, bytes, "memcpy_d2h"); r != DC_OK) return r;
    if (!is_private(b)) {
      // Shared storage: once the queued work is done the bytes are readable in place.
      if (dc_status r = wait_stream(st); r != DC_OK) return r;
      std::memcpy(dst, static_cast<const char*>([b contents]) + off, bytes);
      return DC_OK;
    }
    // Private storage: the GPU copies the bytes into a shared staging buffer after the queued
    // work, and the host reads them from there.
    Owned<id<MTLBuffer>> staging = Owned<id<MTLBuffer>>::adopt(
        [st->device->device.get() newBufferWithLength:bytes options:MTLResourceStorageModeShared]);
    if (!staging) return fail(DC_ERROR_OUT_OF_MEMORY, "memcpy_d2h: no memory for a staging buffer");
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
    [blit copyFromBuffer:b sourceOffset:off toBuffer:staging.get() destinationOffset:0 size:bytes];
    [blit endEncoding];
    commit(st, cb);
    if (dc_status r = wait_stream(st); r != DC_OK) return r;
    std::memcpy(dst, [staging.get() contents], bytes);
    return DC_OK;
  });
}

dc_status memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                     uint64_t bytes) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_d2d: null stream");
    if (bytes == 0) return DC_OK;
    id<MTLBuffer> db = nil, sb = nil;
    uint64_t doff = 0, soff = 0;
    if (dc_status r = find_buffer(st->device, dst + dst_offset, &db, &doff); r != DC_OK) return r;
    if (dc_status r = find_buffer(st->device, src + src_offset, &sb, &soff); r != DC_OK) return r;
    if (dc_status r = check_range(db, doff, bytes, "memcpy_d2d"); r != DC_OK) return r;
    if (dc_status r = check_range(sb, soff, bytes, "memcpy_d2d"); r != DC_OK) return r;
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
    [blit copyFromBuffer:sb sourceOffset:soff toBuffer:db destinationOffset:doff size:bytes];
    [blit endEncoding];
    commit(st, cb);
    return DC_OK;
  });
}

dc_status memset_d8(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes) {
  return guarded([&] {
    Stream* st = as_stream(s);
    if (st == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "memset_d8: null stream");
    if (bytes == 0) return DC_OK;
    id<MTLBuffer> b = nil;
    uint64_t off = 0;
    if (dc_status r = find_buffer(st->device, dst + offset, &b, &off); r != DC_OK) return r;
    if (dc_status r = check_range(b, off, bytes, "memset_d8"); r != DC_OK) return r;
    id<MTLCommandBuffer> cb = [st->queue.get() commandBuffer];
    id<MTLBlitCommandEncoder> blit = [cb blitCommandEncoder];
    [blit fillBuffer:b range:NSMakeRange(static_cast<NSUInteger>(off), static_cast<NSUInteger>(bytes)) value:value];
    [blit endEncoding];
    commit(st, cb);
    return DC_OK;
  });
}

}  // namespace dcmtl
