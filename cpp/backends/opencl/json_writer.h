// Builds the flat JSON object of dc_device_info.extra_json.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace dcl {

class JsonWriter {
 public:
  void field(const char* key, const std::string& value) { raw(key, quoted(value)); }
  void field(const char* key, const char* value) { raw(key, quoted(value)); }
  void field(const char* key, bool value) { raw(key, value ? "true" : "false"); }
  void field(const char* key, uint64_t value) { raw(key, std::to_string(value)); }
  void field(const char* key, uint32_t value) { raw(key, std::to_string(value)); }
  void array(const char* key, const uint32_t* values, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(values[i]);
    raw(key, s + "]");
  }
  std::string finish() const { return "{" + body_ + "}"; }

  static std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    return out + "\"";
  }

 private:
  void raw(const char* key, const std::string& value) {
    if (!body_.empty()) body_ += ", ";
    body_ += quoted(key) + ": " + value;
  }
  std::string body_;
};

}  // namespace dcl
