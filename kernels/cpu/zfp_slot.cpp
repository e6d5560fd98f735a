// kernels/cpu/zfp_slot.cpp — see zfp_slot.hpp.
#include "kernels/cpu/zfp_slot.hpp"

#include <zfp.h>

#include <cstring>
#include <type_traits>
#include <vector>

namespace starwave::cpu {
namespace {

constexpr zfp_type zfp_type_of(bool single) { return single ? zfp_type_float : zfp_type_double; }

/// ZFP's view of `values` as store block `b` (its extents longer than one, x fastest), and
/// a stream at the store's fixed rate for it.
template <typename T>
struct BlockCoder {
  zfp_field* field;
  zfp_stream* stream;
  BlockCoder(const ShotProblem<T>& p, const typename ShotProblem<T>::StoreBlock& b, const T* values) {
    constexpr zfp_type type = zfp_type_of(std::is_same_v<T, float>);
    void* at = const_cast<T*>(values);
    std::size_t e[3];
    unsigned d = 0;
    for (int n : {b.width, b.y1 - b.y0, b.z1 - b.z0})
      if (n > 1) e[d++] = std::size_t(n);
    field = d == 3   ? zfp_field_3d(at, type, e[0], e[1], e[2])
            : d == 2 ? zfp_field_2d(at, type, e[0], e[1])
                     : zfp_field_1d(at, type, d == 1 ? e[0] : 1);
    stream = zfp_stream_open(nullptr);
    zfp_stream_set_rate(stream, pack16::zfp_rate(p.compression), type, zfp_field_dimensionality(field), zfp_false);
  }
  ~BlockCoder() {
    zfp_stream_close(stream);
    zfp_field_free(field);
  }
  BlockCoder(const BlockCoder&) = delete;
  BlockCoder& operator=(const BlockCoder&) = delete;
  /// The block's stream over `bytes` at `at`, coded from the values (encode) or into them;
  /// the bytes it took.
  long code(void* at, long bytes, bool encode) {
    bitstream* bits = stream_open(at, std::size_t(bytes));
    zfp_stream_set_bit_stream(stream, bits);
    zfp_stream_rewind(stream);
    const std::size_t done = encode ? zfp_compress(stream, field) : zfp_decompress(stream, field);
    stream_close(bits);
    return long(done);
  }
};

/// Every block of a slot, coded one way or the other.
template <typename T>
void code_slot(const ShotProblem<T>& p, T* values, unsigned char* at, bool encode) {
  typename ShotProblem<T>::StoreBlock b[ShotProblem<T>::kMaxStoreBlocks];
  for (int i = 0, n = p.store_blocks(b); i < n; ++i) {
    const long bytes = p.zfp_block_bytes(b[i]);
    BlockCoder<T>(p, b[i], values).code(at, bytes, encode);
    at += bytes;
    values += b[i].size();
  }
}

}  // namespace

template <typename T>
void zfp_encode_slot(const ShotProblem<T>& p, const T* values, T* slot) {
  std::memset(slot, 0, std::size_t(ShotProblem<T>::kAlign) * sizeof(T));
  code_slot(p, const_cast<T*>(values), reinterpret_cast<unsigned char*>(slot + ShotProblem<T>::kAlign), true);
}

template <typename T>
void zfp_decode_slot(const ShotProblem<T>& p, const T* slot, T* values) {
  code_slot(p, values, reinterpret_cast<unsigned char*>(const_cast<T*>(slot + ShotProblem<T>::kAlign)), false);
}

template <typename T>
long zfp_stream_bytes(const ShotProblem<T>& p, const typename ShotProblem<T>::StoreBlock& b, const T* values) {
  BlockCoder<T> coder(p, b, values);
  std::vector<unsigned char> room(zfp_stream_maximum_size(coder.stream, coder.field));
  return coder.code(room.data(), long(room.size()), true);
}

template void zfp_encode_slot<float>(const ShotProblem<float>&, const float*, float*);
template void zfp_encode_slot<double>(const ShotProblem<double>&, const double*, double*);
template void zfp_decode_slot<float>(const ShotProblem<float>&, const float*, float*);
template void zfp_decode_slot<double>(const ShotProblem<double>&, const double*, double*);
template long zfp_stream_bytes<float>(const ShotProblem<float>&, const ShotProblem<float>::StoreBlock&, const float*);
template long zfp_stream_bytes<double>(const ShotProblem<double>&, const ShotProblem<double>::StoreBlock&,
                                       const double*);

}  // namespace starwave::cpu
