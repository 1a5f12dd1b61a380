/* The CPU's sphere gather (sphere_gather_cpu.h) compiled for AVX2 and FMA, with the screen; the 3D pass
 * uses it when the CPU has both (sphere_pass_cpu.c). CMake compiles this file with -mavx2 -mfma on
 * x86-64 (and the build does not contract a*b+c: ISO C11). */
#include "sphere_pass_cpu.h"

#ifdef AD_CPU_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "src/cpu/sphere_gather_avx2.c must be compiled with -mavx2 -mfma (CMakeLists.txt sets it on x86-64)"
#endif

void ad_cpu_gather3_avx2(const void *ctx, const ad_world *w, const ad_plain3 *r, const ad_state3 *in, size_t s,
                         ad_state3 at, ad_state3 me, ad_accum3 *a)
{
    ad_cpu_gather_all3(&w->params, &w->tri.tree, r->start, in, ctx, (uint32_t)s, at, me, a);
}
#else
typedef int ad_cpu_sphere_gather_avx2_unused; /* not an x86-64 build: the portable gather only */
#endif
