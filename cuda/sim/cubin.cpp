// What the simulator reads from the CUBIN that NVRTC produced beside a kernel's host build: the
// kernel's static shared memory (module.cpp: cuFuncGetAttribute, the launch's shared window) and its
// registers per thread (counters.cpp: occupancy in the GPU-model counters). Both walk the same ELF
// section table, so the bounds checks live once, in CubinSections.
#include <elf.h>

#include <cstring>
#include <string>

#include "image.hpp"

namespace dcsim_lib {

namespace {

// The section table of a 64-bit ELF image, every offset checked against the image's size (the
// device code comes from a file a user may hand in: a truncated or foreign one must read as "none").
class CubinSections {
 public:
  CubinSections(const void* cubin, uint64_t size) : bytes_(static_cast<const unsigned char*>(cubin)), size_(size) {
    if (size < sizeof(Elf64_Ehdr) || std::memcmp(cubin, ELFMAG, SELFMAG) != 0) return;
    std::memcpy(&eh_, bytes_, sizeof eh_);
    if (eh_.e_ident[EI_CLASS] != ELFCLASS64 || eh_.e_shentsize != sizeof(Elf64_Shdr) || eh_.e_shstrndx >= eh_.e_shnum ||
        eh_.e_shoff + static_cast<uint64_t>(eh_.e_shnum) * sizeof(Elf64_Shdr) > size)
      return;
    names_ = section(eh_.e_shstrndx);
    valid_ = names_.sh_offset + names_.sh_size <= size;
  }

  bool valid() const { return valid_; }
  unsigned count() const { return eh_.e_shnum; }
  const unsigned char* bytes() const { return bytes_; }
  uint64_t size() const { return size_; }

  Elf64_Shdr section(unsigned i) const {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes_ + eh_.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  }

  // The section's name (null when its offset lies outside the name table) and the bytes it may span.
  const char* name(const Elf64_Shdr& sh, size_t* max = nullptr) const {
    if (sh.sh_name >= names_.sh_size) return nullptr;
    if (max) *max = names_.sh_size - sh.sh_name;
    return reinterpret_cast<const char*>(bytes_ + names_.sh_offset + sh.sh_name);
  }

 private:
  const unsigned char* bytes_;
  uint64_t size_;
  Elf64_Ehdr eh_{};
  Elf64_Shdr names_{};
  bool valid_ = false;
};

// The index of `symbol` in the image's .symtab, or -1.
long symbol_index(const CubinSections& elf, const std::string& symbol) {
  for (unsigned i = 0; i < elf.count(); ++i) {
    const Elf64_Shdr sh = elf.section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= elf.count() || sh.sh_offset + sh.sh_size > elf.size()) continue;
    const Elf64_Shdr strs = elf.section(sh.sh_link);
    if (strs.sh_offset + strs.sh_size > elf.size()) continue;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.bytes() + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      if (sym.st_name >= strs.sh_size) continue;
      const char* n = reinterpret_cast<const char*>(elf.bytes() + strs.sh_offset + sym.st_name);
      if (strnlen(n, strs.sh_size - sym.st_name) == symbol.size() && symbol == n) return static_cast<long>(k);
    }
  }
  return -1;
}

}  // namespace

uint64_t cubin_static_shared(const void* cubin, uint64_t size, const std::string& symbol) {
  const CubinSections elf(cubin, size);
  if (!elf.valid()) return 0;
  const std::string wanted = ".nv.shared." + symbol;
  for (unsigned i = 0; i < elf.count(); ++i) {
    const Elf64_Shdr sh = elf.section(i);
    size_t max = 0;
    const char* name = elf.name(sh, &max);
    if (name && strnlen(name, max) == wanted.size() && wanted == name) return sh.sh_size;
  }
  return 0;
}

// Registers per thread from the .nv.info attributes (EIATTR_REGCOUNT, 0x2f: a symbol index and the
// count, what ptxas allocated).
int cubin_registers(const void* cubin, uint64_t size, const std::string& symbol) {
  const CubinSections elf(cubin, size);
  if (!elf.valid()) return 0;
  const long index = symbol_index(elf, symbol);
  if (index < 0) return 0;
  for (unsigned i = 0; i < elf.count(); ++i) {
    const Elf64_Shdr sh = elf.section(i);
    if (sh.sh_offset + sh.sh_size > size) continue;
    const char* name = elf.name(sh);
    if (!name || std::strncmp(name, ".nv.info", 8) != 0) continue;
    // attributes: a format byte, an attribute byte, then (format 4: a 16-bit size and that many
    // bytes; else a 16-bit value)
    for (uint64_t at = 0; at + 4 <= sh.sh_size;) {
      const unsigned char* a = elf.bytes() + sh.sh_offset + at;
      const unsigned format = a[0], attribute = a[1];
      const unsigned length = format == 4 ? static_cast<unsigned>(a[2] | (a[3] << 8)) : 0;
      if (format == 4 && attribute == 0x2f && length >= 8 && at + 4 + length <= sh.sh_size) {
        uint32_t sym = 0, regs = 0;
        std::memcpy(&sym, a + 4, 4);
        std::memcpy(&regs, a + 8, 4);
        if (static_cast<long>(sym) == index) return static_cast<int>(regs);
      }
      at += 4 + length;
    }
  }
  return 0;
}

}  // namespace dcsim_lib
