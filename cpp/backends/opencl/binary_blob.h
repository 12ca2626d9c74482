// The blob compile() hands to the core's KernelCache and module_load() reads
// back: the build options (the binary is built again with them) and either
// the driver's program binary or, for drivers that give none, the source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dcl {

enum class BlobKind : uint32_t { kDriverBinary = 1, kSource = 2 };

struct BlobContents {
  BlobKind kind = BlobKind::kDriverBinary;
  std::string options;
  std::vector<unsigned char> payload;
};

std::vector<unsigned char> pack_blob(const BlobContents& contents);
// False, with `why` set, for a blob this plugin did not write or one that is cut short.
bool unpack_blob(const void* data, uint64_t size, BlobContents* out, std::string* why);

}  // namespace dcl
