#include "dotcompute/accelerator.hpp"

#include <cstring>

#include "backend_plugin.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/event.hpp"
#include "dotcompute/kernel.hpp"
#include "dotcompute/kernel_cache.hpp"
#include "dotcompute/stream.hpp"
#include "plugin_allocator.hpp"

namespace dotcompute {

namespace {
std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }
}  // namespace

std::shared_ptr<Accelerator> Accelerator::create(std::shared_ptr<BackendPlugin> plugin, int32_t index,
                                                 std::shared_ptr<KernelCache> cache) {
  std::shared_ptr<Accelerator> acc(new Accelerator(std::move(plugin), index, std::move(cache)));
  acc->init();
  return acc;
}

Accelerator::Accelerator(std::shared_ptr<BackendPlugin> plugin, int32_t index, std::shared_ptr<KernelCache> cache)
    : plugin_(std::move(plugin)),
      api_(plugin_->api()),
      index_(index),
      backend_(plugin_->name()),
      id_(backend_ + ":" + std::to_string(index)),
      cache_(std::move(cache)) {}

void Accelerator::init() {
  dc_device_info raw;
  std::memset(&raw, 0, sizeof raw);
  raw.struct_size = sizeof raw;
  dc_status st = api_->device_info(index_, &raw);
  if (st != DC_OK) throw_status(st, "device_info(" + id_ + ") failed", plugin_error(api_));
  info_.name = bounded(raw.name, sizeof raw.name);
  info_.vendor = bounded(raw.vendor, sizeof raw.vendor);
  info_.arch = bounded(raw.arch, sizeof raw.arch);
  info_.type = bounded(raw.type, sizeof raw.type);
  info_.global_memory_bytes = raw.global_memory_bytes;
  info_.local_memory_bytes = raw.local_memory_bytes;
  info_.compute_units = raw.compute_units;
  info_.max_work_group_size = raw.max_work_group_size;
  for (int d = 0; d < 3; ++d) info_.max_work_item_sizes[d] = raw.max_work_item_sizes[d];
  info_.simd_width = raw.simd_width;
  info_.features = raw.features;
  info_.extra_json = bounded(raw.extra_json, sizeof raw.extra_json);
  if (info_.extra_json.empty()) info_.extra_json = "{}";

  char ident[1024] = {0};
  st = api_->compiler_identity(index_, ident, sizeof ident);
  // A backend without a working compiler can still allocate and copy; compile() reports it.
  compiler_identity_ = st == DC_OK ? bounded(ident, sizeof ident) : std::string();

  pool_ = std::make_unique<MemoryPool>(std::make_shared<PluginAllocator>(plugin_, index_), id_);
  dc_stream s = nullptr;
  st = api_->stream_create(index_, &s);
  if (st != DC_OK) throw_status(st, "stream_create(" + id_ + ") failed", plugin_error(api_));
  default_stream_ = std::make_unique<Stream>(this, nullptr, s);
}

Accelerator::~Accelerator() {
  if (default_stream_) api_->stream_synchronize(default_stream_->handle());
  if (pool_) pool_->trim();
  default_stream_.reset();
  pool_.reset();
}

bool Accelerator::host_visible_memory() const noexcept {
  return info_.has(DC_FEATURE_HOST_VISIBLE_MEMORY) && DC_BACKEND_HAS(api_, mem_host_pointer);
}

void* Accelerator::host_pointer(dc_devptr ptr) const {
  if (unified_memory()) return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  if (!host_visible_memory()) return nullptr;
  void* host = nullptr;
  dc_status st = api_->mem_host_pointer(index_, ptr, &host);
  if (st != DC_OK) throw_status(st, "mem_host_pointer on " + id_ + " failed", plugin_error(api_));
  return host;
}

uint64_t Accelerator::native_handle(uint32_t kind, uint64_t object) const {
  if (kind == DC_NATIVE_CONTEXT) object = static_cast<uint64_t>(index_);
  if (!DC_BACKEND_HAS(api_, native_handle))
    throw_status(DC_ERROR_UNSUPPORTED,
                 "native_handle on " + id_ + ": the " + backend() + " plugin has no native_handle entry", "");
  uint64_t out = 0;
  dc_status st = api_->native_handle(kind, object, &out);
  if (st != DC_OK) throw_status(st, "native_handle on " + id_ + " failed", plugin_error(api_));
  return out;
}

std::shared_ptr<Stream> Accelerator::default_stream_ptr() {
  return std::shared_ptr<Stream>(shared_from_this(), default_stream_.get());
}

std::shared_ptr<Stream> Accelerator::create_stream() {
  dc_stream s = nullptr;
  dc_status st = api_->stream_create(index_, &s);
  if (st != DC_OK) throw_status(st, "stream_create(" + id_ + ") failed", plugin_error(api_));
  auto stream = std::make_shared<Stream>(this, shared_from_this(), s);
  std::lock_guard<std::mutex> lock(mutex_);
  // Forget streams that are gone, so the list stays as long as the live ones.
  for (size_t i = 0; i < streams_.size();) {
    if (streams_[i].expired()) {
      streams_[i] = std::move(streams_.back());
      streams_.pop_back();
    } else {
      ++i;
    }
  }
  streams_.push_back(stream);
  return stream;
}

std::shared_ptr<Event> Accelerator::create_event() {
  dc_event e = nullptr;
  dc_status st = api_->event_create(index_, &e);
  if (st != DC_OK) throw_status(st, "event_create(" + id_ + ") failed", plugin_error(api_));
  return std::make_shared<Event>(shared_from_this(), e);
}

std::shared_ptr<Buffer> Accelerator::allocate(const Shape& shape, DType dtype) {
  return std::make_shared<Buffer>(shared_from_this(), shape, dtype);
}

std::shared_ptr<Kernel> Accelerator::compile(const std::string& source, const std::string& entry,
                                             const std::string& options) {
  CacheKeyInput in;
  in.backend = backend_;
  in.source = source;
  in.options = options;
  in.compiler_identity = compiler_identity_;
  in.abi_version = api_->abi_version;
  in.arch = info_.arch;
  const std::string key = KernelCache::key(in);

  std::shared_ptr<Module> module;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = modules_.find(key);
    if (it != modules_.end()) module = it->second.lock();
  }
  if (!module) {
    bool built = false;
    auto build = [&]() {
      built = true;
      void* bin = nullptr;
      uint64_t size = 0;
      dc_status st = api_->compile(index_, source.c_str(), options.c_str(), &bin, &size);
      if (st != DC_OK) {
        std::string log = plugin_error(api_);
        if (st == DC_ERROR_COMPILATION) {
          throw CompilationError("compiling '" + entry + "' for " + id_ + " failed:\n" + log, log, source);
        }
        throw_status(st, "compiling '" + entry + "' for " + id_ + " failed", log, source, CallSite::Compile);
      }
      const uint8_t* p = static_cast<const uint8_t*>(bin);
      std::vector<uint8_t> out(p, p + size);
      api_->free_binary(bin);
      return out;
    };
    Blob blob = cache_->get_or_build(key, build);
    dc_module m = nullptr;
    dc_status st = api_->module_load(index_, blob->data(), blob->size(), &m);
    if (st != DC_OK && !built) {
      // A cached binary the backend no longer accepts (e.g. a changed driver
      // that reports the same identity): rebuild it once.
      blob = std::make_shared<const std::vector<uint8_t>>(build());
      cache_->put(key, blob);
      st = api_->module_load(index_, blob->data(), blob->size(), &m);
    }
    if (st != DC_OK) {
      std::string log = plugin_error(api_);
      throw_status(st, "loading the compiled module of '" + entry + "' on " + id_ + " failed", log, source,
                   CallSite::Compile);
    }
    module = std::make_shared<Module>(shared_from_this(), m);
    std::lock_guard<std::mutex> lock(mutex_);
    modules_[key] = module;
  }
  return std::make_shared<Kernel>(std::move(module), entry);
}

void Accelerator::synchronize() {
  default_stream_->synchronize();
  std::vector<std::shared_ptr<Stream>> live;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& w : streams_) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->synchronize();
}

}  // namespace dotcompute
