#include "device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "json_writer.h"
#include "status.h"

namespace dcl {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (api().clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (api().clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  return trimmed(std::move(s));
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (api().clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (api().clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  return trimmed(std::move(s));
}

// A fixed-size query; `fallback` when the device does not answer it.
template <typename T>
T device_value(cl_device_id d, cl_device_info what, T fallback) {
  T value{};
  if (api().clGetDeviceInfo(d, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return fallback;
  return value;
}

uint32_t clamp32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

bool has_extension(const std::string& list, const char* ext) {
  std::istringstream in(list);
  std::string word;
  while (in >> word) {
    if (word == ext) return true;
  }
  return false;
}

// "OpenCL 1.2 Foo" -> 102; 0 when the string does not follow the specification's format.
int parse_version(const std::string& version) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor;
}

// Pre-3.0 devices have no device-level query: ask the compiler about a trivial kernel.
uint32_t probe_preferred_multiple(const Device& dev) {
  static const char* kSource = "__kernel void dc_probe(__global int* p) { p[get_global_id(0)] = 0; }";
  cl_int err = CL_SUCCESS;
  Program program(api().clCreateProgramWithSource(dev.context.get(), 1, &kSource, nullptr, &err));
  if (err != CL_SUCCESS) return 1;
  if (api().clBuildProgram(program.get(), 1, &dev.id, "", nullptr, nullptr) != CL_SUCCESS) return 1;
  Kernel kernel(api().clCreateKernel(program.get(), "dc_probe", &err));
  if (err != CL_SUCCESS) return 1;
  size_t multiple = 1;
  if (api().clGetKernelWorkGroupInfo(kernel.get(), dev.id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof(multiple), &multiple, nullptr) != CL_SUCCESS) {
    return 1;
  }
  return std::max<uint32_t>(1, clamp32(multiple));
}

uint32_t preferred_multiple(const Device& dev, int version) {
  if (version >= 300) {
    size_t m = device_value<size_t>(dev.id, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, 0);
    if (m > 0) return clamp32(m);
  }
  if (has_extension(dev.extensions, "cl_nv_device_attribute_query")) {
    cl_uint m = device_value<cl_uint>(dev.id, CL_DEVICE_WARP_SIZE_NV, 0);
    if (m > 0) return m;
  }
  if (has_extension(dev.extensions, "cl_amd_device_attribute_query")) {
    cl_uint m = device_value<cl_uint>(dev.id, CL_DEVICE_WAVEFRONT_WIDTH_AMD, 0);
    if (m > 0) return m;
  }
  return probe_preferred_multiple(dev);
}

// Whether PoCL builds a work-group function per local size (POCL_WORK_GROUP_SPECIALIZATION is not 0).
bool pocl_specializes() {
  const char* v = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Fills a Device; false when it cannot run this plugin's work (unavailable, older than 1.2).
bool describe(cl_platform_id platform, cl_device_id id, Device& dev, std::string* skipped) {
  dev.platform = platform;
  dev.id = id;
  dev.platform_name = platform_string(platform, CL_PLATFORM_NAME);
  dev.platform_vendor = platform_string(platform, CL_PLATFORM_VENDOR);
  dev.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  dev.builds_per_local_size = dev.platform_name == "Portable Computing Language" && pocl_specializes();
  dev.name = device_string(id, CL_DEVICE_NAME);
  dev.vendor = device_string(id, CL_DEVICE_VENDOR);
  dev.version = device_string(id, CL_DEVICE_VERSION);
  dev.driver_version = device_string(id, CL_DRIVER_VERSION);
  dev.opencl_c_version = device_string(id, CL_DEVICE_OPENCL_C_VERSION);
  dev.extensions = device_string(id, CL_DEVICE_EXTENSIONS);

  int version = parse_version(dev.version);
  if (version < 102) {
    *skipped += " " + dev.name + " (" + dev.version + ": OpenCL 1.2 or newer needed)";
    return false;
  }
  if (device_value<cl_bool>(id, CL_DEVICE_AVAILABLE, CL_TRUE) == CL_FALSE) {
    *skipped += " " + dev.name + " (not available)";
    return false;
  }

  dev.type = device_value<cl_device_type>(id, CL_DEVICE_TYPE, CL_DEVICE_TYPE_GPU);
  dev.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS, 1);
  dev.max_work_group_size = clamp32(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1));
  cl_uint dims = device_value<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 3);
  std::vector<size_t> item_sizes(std::max<cl_uint>(dims, 3), 1);
  api().clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, item_sizes.data(), nullptr);
  for (int d = 0; d < 3; ++d) dev.max_work_item_sizes[d] = clamp32(std::max<size_t>(item_sizes[d], 1));
  dev.clock_mhz = device_value<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY, 0);
  dev.global_memory = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
  dev.local_memory = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
  dev.max_alloc = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  dev.base_addr_align_bytes = device_value<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024) / 8;
  dev.fp64 = has_extension(dev.extensions, "cl_khr_fp64") ||
             device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG, 0) != 0;
  dev.fp16 = has_extension(dev.extensions, "cl_khr_fp16");
  dev.int64_atomics = has_extension(dev.extensions, "cl_khr_int64_base_atomics");

  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
  cl_int err = CL_SUCCESS;
  dev.context.reset(api().clCreateContext(props, 1, &id, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) {
    *skipped += " " + dev.name + " (" + call_error("clCreateContext", err) + ")";
    return false;
  }
  dev.preferred_work_group_multiple = preferred_multiple(dev, version);
  return true;
}

void copy_text(char* dst, size_t cap, const std::string& src) {
  size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

const char* type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return "accelerator";
}

}  // namespace

std::string Device::arch() const {
  return platform_name + " | " + name + " | " + driver_version + " | " + version;
}

std::string Device::compiler_identity() const {
  return "OpenCL " + platform_name + " " + platform_version + " | driver " + driver_version + " | " +
         opencl_c_version;
}

std::string Device::capabilities_json() const {
  JsonWriter w;
  w.field("platform", platform_name);
  w.field("platform_vendor", platform_vendor);
  w.field("platform_version", platform_version);
  w.field("name", name);
  w.field("vendor", vendor);
  w.field("version", version);
  w.field("driver_version", driver_version);
  w.field("opencl_c_version", opencl_c_version);
  w.field("compute_units", compute_units);
  w.field("global_memory_bytes", global_memory);
  w.field("local_memory_bytes", local_memory);
  w.field("max_mem_alloc_bytes", max_alloc);
  w.field("mem_base_addr_align_bytes", base_addr_align_bytes);
  w.field("max_work_group_size", max_work_group_size);
  w.array("max_work_item_sizes", max_work_item_sizes, 3);
  w.field("preferred_work_group_multiple", preferred_work_group_multiple);
  w.field("max_clock_mhz", clock_mhz);
  w.field("fp64", fp64);
  w.field("fp16", fp16);
  w.field("int64_atomics", int64_atomics);
  // The extension list is long on some drivers; it goes last and only when it fits.
  JsonWriter with_ext = w;
  with_ext.field("extensions", extensions);
  std::string full = with_ext.finish();
  if (full.size() < sizeof(dc_device_info::extra_json)) return full;
  return w.finish();
}

void Device::fill_info(dc_device_info* out) const {
  dc_device_info info{};
  info.struct_size = sizeof(dc_device_info);
  copy_text(info.name, sizeof(info.name), name);
  copy_text(info.vendor, sizeof(info.vendor), vendor);
  copy_text(info.arch, sizeof(info.arch), arch());
  copy_text(info.type, sizeof(info.type), type_name(type));
  info.global_memory_bytes = global_memory;
  info.local_memory_bytes = local_memory;
  info.compute_units = compute_units;
  info.max_work_group_size = max_work_group_size;
  for (int d = 0; d < 3; ++d) info.max_work_item_sizes[d] = max_work_item_sizes[d];
  info.simd_width = preferred_work_group_multiple;
  // 32-bit float atomics are compare-and-swap loops, available on every 1.2 device.
  info.features = DC_FEATURE_FLOAT_ATOMICS;
  if (fp64) info.features |= DC_FEATURE_FP64;
  if (fp16) info.features |= DC_FEATURE_FP16;
  if (int64_atomics) info.features |= DC_FEATURE_INT64_ATOMICS;
  copy_text(info.extra_json, sizeof(info.extra_json), capabilities_json());
  // The struct_size rule (backend_abi.h): an older core gets only what it has room for.
  dc_write_device_info(out, &info);
}

dc_status discover_devices(std::vector<std::unique_ptr<Device>>* out) {
  // PoCL compiles, by default, one work-group function (LLVM code generation, 0.1-0.4 s each on this
  // 2-core machine) per local size, global-offset kind and grid size a kernel is launched with, so
  // each new array size can cost a compile. Its generic work-group function takes them as arguments;
  // for our kernels it ran as fast (docs/operations.md, "One work-group function per kernel on PoCL"),
  // and it is also the one PoCL puts in a program's binary, which the kernel cache keeps. PoCL reads
  // the variable when it builds, so it is set before the first platform query; a value the user set
  // is kept.
  setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", /*overwrite=*/0);
  cl_uint count = 0;
  cl_int err = api().clGetPlatformIDs(0, nullptr, &count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0)) {
    return fail(DC_ERROR_UNAVAILABLE,
                "no OpenCL platform found (no ICD registered in /etc/OpenCL/vendors or OCL_ICD_VENDORS; "
                "install an OpenCL driver, e.g. pocl-opencl-icd)");
  }
  if (err != CL_SUCCESS) return fail_cl("clGetPlatformIDs", err, DC_ERROR_UNAVAILABLE, "listing OpenCL platforms");
  std::vector<cl_platform_id> platforms(count);
  err = api().clGetPlatformIDs(count, platforms.data(), nullptr);
  if (err != CL_SUCCESS) return fail_cl("clGetPlatformIDs", err, DC_ERROR_UNAVAILABLE, "listing OpenCL platforms");

  std::string skipped;
  for (cl_platform_id platform : platforms) {
    cl_uint n = 0;
    err = api().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> ids(n);
    if (api().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      auto dev = std::make_unique<Device>();
      if (describe(platform, id, *dev, &skipped)) out->push_back(std::move(dev));
    }
  }
  if (out->empty()) {
    return fail(DC_ERROR_UNAVAILABLE, "no usable OpenCL device found on " + std::to_string(count) +
                                          " platform(s)" + (skipped.empty() ? "" : "; skipped:" + skipped));
  }
  return DC_OK;
}

}  // namespace dcl
