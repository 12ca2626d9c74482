// Reading `<name>.plugin.json`, the manifest that describes a backend plugin:
//   {"name": "opencl", "version": "0.1.0", "abi_version": 1,
//    "library": "libdotcompute_opencl.so", "requires": ["libOpenCL.so.1"]}
// The reader understands one flat JSON object whose values are strings,
// numbers, booleans, null or arrays of strings; unknown keys are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dotcompute::detail {

struct PluginManifest {
  std::string path;     // the manifest file
  std::string name;
  std::string version;
  uint32_t abi_version = 0;
  std::string library;  // resolved against the manifest's folder when relative
  std::vector<std::string> requires_;
};

// Throws PluginError naming the file and the offset of a syntax error or a
// missing/mistyped field.
PluginManifest parse_manifest(const std::string& text, const std::string& path);
PluginManifest read_manifest(const std::string& path);

}  // namespace dotcompute::detail
