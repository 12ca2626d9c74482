/* out = a * scale + b; n is the real element count (the global size is rounded up). */
__kernel void vadd_scaled(__global const float* a, __global const float* b, __global float* out,
                          float scale, long n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a[i] * scale + b[i];
}
