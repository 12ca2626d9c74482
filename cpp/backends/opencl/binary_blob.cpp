#include "binary_blob.h"

#include <cstring>

namespace dcl {
namespace {

constexpr char kMagic[8] = {'D', 'C', 'C', 'L', 'B', 'I', 'N', '1'};

template <typename T>
void put(std::vector<unsigned char>& out, T value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

class Reader {
 public:
  Reader(const unsigned char* data, uint64_t size) : data_(data), size_(size) {}
  template <typename T>
  bool get(T* value) {
    if (size_ - pos_ < sizeof(T)) return false;
    std::memcpy(value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool bytes(uint64_t n, const unsigned char** at) {
    if (size_ - pos_ < n) return false;
    *at = data_ + pos_;
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == size_; }

 private:
  const unsigned char* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace

std::vector<unsigned char> pack_blob(const BlobContents& c) {
  std::vector<unsigned char> out(kMagic, kMagic + sizeof(kMagic));
  put(out, static_cast<uint32_t>(c.kind));
  put(out, static_cast<uint32_t>(c.options.size()));
  out.insert(out.end(), c.options.begin(), c.options.end());
  put(out, static_cast<uint64_t>(c.payload.size()));
  out.insert(out.end(), c.payload.begin(), c.payload.end());
  return out;
}

bool unpack_blob(const void* data, uint64_t size, BlobContents* out, std::string* why) {
  if (data == nullptr || size < sizeof(kMagic) ||
      std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
    *why = "not an OpenCL program blob written by this plugin (bad header)";
    return false;
  }
  Reader r(static_cast<const unsigned char*>(data) + sizeof(kMagic), size - sizeof(kMagic));
  uint32_t kind = 0;
  uint32_t options_size = 0;
  uint64_t payload_size = 0;
  const unsigned char* options = nullptr;
  const unsigned char* payload = nullptr;
  if (!r.get(&kind) || !r.get(&options_size) || !r.bytes(options_size, &options) || !r.get(&payload_size) ||
      !r.bytes(payload_size, &payload) || !r.at_end()) {
    *why = "truncated or corrupt OpenCL program blob (" + std::to_string(size) + " bytes)";
    return false;
  }
  if (kind != static_cast<uint32_t>(BlobKind::kDriverBinary) && kind != static_cast<uint32_t>(BlobKind::kSource)) {
    *why = "OpenCL program blob of unknown kind " + std::to_string(kind);
    return false;
  }
  out->kind = static_cast<BlobKind>(kind);
  out->options.assign(reinterpret_cast<const char*>(options), options_size);
  out->payload.assign(payload, payload + payload_size);
  return true;
}

}  // namespace dcl
