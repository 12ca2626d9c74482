// The per-call launch path: validate arguments against a kernel's signature,
// convert scalars, expand buffers into pointer + extents, pack and enqueue.
//
// Built once per (kernel, signature); launch() allocates nothing beyond
// fixed-size stack arrays for up to kInlineArgs expanded arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "dotcompute/dtype.hpp"
#include "dotcompute/export.hpp"
#include "dotcompute/kernel.hpp"

namespace dotcompute {

class Buffer;
class Stream;

enum class ParamKind : uint8_t { Buffer, Scalar };

struct ParamSpec {
  ParamKind kind = ParamKind::Scalar;
  std::string name;
  DType dtype = DType::Float32;
  int ndim = 0;          // buffers: 1..3 (extents appended); scalars: 0
  bool written = false;  // buffers: the kernel may write it (its host copy becomes stale)
};

// A host array handed to a launch (a numpy array). Accepted without copies on
// unified-memory devices only; elsewhere launch() throws NeedsStaging.
struct HostArray {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int ndim = 0;
  const int64_t* shape = nullptr;  // ndim extents, valid during the call
  bool contiguous = true;          // C-contiguous
  bool writable = true;
};

// One argument value: a device buffer, a host array or a Python scalar
// (int -> int64_t, float -> double, bool -> bool).
using ArgValue = std::variant<Buffer*, HostArray, int64_t, double, bool>;

// An indexing `arg[..., scale * global_id(gid) + offset, ...]` (at position `dim`) that every
// work-item of the kernel makes unguarded: the Python layer's bounds analysis finds these
// (python/dotcompute/lang/bounds.py) so that a launch can be checked before anything runs.
struct IndexFact {
  uint32_t arg = 0;
  uint32_t dim = 0;
  uint32_t gid = 0;
  int64_t scale = 1;
  int64_t offset = 0;
};

class DOTCOMPUTE_API LaunchPlan {
 public:
  static constexpr size_t kInlineArgs = 64;

  LaunchPlan(std::shared_ptr<Kernel> kernel, std::vector<ParamSpec> params, bool raw);

  // Validates and enqueues on `stream` (nullptr: the accelerator's default
  // stream). Throws InvalidArgumentError naming the parameter, NeedsStaging,
  // LaunchError. When host arrays were given, waits for completion before
  // returning (their memory belongs to the caller).
  void launch(const LaunchConfig& config, const ArgValue* args, size_t nargs, Stream* stream = nullptr);
  void launch(const LaunchConfig& config, const std::vector<ArgValue>& args, Stream* stream = nullptr) {
    launch(config, args.data(), args.size(), stream);
  }

  // The unguarded indexings indices_fit() checks (replacing any set before).
  void set_index_facts(std::vector<IndexFact> facts) { facts_ = std::move(facts); }
  const std::vector<IndexFact>& index_facts() const noexcept { return facts_; }
  // Whether every fact's largest index at this launch's global size lies inside its argument's
  // extent. False as well when a fact's argument is not a device buffer: the caller then proves the
  // launch its own way (and words the failure). A fact whose dimension the buffer lacks proves nothing.
  bool indices_fit(const LaunchConfig& config, const ArgValue* args, size_t nargs) const noexcept;

  const std::vector<ParamSpec>& params() const noexcept { return params_; }
  bool raw() const noexcept { return raw_; }
  Kernel& kernel() const noexcept { return *kernel_; }
  // Number of expanded ABI arguments for this signature (untyped raw: 0).
  size_t expanded_count() const noexcept { return expanded_; }

 private:
  std::shared_ptr<Kernel> kernel_;
  std::vector<ParamSpec> params_;
  bool raw_;
  bool untyped_;
  size_t expanded_ = 0;
  std::vector<IndexFact> facts_;
};

}  // namespace dotcompute
