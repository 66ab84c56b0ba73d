// aspectr/unroll.h — ASPECTR_UNROLL: full unrolling of a short loop with a
// compile-time trip count. At -O2 GCC neither unrolls such loops nor keeps
// small accumulator arrays in registers (a store and a reload per
// multiply-add); unrolling does not change any arithmetic.
#ifndef ASPECTR_UNROLL_H
#define ASPECTR_UNROLL_H

#if defined(__clang__)
#define ASPECTR_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define ASPECTR_UNROLL _Pragma("GCC unroll 16")
#else
#define ASPECTR_UNROLL
#endif

#endif
