// The simulator's <cooperative_groups.h>: thread blocks, tiles and their collectives for
// kernels run on the CPU, built on the shim's barriers and warp intrinsics (dcsim_cuda.h), so
// sync(), shfl*() and reduce() have their real semantics (one fiber per CUDA thread).
//
// Provided: this_thread_block() and thread_block (sync, thread_rank, size/num_threads,
// group_index, thread_index, group_dim/dim_threads), tiled_partition<N>(block or tile) for N a
// power of two up to 1024 (sync, thread_rank, size, meta_group_rank, meta_group_size, shfl, shfl_up,
// shfl_down, shfl_xor, any, all, ballot), shuffles of any trivially-copyable type (moved 8 bytes at
// a time, as CUDA does), block_tile_memory (also under cg::experimental, CUDA 11's spelling),
// tiled_partition(block, n) (a thread_group: sync, thread_rank, size), coalesced_threads(),
// cg::sync(g), cg::reduce(tile, value, op) with cg::plus/less/greater/bit_and/bit_or/bit_xor, and
// cg::inclusive_scan/exclusive_scan(tile, value[, op]) (<cooperative_groups/scan.h>).
//
// Tiles larger than a warp (64..1024 threads) exchange values through a per-block buffer between
// two block barriers, so their collectives must be reached by every thread of the block -- which
// CUDA also requires in practice (a tile's collective is a barrier of its threads, and kernels
// call it uniformly); a tile that syncs alone ends as the simulator's deadlock error, not a hang.
//
// grid_group (this_grid()): ranks and sizes, and sync() under a cooperative launch (every block of
// the grid resident at once: dcsim_grid.h); outside one it fails the launch (CUDA_ERROR_LAUNCH_FAILED).
//
// Not provided: multi-grid groups, labeled_partition, memcpy_async.
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

// The shared memory CUDA 11 needs for tiles larger than a warp (CUDA 12: block_tile_memory<MaxBlockSize>,
// CUDA 11: block_tile_memory<TileCommunicationSize, MaxBlockSize>). The simulator keeps the
// exchange buffer itself, so the object only has to exist and be passed.
template <unsigned A = 1024, unsigned B = 0>
struct block_tile_memory {
  unsigned char reserved[1];
};
template <unsigned A, unsigned B>
thread_block this_thread_block(block_tile_memory<A, B>&) {
  return thread_block();
}

}  // namespace cooperative_groups

namespace dcsim_cg {
DCSIM_LOCAL_BEGIN

// A trivially-copyable value moved through warp shuffles 8 bytes at a time (CUDA's tile.shfl of
// structs and double2 does the same); `shuffle(mask, word, width)` is the one shuffle applied to
// each word (every lane shuffles the same number of words, so the exchanges pair up).
template <class T, class Shuffle>
T shfl_words(unsigned mask, const T& v, Shuffle shuffle, int width) {
  static_assert(std::is_trivially_copyable_v<T>, "cooperative groups shuffle trivially-copyable types only");
  if constexpr (sizeof(T) <= 8) {
    return shuffle(mask, v, width);
  } else {
    constexpr size_t words = (sizeof(T) + 7) / 8;
    unsigned long long in[words] = {}, out[words];
    memcpy(in, &v, sizeof(T));
    for (size_t i = 0; i < words; ++i) out[i] = shuffle(mask, in[i], width);
    T r = v;  // (T need not be default-constructible)
    memcpy(&r, out, sizeof(T));
    return r;
  }
}

// The block's exchange buffer for tiles larger than a warp: one per OS thread, hence per running
// block (as __shared__ variables are), grown as needed. Every thread stores its value at its rank
// in the block after a barrier (earlier readers are done) and reads the tile's values after a
// second one (every writer is done).
struct ExchangeBuffer {
  unsigned char* data = nullptr;
  size_t bytes = 0;
};
inline ExchangeBuffer& exchange_buffer() {
  static thread_local ExchangeBuffer b;
  return b;
}

template <class T>
const T* exchange(const T& v, unsigned long long rank, unsigned long long block_size) {
  static_assert(std::is_trivially_copyable_v<T>, "cooperative groups exchange trivially-copyable types only");
  __syncthreads();
  ExchangeBuffer& b = exchange_buffer();
  const size_t need = static_cast<size_t>(block_size) * sizeof(T);
  if (b.bytes < need) {
    void* grown = realloc(b.data, need);
    if (!grown) ::dcsim::fail(2, "out of host memory for a tile exchange%s%s of %ld bytes", "", "", static_cast<long>(need));
    b.data = static_cast<unsigned char*>(grown);
    b.bytes = need;
  }
  memcpy(b.data + rank * sizeof(T), &v, sizeof(T));
  __syncthreads();
  return reinterpret_cast<const T*>(b.data);
}

DCSIM_LOCAL_END
}  // namespace dcsim_cg

namespace cooperative_groups {

// A tile of `Size` consecutive threads of the block (by thread_rank). `Parent` is the group it was
// cut from (CUDA 11+ spells the type thread_block_tile<32, thread_block>). Tiles up to a warp use the
// warp intrinsics; larger ones (64..1024) the block's exchange buffer (dcsim_cg::exchange).
template <unsigned Size, class Parent = void>
class thread_block_tile {
  static_assert(Size >= 1 && Size <= 1024 && (Size & (Size - 1)) == 0,
                "tiles are a power of two of threads, 1 to 1024");
  static constexpr bool kWarp = Size <= 32;

 public:
  thread_block_tile() = default;
  template <class Other>
  thread_block_tile(const thread_block_tile<Size, Other>&) {}  // the parent is only part of the type
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  unsigned thread_rank() const { return static_cast<unsigned>(block_rank() & (Size - 1)); }
  unsigned meta_group_rank() const { return static_cast<unsigned>(block_rank() / Size); }
  unsigned meta_group_size() const {
    return static_cast<unsigned>((this_thread_block().size() + Size - 1) / Size);
  }
  void sync() const {
    if constexpr (kWarp)
      __syncwarp(mask());
    else
      __syncthreads();
  }
  template <class T>
  T shfl(T v, int src) const {
    return pick(v, [](unsigned r) { return r; }, [src](unsigned) { return static_cast<unsigned>(src) & (Size - 1); },
                [src](unsigned m, auto w, int width) { return __shfl_sync(m, w, src, width); });
  }
  template <class T>
  T shfl_up(T v, unsigned delta) const {
    return pick(v, [delta](unsigned r) { return r >= delta ? r - delta : r; }, nullptr,
                [delta](unsigned m, auto w, int width) { return __shfl_up_sync(m, w, delta, width); });
  }
  template <class T>
  T shfl_down(T v, unsigned delta) const {
    return pick(v, [delta](unsigned r) { return r + delta < Size ? r + delta : r; }, nullptr,
                [delta](unsigned m, auto w, int width) { return __shfl_down_sync(m, w, delta, width); });
  }
  template <class T>
  T shfl_xor(T v, int lane_mask) const {
    const unsigned x = static_cast<unsigned>(lane_mask);
    return pick(v, [x](unsigned r) { return (r ^ x) < Size ? r ^ x : r; }, nullptr,
                [x](unsigned m, auto w, int width) { return __shfl_xor_sync(m, w, static_cast<int>(x), width); });
  }
  int any(int pred) const {
    if constexpr (kWarp) {
      return (__ballot_sync(mask(), pred) & mask()) != 0;
    } else {
      const int* p = tile_values(static_cast<int>(pred != 0));
      int r = 0;
      for (unsigned i = 0; i < valid(); ++i) r |= p[i];
      return r;
    }
  }
  int all(int pred) const {
    if constexpr (kWarp) {
      return (__ballot_sync(mask(), pred) & mask()) == (mask() & __activemask());
    } else {
      const int* p = tile_values(static_cast<int>(pred != 0));
      int r = 1;
      for (unsigned i = 0; i < valid(); ++i) r &= p[i];
      return r;
    }
  }
  unsigned ballot(int pred) const {
    static_assert(kWarp, "ballot is defined for tiles of at most 32 threads");
    return (__ballot_sync(mask(), pred) & mask()) >> (lane() & ~(Size - 1));
  }

  // the tile's values in rank order (tiles larger than a warp; for reduce and scan)
  template <class T>
  const T* tile_values(const T& v) const {
    const unsigned long long r = block_rank();
    return ::dcsim_cg::exchange(v, r, this_thread_block().size()) + (r - (r & (Size - 1)));
  }
  // the number of the tile's threads that exist (the block's last tile may be cut short)
  unsigned valid() const {
    const unsigned long long base = block_rank() - (block_rank() & (Size - 1));
    const unsigned long long left = this_thread_block().size() - base;
    return static_cast<unsigned>(left < Size ? left : Size);
  }

 private:
  static unsigned long long block_rank() { return this_thread_block().thread_rank(); }
  static unsigned lane() { return static_cast<unsigned>(block_rank() % 32u); }
  static unsigned mask() {
    const unsigned bits = Size >= 32 ? 0xffffffffu : ((1u << (Size % 32u)) - 1u);
    return bits << (lane() & ~(Size - 1) & 31u);
  }
  // A shuffle: within a warp, `warp_op` on each 8-byte word; across a larger tile, the value of the
  // rank `from(rank)` (or `src(rank)` where given) read from the exchange buffer.
  template <class T, class From, class Src, class WarpOp>
  T pick(const T& v, From from, Src src, WarpOp warp_op) const {
    if constexpr (kWarp) {
      return ::dcsim_cg::shfl_words(mask(), v, warp_op, static_cast<int>(Size));
    } else {
      const T* p = tile_values(v);
      unsigned r;
      if constexpr (std::is_same_v<Src, std::nullptr_t>)
        r = from(thread_rank());
      else
        r = src(thread_rank());
      return r < valid() ? p[r] : v;
    }
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

// Every thread of the tile gets op over the tile's values: a butterfly of xor shuffles within a
// warp; across a larger tile, the values folded in rank order from the exchange buffer.
template <unsigned Size, class Parent, class T, class Op>
T reduce(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  if constexpr (Size <= 32) {
    for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset));
    return value;
  } else {
    const T* p = tile.tile_values(value);
    T r = p[0];
    for (unsigned i = 1; i < tile.valid(); ++i) r = op(r, p[i]);
    return r;
  }
}

// Each thread gets op over the values of the tile's ranks up to its own (inclusive_scan) or before
// it (exclusive_scan; rank 0 gets T{}, which CUDA leaves unspecified except for plus, where it is 0).
template <unsigned Size, class Parent, class T, class Op>
T inclusive_scan(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  if constexpr (Size <= 32) {
    for (unsigned d = 1; d < Size; d *= 2) {
      const T up = tile.shfl_up(value, d);
      if (tile.thread_rank() >= d) value = op(up, value);
    }
    return value;
  } else {
    const T* p = tile.tile_values(value);
    T r = p[0];
    for (unsigned i = 1; i <= tile.thread_rank(); ++i) r = op(r, p[i]);
    return r;
  }
}
template <unsigned Size, class Parent, class T>
T inclusive_scan(const thread_block_tile<Size, Parent>& tile, T value) {
  return inclusive_scan(tile, value, plus<T>());
}
template <unsigned Size, class Parent, class T, class Op>
T exclusive_scan(const thread_block_tile<Size, Parent>& tile, T value, Op op) {
  const T inclusive = inclusive_scan(tile, value, op);
  const T before = tile.shfl_up(inclusive, 1);
  return tile.thread_rank() == 0 ? T{} : before;
}
template <unsigned Size, class Parent, class T>
T exclusive_scan(const thread_block_tile<Size, Parent>& tile, T value) {
  return exclusive_scan(tile, value, plus<T>());
}

// Grid groups: ranks and sizes of the whole launch, and sync() under a cooperative launch
// (cuLaunchCooperativeKernel), which the simulator runs with every block resident at once
// (dcsim_grid.h); outside one, is_valid() is false and sync() fails the launch, as CUDA leaves it undefined.
class grid_group {
 public:
  bool is_valid() const { return ::dcsim::grid_is_valid(); }
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    ::dcsim::grid_barrier(file, line);
  }
  unsigned long long size() const { return num_blocks() * this_thread_block().size(); }
  unsigned long long num_threads() const { return size(); }
  unsigned long long num_blocks() const {
    return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  }
  unsigned long long block_rank() const {
    return blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + gridDim.y * blockIdx.z);
  }
  unsigned long long thread_rank() const { return block_rank() * this_thread_block().size() + this_thread_block().thread_rank(); }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return gridDim; }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
};
inline grid_group this_grid() { return grid_group(); }

// CUDA 11's spellings of the large-tile API
namespace experimental {
using ::cooperative_groups::block_tile_memory;
using ::cooperative_groups::this_thread_block;
using ::cooperative_groups::tiled_partition;
}  // namespace experimental

}  // namespace cooperative_groups
