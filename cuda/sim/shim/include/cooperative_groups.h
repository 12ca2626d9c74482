// The simulator's <cooperative_groups.h>: thread blocks, warp tiles and their collectives for
// kernels run on the CPU, built on the shim's barriers and warp intrinsics (dcsim_cuda.h), so
// sync(), shfl*() and reduce() have their real semantics (one fiber per CUDA thread).
//
// Provided: this_thread_block() and thread_block (sync, thread_rank, size/num_threads,
// group_index, thread_index, group_dim/dim_threads), tiled_partition<N>(block) and
// tiled_partition<N>(block) for N a power of two up to 32 (sync, thread_rank, size, meta_group_rank,
// meta_group_size, shfl, shfl_up, shfl_down, shfl_xor, any, all, ballot), tiled_partition(block, n)
// (a thread_group: sync, thread_rank, size), coalesced_threads(),
// cg::sync(g), and cg::reduce(tile, value, op) with cg::plus/less/greater/bit_and/bit_or/bit_xor.
// Not provided: grid and multi-grid groups (they need cooperative launches, which the simulator
// refuses), labeled_partition, memcpy_async.
#pragma once

namespace cooperative_groups {

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned long long thread_rank() const {
    return threadIdx.x + static_cast<unsigned long long>(blockDim.x) * (threadIdx.y + blockDim.y * threadIdx.z);
  }
  unsigned long long size() const { return static_cast<unsigned long long>(blockDim.x) * blockDim.y * blockDim.z; }
  unsigned long long num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }

// A tile of `Size` consecutive threads of a warp (by thread_rank in the block). `Parent` is the
// group it was cut from (CUDA 11+ spells the type thread_block_tile<32, thread_block>).
template <unsigned Size, class Parent = void>
class thread_block_tile {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0, "tiles are 1, 2, 4, 8, 16 or 32 threads");

 public:
  thread_block_tile() = default;
  template <class Other>
  thread_block_tile(const thread_block_tile<Size, Other>&) {}  // the parent is only part of the type
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  unsigned thread_rank() const { return lane() & (Size - 1); }
  unsigned meta_group_rank() const {
    return static_cast<unsigned>(this_thread_block().thread_rank() / Size);
  }
  unsigned meta_group_size() const {
    return static_cast<unsigned>((this_thread_block().size() + Size - 1) / Size);
  }
  void sync() const { __syncwarp(mask()); }
  template <class T>
  T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, Size); }
  template <class T>
  T shfl_up(T v, unsigned delta) const { return __shfl_up_sync(mask(), v, delta, Size); }
  template <class T>
  T shfl_down(T v, unsigned delta) const { return __shfl_down_sync(mask(), v, delta, Size); }
  template <class T>
  T shfl_xor(T v, int lane_mask) const { return __shfl_xor_sync(mask(), v, lane_mask, Size); }
  int any(int pred) const { return (__ballot_sync(mask(), pred) & mask()) != 0; }
  int all(int pred) const { return (__ballot_sync(mask(), pred) & mask()) == (mask() & __activemask()); }
  unsigned ballot(int pred) const { return (__ballot_sync(mask(), pred) & mask()) >> (lane() & ~(Size - 1)); }

 private:
  static unsigned lane() { return static_cast<unsigned>(this_thread_block().thread_rank() % 32u); }
  static unsigned mask() {
    const unsigned bits = Size == 32 ? 0xffffffffu : ((1u << Size) - 1u);
    return bits << (lane() & ~(Size - 1));
  }
};

// A tile sized at run time (tiled_partition(block, n)): ranks and sync, no shuffles (as in CUDA).
class thread_group {
 public:
  explicit thread_group(unsigned size) : size_(size) {}
  unsigned size() const { return size_; }
  unsigned num_threads() const { return size_; }
  unsigned thread_rank() const { return static_cast<unsigned>(this_thread_block().thread_rank() % size_); }
  unsigned meta_group_rank() const { return static_cast<unsigned>(this_thread_block().thread_rank() / size_); }
  void sync() const {
    if (size_ > 32) {
      __syncthreads();  // a tile larger than a warp is the whole block here
    } else {
      __syncwarp(mask());
    }
  }
 private:
  unsigned mask() const {
    const unsigned lane = static_cast<unsigned>(this_thread_block().thread_rank() % 32u);
    const unsigned bits = size_ >= 32 ? 0xffffffffu : ((1u << size_) - 1u);
    return size_ >= 32 ? bits : bits << (lane & ~(size_ - 1));
  }
  unsigned size_;
};

template <unsigned Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
  return thread_block_tile<Size, Parent>();
}
inline thread_group tiled_partition(const thread_block&, unsigned size) { return thread_group(size); }

// The threads of the warp active here (all of them in the simulator's warps, as on a GPU when no
// thread of the warp has left or branched away).
class coalesced_group {
 public:
  unsigned size() const { return static_cast<unsigned>(__popc(__activemask())); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const {
    const unsigned lane = static_cast<unsigned>(this_thread_block().thread_rank() % 32u);
    return static_cast<unsigned>(__popc(__activemask() & ((1u << lane) - 1u)));
  }
  void sync() const { __syncwarp(__activemask()); }
};
inline coalesced_group coalesced_threads() { return coalesced_group(); }

template <class Group>
void sync(const Group& g) {
  g.sync();
}
template <class Group>
unsigned long long thread_rank(const Group& g) {
  return g.thread_rank();
}
template <class Group>
unsigned long long group_size(const Group& g) {
  return g.size();
}

template <class T = void>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T = void>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T = void>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T = void>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T = void>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T = void>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

// Every thread of the tile gets op over the tile's values (a butterfly of xor shuffles).
template <unsigned Size, class Parent, class T, class Op>
T reduce(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset));
  return value;
}

}  // namespace cooperative_groups
