// Programs: built from OpenCL C by compile(), which returns the driver's
// binary for the core's kernel cache; module_load() rebuilds from that binary.
#include <cstdlib>
#include <cstring>

#include "binary_blob.h"
#include "objects.h"
#include "ops.h"
#include "status.h"

namespace dcl {
namespace {

// The language version is pinned so a driver upgrade to a newer default cannot change a cached kernel's meaning.
std::string build_options(const char* given) {
  std::string opts = given != nullptr ? given : "";
  if (opts.find("-cl-std=") == std::string::npos) opts += opts.empty() ? "-cl-std=CL1.2" : " -cl-std=CL1.2";
  return opts;
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (api().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  if (size == 0 ||
      api().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return "";
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Driver logs about a missing type or extension are cryptic; name the missing feature.
std::string feature_notes(const Device& dev, const std::string& source) {
  std::string notes;
  if (!dev.fp64 && source.find("double") != std::string::npos) {
    notes += "\nnote: " + dev.name + " has no 64-bit floating point (cl_khr_fp64)";
  }
  if (!dev.int64_atomics && (source.find("int64_base_atomics") != std::string::npos ||
                             source.find("atom_") != std::string::npos)) {
    notes += "\nnote: " + dev.name + " has no 64-bit atomics (cl_khr_int64_base_atomics)";
  }
  if (!dev.fp16 && source.find("half") != std::string::npos) {
    notes += "\nnote: " + dev.name + " has no 16-bit floating point (cl_khr_fp16)";
  }
  return notes;
}

// clBuildProgram; on failure last_error() holds the whole build log.
dc_status build(const Device& dev, cl_program program, const std::string& options, const std::string& source,
                const char* what) {
  cl_int err = api().clBuildProgram(program, 1, &dev.id, options.c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS) return DC_OK;
  std::string log = build_log(program, dev.id);
  return fail(DC_ERROR_COMPILATION, std::string("OpenCL ") + what + " failed on " + dev.name + ": " +
                                        error_name(err) + " (" + std::to_string(err) + "), options \"" + options +
                                        "\"\n" + (log.empty() ? "(the driver gave no build log)" : log) +
                                        feature_notes(dev, source));
}

dc_status driver_binary(const Device& dev, cl_program program, std::vector<unsigned char>* out) {
  size_t size = 0;
  cl_int err = api().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
  if (err != CL_SUCCESS) return fail_cl("clGetProgramInfo", err, DC_ERROR_INTERNAL, "reading the program binary size");
  out->resize(size);
  if (size == 0) return DC_OK;
  unsigned char* ptr = out->data();
  err = api().clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr);
  if (err != CL_SUCCESS) {
    return fail_cl("clGetProgramInfo", err, DC_ERROR_INTERNAL, "reading the program binary of " + dev.name);
  }
  return DC_OK;
}

}  // namespace

dc_status compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (source == nullptr || binary == nullptr || size == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "compile: null source or output");
    }
    BlobContents blob;
    blob.options = build_options(options);
    cl_int err = CL_SUCCESS;
    Program program(api().clCreateProgramWithSource(dev->context.get(), 1, &source, nullptr, &err));
    if (err != CL_SUCCESS) return fail_cl("clCreateProgramWithSource", err, DC_ERROR_COMPILATION, "compile");
    if (dc_status st = build(*dev, program.get(), blob.options, source, "build"); st != DC_OK) return st;
    if (dc_status st = driver_binary(*dev, program.get(), &blob.payload); st != DC_OK) return st;
    if (blob.payload.empty()) {
      // Drivers may decline to give binaries; the source is cached instead and built at load time.
      blob.kind = BlobKind::kSource;
      blob.payload.assign(source, source + std::strlen(source));
    }
    std::vector<unsigned char> packed = pack_blob(blob);
    void* out = std::malloc(packed.size());
    if (out == nullptr) return fail(DC_ERROR_OUT_OF_MEMORY, "compile: no host memory for the program binary");
    std::memcpy(out, packed.data(), packed.size());
    *binary = out;
    *size = packed.size();
    return DC_OK;
  });
}

void free_binary(void* binary) { std::free(binary); }

dc_status module_load(int32_t device, const void* binary, uint64_t size, dc_module* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: out is null");
    BlobContents blob;
    std::string why;
    if (!unpack_blob(binary, size, &blob, &why)) return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: " + why);

    cl_int err = CL_SUCCESS;
    Program program;
    std::string source;
    if (blob.kind == BlobKind::kDriverBinary) {
      const unsigned char* data = blob.payload.data();
      size_t length = blob.payload.size();
      cl_int binary_status = CL_SUCCESS;
      program.reset(api().clCreateProgramWithBinary(dev->context.get(), 1, &dev->id, &length, &data,
                                                    &binary_status, &err));
      if (err == CL_SUCCESS && binary_status != CL_SUCCESS) err = binary_status;
      if (err != CL_SUCCESS) {
        return fail_cl("clCreateProgramWithBinary", err, DC_ERROR_COMPILATION,
                       "the cached program binary was rejected by " + dev->name);
      }
    } else {
      source.assign(blob.payload.begin(), blob.payload.end());
      const char* text = source.c_str();
      program.reset(api().clCreateProgramWithSource(dev->context.get(), 1, &text, nullptr, &err));
      if (err != CL_SUCCESS) return fail_cl("clCreateProgramWithSource", err, DC_ERROR_COMPILATION, "module_load");
    }
    if (dc_status st = build(*dev, program.get(), blob.options, source, "build of a cached program"); st != DC_OK) {
      return st;
    }

    auto m = std::make_unique<dc_module_s>();
    m->device = dev;
    m->program = std::move(program);
    *out = m.release();
    return DC_OK;
  });
}

dc_status module_unload(dc_module m) {
  return guarded([&] {
    delete m;
    return DC_OK;
  });
}

dc_status kernel_get(dc_module m, const char* name, dc_kernel* out) {
  return guarded([&] {
    if (m == nullptr || name == nullptr || out == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "kernel_get: null argument");
    }
    std::lock_guard<std::mutex> lock(m->mutex);
    auto found = m->kernels.find(name);
    if (found != m->kernels.end()) {
      *out = found->second.get();
      return DC_OK;
    }
    cl_int err = CL_SUCCESS;
    Kernel kernel(api().clCreateKernel(m->program.get(), name, &err));
    if (err == CL_INVALID_KERNEL_NAME) {
      return fail(DC_ERROR_INVALID_ARGUMENT, std::string("no kernel named '") + name + "' in the OpenCL program");
    }
    if (err != CL_SUCCESS) return fail_cl("clCreateKernel", err, DC_ERROR_INTERNAL, std::string("kernel ") + name);

    auto k = std::make_unique<dc_kernel_s>();
    k->device = m->device;
    k->name = name;
    cl_device_id id = m->device->id;
    size_t wg = m->device->max_work_group_size;
    size_t multiple = m->device->preferred_work_group_multiple;
    cl_ulong local = 0;
    api().clGetKernelWorkGroupInfo(kernel.get(), id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr);
    api().clGetKernelWorkGroupInfo(kernel.get(), id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof(multiple),
                                   &multiple, nullptr);
    api().clGetKernelWorkGroupInfo(kernel.get(), id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local), &local, nullptr);
    k->work_group_limit = wg > 0 ? wg : 1;
    k->preferred_multiple = multiple > 0 ? multiple : 1;
    k->static_local_bytes = local;
    cl_uint num_args = 0;
    err = api().clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr);
    if (err != CL_SUCCESS) return fail_cl("clGetKernelInfo", err, DC_ERROR_INTERNAL, std::string("kernel ") + name);
    k->num_args = num_args;
    k->kernel = std::move(kernel);
    *out = k.get();
    m->kernels.emplace(name, std::move(k));
    return DC_OK;
  });
}

}  // namespace dcl
