// Function names in an ELF64 image (a CUBIN), so the double's
// cuModuleGetFunction can refuse names the image does not define.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cuda_double {

// True when `image` starts with the ELF magic; `size` then receives the
// image's extent (end of its section header table) for bookkeeping.
bool is_elf(const void* image, size_t* size);
std::vector<std::string> elf_function_names(const void* image, size_t size);
// The data objects (__device__/__constant__ variables) of an ELF64 image: name -> size in bytes.
std::vector<std::pair<std::string, size_t>> elf_object_symbols(const void* image, size_t size);
// Entry names in PTX text (".entry NAME(").
std::vector<std::string> ptx_entry_names(const char* ptx);

}  // namespace cuda_double
