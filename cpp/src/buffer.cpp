#include "dotcompute/buffer.hpp"

#include <cstring>

#include "backend_plugin.hpp"
#include "dotcompute/accelerator.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/event.hpp"
#include "dotcompute/stream.hpp"

namespace dotcompute {

const char* transfer_state_name(TransferState s) noexcept {
  switch (s) {
    case TransferState::DeviceOnly: return "device_only";
    case TransferState::Synchronized: return "synchronized";
    case TransferState::HostDirty: return "host_dirty";
    case TransferState::DeviceDirty: return "device_dirty";
  }
  return "unknown";
}

namespace {
int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      throw InvalidArgumentError("shape[" + std::to_string(d) + "] is negative (" + std::to_string(shape[d]) + ")",
                                 "shape");
    }
    if (shape[d] != 0 && n > INT64_MAX / shape[d]) throw InvalidArgumentError("shape is too large", "shape");
    n *= shape[d];
  }
  return n;
}

void check(dc_status st, const dc_backend* api, const Accelerator& acc, const char* what) {
  if (st != DC_OK) throw_status(st, std::string(what) + " on " + acc.id() + " failed", plugin_error(api));
}
}  // namespace

Buffer::Buffer(std::shared_ptr<Accelerator> accelerator, Shape shape, DType dtype)
    : accelerator_(std::move(accelerator)),
      api_(accelerator_->api()),
      shape_(std::move(shape)),
      dtype_(dtype),
      size_(element_count(shape_)),
      nbytes_(0),
      state_(TransferState::DeviceOnly) {
  if (static_cast<uint64_t>(size_) > UINT64_MAX / itemsize(dtype_)) throw InvalidArgumentError("shape is too large", "shape");
  nbytes_ = static_cast<uint64_t>(size_) * itemsize(dtype_);
  Stream& s = accelerator_->default_stream();
  block_ = accelerator_->memory().allocate(nbytes_ == 0 ? 1 : nbytes_, &s);
  try {
    host_ = accelerator_->host_pointer(block_.ptr);
  } catch (...) {
    accelerator_->memory().deallocate(block_, static_cast<StreamKey>(&s));
    throw;
  }
  // A recycled block may still be in use by queued work on the default stream.
  last_stream_ = s.shared();
  pending_ = true;
  if (host_ != nullptr) state_ = TransferState::Synchronized;
}

std::shared_ptr<Buffer> Buffer::view(const std::shared_ptr<Buffer>& parent, uint64_t byte_offset, Shape shape) {
  if (!parent) throw InvalidArgumentError("view of no buffer", "parent");
  const std::shared_ptr<Buffer>& root = parent->parent_ ? parent->parent_ : parent;
  const uint64_t offset = parent->offset_ + byte_offset;
  // The owning constructor would allocate: the view constructor takes the root's fields instead.
  std::shared_ptr<Buffer> v(new Buffer(root, offset, std::move(shape), 0));
  // A view of a view stays inside that view, not only inside the root.
  if (byte_offset > parent->nbytes_ || v->nbytes_ > parent->nbytes_ - byte_offset) {
    throw InvalidArgumentError("a view of " + std::to_string(v->nbytes_) + " bytes from byte " +
                                   std::to_string(byte_offset) + " does not fit in its buffer of " +
                                   std::to_string(parent->nbytes_) + " bytes",
                               "shape");
  }
  return v;
}

Buffer::Buffer(std::shared_ptr<Buffer> root, uint64_t offset, Shape shape, int /*view tag*/)
    : accelerator_(root->accelerator_),
      api_(root->api_),
      shape_(std::move(shape)),
      dtype_(root->dtype_),
      size_(element_count(shape_)),
      nbytes_(static_cast<uint64_t>(size_) * itemsize(root->dtype_)),
      state_(TransferState::DeviceOnly),
      parent_(std::move(root)),
      offset_(offset) {
  const uint64_t item = itemsize(dtype_);
  if (offset_ % item != 0) {
    throw InvalidArgumentError("a view must start on an element: offset " + std::to_string(offset_) +
                                   " bytes is not a multiple of " + std::to_string(item),
                               "offset");
  }
  if (offset_ > parent_->nbytes_ || nbytes_ > parent_->nbytes_ - offset_) {
    throw InvalidArgumentError("a view of " + std::to_string(nbytes_) + " bytes from byte " + std::to_string(offset_) +
                                   " does not fit in its buffer of " + std::to_string(parent_->nbytes_) + " bytes",
                               "shape");
  }
  if (nbytes_ == 0) offset_ = 0;  // an empty view touches nothing: it is passed as the whole buffer
  if (parent_->host_ != nullptr) host_ = static_cast<unsigned char*>(parent_->host_) + offset_;
}

std::shared_ptr<Buffer> Buffer::borrow(std::shared_ptr<Accelerator> accelerator, dc_devptr ptr, Shape shape,
                                       DType dtype, std::shared_ptr<void> owner) {
  if (!accelerator) throw InvalidArgumentError("borrowed memory needs an accelerator", "accelerator");
  if (!ptr) throw InvalidArgumentError("borrowed memory at a null device address", "ptr");
  return std::shared_ptr<Buffer>(new Buffer(std::move(accelerator), ptr, std::move(shape), dtype, std::move(owner)));
}

Buffer::Buffer(std::shared_ptr<Accelerator> accelerator, dc_devptr ptr, Shape shape, DType dtype,
               std::shared_ptr<void> owner)
    : accelerator_(std::move(accelerator)),
      api_(accelerator_->api()),
      shape_(std::move(shape)),
      dtype_(dtype),
      size_(element_count(shape_)),
      nbytes_(0),
      state_(TransferState::DeviceOnly),
      owner_(std::move(owner)) {
  if (static_cast<uint64_t>(size_) > UINT64_MAX / itemsize(dtype_)) throw InvalidArgumentError("shape is too large", "shape");
  nbytes_ = static_cast<uint64_t>(size_) * itemsize(dtype_);
  block_.ptr = ptr;
  block_.size = nbytes_;
  aliased_ = true;  // its owner (a module, a DLPack producer) reaches the memory too
  // Memory the plugin did not allocate is never host-visible through mem_host_pointer: keep host_ null
  // so that host access goes through a mirror and explicit copies. On unified memory (the CPU) the
  // handle is the host address itself (a DLPack import of a numpy array): the host sees it in place.
  if (accelerator_->unified_memory()) {
    host_ = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
    state_ = TransferState::Synchronized;
  }
}

Buffer::~Buffer() {
  if (parent_) return;  // a view owns no memory
  // An upload may still be reading the mirror (OpenCL and CUDA copies are non-blocking): hand the
  // mirror to the stream, which frees it once the upload's event has completed. No wait here.
  if (upload_event_ && upload_stream_ && !mirror_.empty()) {
    try {
      if (!upload_event_->query()) {
        upload_stream_->keep_alive(upload_event_, std::make_shared<std::vector<unsigned char>>(std::move(mirror_)));
      }
    } catch (...) {
      // The device failed: we cannot tell whether it still reads the mirror, so never free it.
      new std::vector<unsigned char>(std::move(mirror_));  // NOLINT: a deliberate leak beats a use-after-free
    }
  }
  if (owner_) {
    // Borrowed: the owner frees the memory when it dies (a module unload), which must not happen
    // under a copy or launch still queued on it.
    if (pending_ && last_stream_) {
      try {
        last_stream_->synchronize();
      } catch (...) {  // a failed device: the owner's release reports it
      }
    }
    return;
  }
  StreamKey key = pending_ && last_stream_ ? static_cast<StreamKey>(last_stream_.get()) : nullptr;
  accelerator_->memory().deallocate(block_, key);
}

TransferState Buffer::state() const {
  if (parent_) return parent_->state();
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

std::shared_ptr<Stream> Buffer::last_stream() const {
  if (parent_) return parent_->last_stream();
  std::lock_guard<std::mutex> lock(mutex_);
  return last_stream_;
}

Stream& Buffer::stream_locked() { return last_stream_ ? *last_stream_ : accelerator_->default_stream(); }

void Buffer::wait_locked() {
  if (aliased_) {
    accelerator_->synchronize();  // work through another Buffer over this memory is not in pending_
  } else if (pending_ && last_stream_) {
    last_stream_->synchronize();
  }
  pending_ = false;
}

void Buffer::mark_aliased() {
  if (parent_) return parent_->mark_aliased();
  std::lock_guard<std::mutex> lock(mutex_);
  aliased_ = true;
}

bool Buffer::aliased() const {
  if (parent_) return parent_->aliased();
  std::lock_guard<std::mutex> lock(mutex_);
  return aliased_;
}

void Buffer::ensure_mirror_locked() {
  if (host_ == nullptr && mirror_.size() != nbytes_) mirror_.resize(nbytes_);
}

void Buffer::prepare_locked(Stream& stream) {
  if (pending_ && last_stream_ && last_stream_.get() != &stream) {
    // Order this use after the other stream's work on the buffer.
    auto e = last_stream_->record();
    stream.wait(*e);
  }
  if (host_ == nullptr && state_ == TransferState::HostDirty) {
    if (nbytes_ > 0) {
      check(api_->memcpy_h2d(stream.handle(), block_.ptr, 0, mirror_.data(), nbytes_), api_, *accelerator_,
            "uploading a buffer");
      upload_event_ = stream.record();
      upload_stream_ = stream.shared();
    }
    state_ = TransferState::Synchronized;
  }
  if (last_stream_.get() != &stream) last_stream_ = stream.shared();
  pending_ = true;
}

dc_devptr Buffer::device_ptr() {
  if (parent_) return parent_->device_ptr();
  std::lock_guard<std::mutex> lock(mutex_);
  prepare_locked(stream_locked());
  return block_.ptr;
}

dc_devptr Buffer::device_ptr(Stream& stream) {
  if (parent_) return parent_->device_ptr(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  prepare_locked(stream);
  return block_.ptr;
}

void Buffer::download_locked() {
  // Borrowed or exported memory is written by kernels that never name this buffer (a __device__
  // variable, another Buffer over a DLPack capsule), on any stream: the mirror is never trusted and
  // the download waits for all of the device's work.
  if (aliased_) accelerator_->synchronize();
  Stream& s = stream_locked();
  if (nbytes_ > 0) {
    check(api_->memcpy_d2h(s.handle(), mirror_.data(), block_.ptr, 0, nbytes_), api_, *accelerator_,
          "downloading a buffer");
  }
  s.synchronize();
  pending_ = false;
}

void* Buffer::host_data() {
  if (parent_) return static_cast<unsigned char*>(parent_->host_data()) + offset_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_ != nullptr) {
    wait_locked();
    state_ = TransferState::Synchronized;
    return host_;
  }
  ensure_mirror_locked();
  if (state_ == TransferState::DeviceOnly || state_ == TransferState::DeviceDirty ||
      (aliased_ && state_ == TransferState::Synchronized)) {
    download_locked();
    state_ = TransferState::Synchronized;
  } else {
    // A queued upload may still be reading the mirror.
    wait_locked();
  }
  return mirror_.data();
}

void Buffer::mark_host_dirty() {
  if (parent_) return parent_->mark_host_dirty();
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_ != nullptr) return;  // one memory: nothing to upload
  if (mirror_.size() != nbytes_) {
    throw InvalidArgumentError("mark_host_dirty() on a buffer whose host data was never taken", "buffer");
  }
  state_ = TransferState::HostDirty;
  if (aliased_) {
    // Borrowed memory is read by kernels that never name this buffer, so no device_ptr() would
    // upload the mirror before they run: upload it now, and return when it is there.
    Stream& s = stream_locked();
    prepare_locked(s);
    s.synchronize();
    pending_ = false;
  }
}

void Buffer::mark_device_dirty(Stream& stream) {
  if (parent_) return parent_->mark_device_dirty(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = TransferState::DeviceDirty;
  if (last_stream_.get() != &stream) last_stream_ = stream.shared();
  pending_ = true;
}

void Buffer::mark_used(Stream& stream) {
  if (parent_) return parent_->mark_used(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  if (last_stream_.get() != &stream) last_stream_ = stream.shared();
  pending_ = true;
}

void Buffer::copy_from_host(const void* src, uint64_t bytes) {
  if (bytes != nbytes_) {
    throw InvalidArgumentError("copy_from_host: got " + std::to_string(bytes) + " bytes, the buffer holds " +
                                   std::to_string(nbytes_),
                               "src");
  }
  if (parent_) {
    // Through the root's host data (in place on host-visible memory; else its mirror, uploaded
    // before the next device use): the bytes around the view keep their values.
    void* dst = host_data();
    if (bytes > 0) std::memcpy(dst, src, bytes);
    parent_->mark_host_dirty();
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_ != nullptr) {
    // Queued work may still read (or write) the block: wait, then write it in place.
    wait_locked();
    if (bytes > 0) std::memcpy(host_, src, bytes);
    state_ = TransferState::Synchronized;
    return;
  }
  Stream& s = stream_locked();
  if (bytes > 0) check(api_->memcpy_h2d(s.handle(), block_.ptr, 0, src, bytes), api_, *accelerator_, "copy_from_host");
  // `src` belongs to the caller: the copy must be done when we return.
  s.synchronize();
  pending_ = false;
  state_ = mirror_.empty() ? TransferState::DeviceOnly : TransferState::DeviceDirty;
}

void Buffer::copy_to_host(void* dst, uint64_t bytes) {
  if (bytes != nbytes_) {
    throw InvalidArgumentError("copy_to_host: got room for " + std::to_string(bytes) + " bytes, the buffer holds " +
                                   std::to_string(nbytes_),
                               "dst");
  }
  if (parent_) {
    const void* src = host_data();
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_ != nullptr) {
    wait_locked();
    if (bytes > 0) std::memcpy(dst, host_, bytes);
    return;
  }
  if (state_ == TransferState::HostDirty ||
      (state_ == TransferState::Synchronized && !mirror_.empty() && !aliased_)) {
    wait_locked();
    if (bytes > 0) std::memcpy(dst, mirror_.data(), bytes);
    return;
  }
  if (aliased_) accelerator_->synchronize();  // see download_locked()
  Stream& s = stream_locked();
  if (bytes > 0) check(api_->memcpy_d2h(s.handle(), dst, block_.ptr, 0, bytes), api_, *accelerator_, "copy_to_host");
  s.synchronize();
  pending_ = false;
}

void Buffer::fill_bytes(uint8_t value) {
  if (parent_) {
    Stream& s = parent_->accelerator_->default_stream();
    const dc_devptr root = parent_->device_ptr(s);
    if (nbytes_ > 0) check(api_->memset_d8(s.handle(), root, offset_, value, nbytes_), api_, *accelerator_, "memset");
    parent_->mark_device_dirty(s);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  Stream& s = stream_locked();
  if (nbytes_ > 0) check(api_->memset_d8(s.handle(), block_.ptr, 0, value, nbytes_), api_, *accelerator_, "memset");
  pending_ = true;
  if (host_ == nullptr) state_ = mirror_.empty() ? TransferState::DeviceOnly : TransferState::DeviceDirty;
  else state_ = TransferState::DeviceDirty;
}

}  // namespace dotcompute
