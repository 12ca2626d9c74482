#include "manifest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>

#include "dotcompute/errors.hpp"

namespace dotcompute::detail {

namespace {

struct Value {
  enum Kind { String, Number, Bool, Null, StringArray, Other } kind = Null;
  std::string text;
  double number = 0;
  std::vector<std::string> items;
};

class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  std::map<std::string, Value> object() {
    skip();
    std::map<std::string, Value> out = members();
    skip();
    if (i_ != s_.size()) fail("unexpected text after the object");
    return out;
  }

 private:
  // `{ "key": value, ... }` from the current position.
  std::map<std::string, Value> members() {
    std::map<std::string, Value> out;
    expect('{');
    skip();
    if (peek() == '}') {
      ++i_;
      return out;
    }
    for (;;) {
      skip();
      std::string key = string();
      skip();
      expect(':');
      skip();
      out[key] = value();
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      return out;
    }
  }

  Value value() {
    Value v;
    char c = peek();
    if (c == '"') {
      v.kind = Value::String;
      v.text = string();
    } else if (c == '[') {
      ++i_;
      v.kind = Value::StringArray;
      skip();
      if (peek() == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        skip();
        Value item = value();
        // Arrays of anything but strings are only skipped (unknown keys).
        if (item.kind == Value::String) {
          v.items.push_back(std::move(item.text));
        } else {
          v.kind = Value::Other;
        }
        skip();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return v;
      }
    } else if (c == '{') {
      members();  // a nested object: skipped
      v.kind = Value::Other;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                                s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
        ++i_;
      }
      v.kind = Value::Number;
      try {
        v.number = std::stod(s_.substr(start, i_ - start));
      } catch (const std::exception&) {
        i_ = start;
        fail("malformed number");
      }
    } else if (word("true")) {
      v.kind = Value::Bool;
      v.number = 1;
    } else if (word("false")) {
      v.kind = Value::Bool;
    } else if (word("null")) {
      v.kind = Value::Null;
    } else {
      fail("expected a string, number, boolean, null or array of strings");
    }
    return v;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      char e = s_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) fail("truncated \\u escape");
          unsigned code = 0;
          for (int k = 0; k < 4; ++k) {
            char h = s_[i_ + k];
            int d = std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                    : (h >= 'a' && h <= 'f')                   ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F')                   ? h - 'A' + 10
                                                               : -1;
            if (d < 0) fail("malformed \\u escape");
            code = code * 16 + unsigned(d);
          }
          i_ += 4;
          // Manifests are ASCII in practice; encode the BMP code point as UTF-8.
          if (code < 0x80) {
            out += char(code);
          } else if (code < 0x800) {
            out += char(0xC0 | (code >> 6));
            out += char(0x80 | (code & 0x3F));
          } else {
            out += char(0xE0 | (code >> 12));
            out += char(0x80 | ((code >> 6) & 0x3F));
            out += char(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += e;  // \" \\ \/
      }
    }
    expect('"');
    return out;
  }

  bool word(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw PluginError("invalid plugin manifest " + path_ + ": " + what + " at offset " + std::to_string(i_));
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

const Value& field(const std::map<std::string, Value>& obj, const char* key, Value::Kind kind,
                   const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) throw PluginError("invalid plugin manifest " + path + ": missing \"" + key + "\"");
  if (it->second.kind != kind) throw PluginError("invalid plugin manifest " + path + ": \"" + key + "\" has the wrong type");
  return it->second;
}

}  // namespace

PluginManifest parse_manifest(const std::string& text, const std::string& path) {
  auto obj = Reader(text, path).object();
  PluginManifest m;
  m.path = path;
  m.name = field(obj, "name", Value::String, path).text;
  m.library = field(obj, "library", Value::String, path).text;
  if (m.name.empty()) throw PluginError("invalid plugin manifest " + path + ": empty \"name\"");
  if (m.library.empty()) throw PluginError("invalid plugin manifest " + path + ": empty \"library\"");
  if (auto it = obj.find("version"); it != obj.end() && it->second.kind == Value::String) m.version = it->second.text;
  if (auto it = obj.find("abi_version"); it != obj.end()) {
    if (it->second.kind != Value::Number || it->second.number < 0)
      throw PluginError("invalid plugin manifest " + path + ": \"abi_version\" must be a non-negative number");
    m.abi_version = static_cast<uint32_t>(it->second.number);
  }
  if (auto it = obj.find("requires"); it != obj.end()) {
    if (it->second.kind != Value::StringArray)
      throw PluginError("invalid plugin manifest " + path + ": \"requires\" must be an array of strings");
    m.requires_ = it->second.items;
  }
  if (m.library.front() != '/') m.library = dirname_of(path) + "/" + m.library;
  return m;
}

PluginManifest read_manifest(const std::string& path) {
  // A manifest is a few hundred bytes of JSON. O_NONBLOCK and the fstat check keep a FIFO or
  // device in a plugin folder from blocking the runtime's start; the bound keeps a huge file
  // from being read into memory. (Symlinks are followed: packagers link manifests into place.)
  constexpr off_t kMaxManifestBytes = 1 << 20;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw PluginError("cannot read plugin manifest " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw PluginError("cannot read plugin manifest " + path + ": not a regular file");
  }
  if (st.st_size > kMaxManifestBytes) {
    ::close(fd);
    throw PluginError("cannot read plugin manifest " + path + ": " + std::to_string(st.st_size) +
                      " bytes, over the limit of " + std::to_string(kMaxManifestBytes));
  }
  // one byte more than fstat said, to see a file that grows while it is read
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::read(fd, &text[got], text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  if (got > static_cast<size_t>(st.st_size))
    throw PluginError("cannot read plugin manifest " + path + ": it changed while it was read");
  text.resize(got);
  return parse_manifest(text, path);
}

}  // namespace dotcompute::detail
