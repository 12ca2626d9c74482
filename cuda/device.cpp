#include "device.hpp"

#include <cstdio>
#include <cstring>

#include "status.hpp"

namespace dotcompute::cuda {

namespace {

void copy_text(char* dst, size_t cap, const std::string& src) {
  std::snprintf(dst, cap, "%s", src.c_str());
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

}  // namespace

dc_status Device::open(const Driver& driver, int ordinal, std::unique_ptr<Device>& out) {
  std::unique_ptr<Device> dev(new Device(driver, ordinal));
  if (auto s = check(driver, driver.cuDeviceGet(&dev->device_, ordinal), "cuDeviceGet"); s != DC_OK) return s;

  char name[256] = {};
  if (auto s = check(driver, driver.cuDeviceGetName(name, sizeof name - 1, dev->device_), "cuDeviceGetName"); s != DC_OK)
    return s;
  size_t total = 0;
  if (auto s = check(driver, driver.cuDeviceTotalMem(&total, dev->device_), "cuDeviceTotalMem"); s != DC_OK) return s;

  auto attr = [&](CUdevice_attribute a, int& value) {
    value = 0;
    return check(driver, driver.cuDeviceGetAttribute(&value, a, dev->device_), "cuDeviceGetAttribute");
  };
  int max_threads = 0, block[3] = {}, shared = 0, sms = 0, unified = 0, managed = 0, concurrent = 0, coop = 0;
  int clock_khz = 0, l2 = 0, pci_bus = 0, pci_dev = 0, async_engines = 0, threads_per_sm = 0, integrated = 0;
  const struct {
    CUdevice_attribute a;
    int* v;
  } wanted[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &dev->cc_major_},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &dev->cc_minor_},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_threads},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &block[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &block[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &block[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &dev->max_grid_[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &dev->max_grid_[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &dev->max_grid_[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &shared},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &dev->shared_optin_},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &dev->warp_size_},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &unified},
      {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed},
      {CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, &concurrent},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &coop},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &clock_khz},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &pci_bus},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &pci_dev},
      {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, &async_engines},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &threads_per_sm},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, &integrated},
  };
  for (const auto& w : wanted)
    if (auto s = attr(w.a, *w.v); s != DC_OK) return s;
  dev->cooperative_ = coop != 0;

  if (auto s = check(driver, driver.cuDevicePrimaryCtxRetain(&dev->context_, dev->device_),
                     "cuDevicePrimaryCtxRetain");
      s != DC_OK) {
    dev->context_ = nullptr;
    return s;
  }

  dc_device_info& info = dev->info_;
  info.struct_size = sizeof(dc_device_info);
  copy_text(info.name, sizeof info.name, name);
  copy_text(info.vendor, sizeof info.vendor, "NVIDIA");
  copy_text(info.arch, sizeof info.arch, "sm_" + std::to_string(dev->sm()));
  copy_text(info.type, sizeof info.type, "gpu");
  info.global_memory_bytes = total;
  info.local_memory_bytes = static_cast<uint64_t>(shared);
  info.compute_units = static_cast<uint32_t>(sms);
  info.max_work_group_size = static_cast<uint32_t>(max_threads);
  for (int d = 0; d < 3; ++d) info.max_work_item_sizes[d] = static_cast<uint32_t>(block[d]);
  info.simd_width = static_cast<uint32_t>(dev->warp_size_);
  // Every architecture the driver API still supports (sm_50+) has fp64 and 64-bit/float atomics.
  info.features = DC_FEATURE_FP64 | DC_FEATURE_INT64_ATOMICS | DC_FEATURE_FLOAT_ATOMICS;
  if (dev->sm() >= 53) info.features |= DC_FEATURE_FP16;
  if (coop) info.features |= DC_FEATURE_COOPERATIVE_LAUNCH;
  if (managed) info.features |= DC_FEATURE_MANAGED_MEMORY;

  char json[2048];
  std::snprintf(json, sizeof json,
                "\"compute_capability\": [%d, %d], \"multiprocessors\": %d, \"warp_size\": %d, "
                "\"max_threads_per_block\": %d, \"max_threads_per_multiprocessor\": %d, "
                "\"max_shared_memory_per_block\": %d, \"max_shared_memory_per_block_optin\": %d, "
                "\"max_grid_size\": [%d, %d, %d], \"unified_addressing\": %s, \"managed_memory\": %s, "
                "\"concurrent_kernels\": %s, \"cooperative_launch\": %s, \"integrated\": %s, "
                "\"clock_rate_khz\": %d, \"l2_cache_bytes\": %d, \"async_engines\": %d, "
                "\"pci_bus_id\": %d, \"pci_device_id\": %d, \"name\": \"%s\"",
                dev->cc_major_, dev->cc_minor_, sms, dev->warp_size_, max_threads, threads_per_sm, shared,
                dev->shared_optin_, dev->max_grid_[0], dev->max_grid_[1], dev->max_grid_[2],
                unified ? "true" : "false", managed ? "true" : "false", concurrent ? "true" : "false",
                coop ? "true" : "false", integrated ? "true" : "false", clock_khz, l2, async_engines, pci_bus,
                pci_dev, json_escape(name).c_str());
  dev->capabilities_json_ = json;
  copy_text(info.extra_json, sizeof info.extra_json, "{" + dev->capabilities_json_ + "}");
  out = std::move(dev);
  return DC_OK;
}

void Device::finish_info(const std::vector<int>& peer_row, int driver_version) {
  std::string peers = "[";
  for (size_t i = 0; i < peer_row.size(); ++i) peers += (i ? ", " : "") + std::string(peer_row[i] ? "true" : "false");
  peers += "]";
  const std::string json = "{" + capabilities_json_ + ", \"peer_access\": " + peers +
                           ", \"driver_version\": " + std::to_string(driver_version) +
                           (driver_.simulated() ? ", \"simulated\": true" : "") + "}";
  copy_text(info_.extra_json, sizeof info_.extra_json, json);
}

dc_status Device::make_current() const {
  return check(driver_, driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

Device::~Device() {
  if (context_) driver_.cuDevicePrimaryCtxRelease(device_);
}

}  // namespace dotcompute::cuda
