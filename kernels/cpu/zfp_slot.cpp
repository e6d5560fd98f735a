// kernels/cpu/zfp_slot.cpp — see zfp_slot.hpp.
#include "kernels/cpu/zfp_slot.hpp"

#include <zfp.h>

#include <cstring>
#include <type_traits>
#include <vector>

namespace starwave::cpu {
namespace {

/// ZFP's view of `values` as store block `b`: its extents longer than one, x fastest.
template <typename T>
zfp_field* block_field(const typename ShotProblem<T>::StoreBlock& b, const T* values) {
  const zfp_type type = std::is_same_v<T, float> ? zfp_type_float : zfp_type_double;
  void* at = const_cast<T*>(values);
  std::size_t e[3];
  unsigned d = 0;
  for (int n : {b.width, b.y1 - b.y0, b.z1 - b.z0})
    if (n > 1) e[d++] = std::size_t(n);
  return d == 3   ? zfp_field_3d(at, type, e[0], e[1], e[2])
         : d == 2 ? zfp_field_2d(at, type, e[0], e[1])
                  : zfp_field_1d(at, type, d == 1 ? e[0] : 1);
}

/// One block's stream over `bytes` at `at`: compressed from `values` (encode) or into them.
template <typename T>
long code_block(const ShotProblem<T>& p, const typename ShotProblem<T>::StoreBlock& b, T* values, void* at, long bytes,
                bool encode) {
  zfp_field* field = block_field<T>(b, values);
  zfp_stream* zs = zfp_stream_open(nullptr);
  const zfp_type type = std::is_same_v<T, float> ? zfp_type_float : zfp_type_double;
  zfp_stream_set_rate(zs, pack16::zfp_rate(p.compression), type, zfp_field_dimensionality(field), zfp_false);
  bitstream* bits = stream_open(at, std::size_t(bytes));
  zfp_stream_set_bit_stream(zs, bits);
  zfp_stream_rewind(zs);
  const std::size_t done = encode ? zfp_compress(zs, field) : zfp_decompress(zs, field);
  stream_close(bits);
  zfp_stream_close(zs);
  zfp_field_free(field);
  return long(done);
}

}  // namespace

template <typename T>
void zfp_encode_slot(const ShotProblem<T>& p, const T* values, T* slot) {
  typename ShotProblem<T>::StoreBlock b[ShotProblem<T>::kMaxStoreBlocks];
  const int n = p.store_blocks(b);
  std::memset(slot, 0, std::size_t(ShotProblem<T>::kAlign) * sizeof(T));
  auto* at = reinterpret_cast<unsigned char*>(slot + ShotProblem<T>::kAlign);
  for (int i = 0; i < n; ++i) {
    const long bytes = p.zfp_block_bytes(b[i]);
    code_block(p, b[i], const_cast<T*>(values), at, bytes, true);
    at += bytes;
    values += b[i].size();
  }
}

template <typename T>
void zfp_decode_slot(const ShotProblem<T>& p, const T* slot, T* values) {
  typename ShotProblem<T>::StoreBlock b[ShotProblem<T>::kMaxStoreBlocks];
  const int n = p.store_blocks(b);
  auto* at = reinterpret_cast<const unsigned char*>(slot + ShotProblem<T>::kAlign);
  for (int i = 0; i < n; ++i) {
    const long bytes = p.zfp_block_bytes(b[i]);
    code_block(p, b[i], values, const_cast<unsigned char*>(at), bytes, false);
    at += bytes;
    values += b[i].size();
  }
}

template <typename T>
long zfp_stream_bytes(const ShotProblem<T>& p, const typename ShotProblem<T>::StoreBlock& b, const T* values) {
  zfp_field* field = block_field<T>(b, values);
  zfp_stream* zs = zfp_stream_open(nullptr);
  const zfp_type type = std::is_same_v<T, float> ? zfp_type_float : zfp_type_double;
  zfp_stream_set_rate(zs, pack16::zfp_rate(p.compression), type, zfp_field_dimensionality(field), zfp_false);
  std::vector<unsigned char> room(zfp_stream_maximum_size(zs, field));
  zfp_stream_close(zs);
  zfp_field_free(field);
  return code_block(p, b, const_cast<T*>(values), room.data(), long(room.size()), true);
}

template void zfp_encode_slot<float>(const ShotProblem<float>&, const float*, float*);
template void zfp_encode_slot<double>(const ShotProblem<double>&, const double*, double*);
template void zfp_decode_slot<float>(const ShotProblem<float>&, const float*, float*);
template void zfp_decode_slot<double>(const ShotProblem<double>&, const double*, double*);
template long zfp_stream_bytes<float>(const ShotProblem<float>&, const ShotProblem<float>::StoreBlock&, const float*);
template long zfp_stream_bytes<double>(const ShotProblem<double>&, const ShotProblem<double>::StoreBlock&,
                                       const double*);

}  // namespace starwave::cpu
