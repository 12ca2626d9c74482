#include "elf_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace cuda_double {

bool is_elf(const void* image, size_t* size) {
  const auto* h = static_cast<const Elf64_Ehdr*>(image);
  if (std::memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64) return false;
  if (size) {
    // The image ends where its last table or section does.
    size_t end = h->e_shoff + static_cast<size_t>(h->e_shnum) * h->e_shentsize;
    end = std::max(end, static_cast<size_t>(h->e_phoff + static_cast<size_t>(h->e_phnum) * h->e_phentsize));
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(static_cast<const unsigned char*>(image) + h->e_shoff);
    for (int i = 0; i < h->e_shnum; ++i)
      if (sections[i].sh_type != SHT_NOBITS) end = std::max(end, static_cast<size_t>(sections[i].sh_offset + sections[i].sh_size));
    const auto* segments = reinterpret_cast<const Elf64_Phdr*>(static_cast<const unsigned char*>(image) + h->e_phoff);
    for (int i = 0; i < h->e_phnum; ++i)
      end = std::max(end, static_cast<size_t>(segments[i].p_offset + segments[i].p_filesz));
    *size = end;
  }
  return true;
}

namespace {

// Every symbol of type `type` in the image's symbol tables: (name, size).
std::vector<std::pair<std::string, size_t>> symbols_of_type(const void* image, size_t size, unsigned type) {
  std::vector<std::pair<std::string, size_t>> out;
  const auto* base = static_cast<const unsigned char*>(image);
  const auto* h = static_cast<const Elf64_Ehdr*>(image);
  if (h->e_shentsize != sizeof(Elf64_Shdr) || h->e_shoff + h->e_shnum * sizeof(Elf64_Shdr) > size) return out;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + h->e_shoff);
  for (int i = 0; i < h->e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= h->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size) continue;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + symtab.sh_offset);
    const size_t count = symtab.sh_size / sizeof(Elf64_Sym);
    for (size_t s = 0; s < count; ++s) {
      if (ELF64_ST_TYPE(syms[s].st_info) != type || syms[s].st_name >= strtab.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(base + strtab.sh_offset + syms[s].st_name);
      out.emplace_back(std::string(name, strnlen(name, strtab.sh_size - syms[s].st_name)), syms[s].st_size);
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, size_t>> elf_object_symbols(const void* image, size_t size) {
  auto all = symbols_of_type(image, size, STT_OBJECT);
  all.erase(std::remove_if(all.begin(), all.end(), [](const auto& s) { return s.first.empty() || s.second == 0; }),
            all.end());
  return all;
}

std::vector<std::string> elf_function_names(const void* image, size_t size) {
  std::vector<std::string> names;
  for (auto& [name, bytes] : symbols_of_type(image, size, STT_FUNC)) names.push_back(std::move(name));
  return names;
}

std::vector<std::string> ptx_entry_names(const char* ptx) {
  std::vector<std::string> names;
  for (const char* p = std::strstr(ptx, ".entry"); p; p = std::strstr(p + 6, ".entry")) {
    const char* q = p + 6;
    while (*q == ' ' || *q == '\t') ++q;
    const char* end = q;
    while (*end && *end != '(' && *end != ' ' && *end != '\n' && *end != '\r') ++end;
    if (end > q) names.emplace_back(q, end);
  }
  return names;
}

}  // namespace cuda_double
