/* The interact pass compiled for AVX2 and FMA (interact_cpu.h); the world uses it when the CPU
 * has both (checked at run time in step_cpu.c). CMake compiles this file with -mavx2 -mfma on
 * x86-64 (and the build does not contract a*b+c: ISO C11). */
#include "cpu_world.h"

#ifdef AD_CPU_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "src/cpu/interact_avx2.c must be compiled with -mavx2 -mfma (CMakeLists.txt sets it on x86-64)"
#endif

#include "interact_cpu.h"
#include "verlet_drift_cpu.h"

AD_CPU_DEFINE_INTERACT(ad_cpu_interact_block_avx2)

void ad_cpu_drift_range_avx2(const ad_params *P, ad_state *s, const ad_accel *acc, size_t a, size_t b, float dt,
                             uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d)
{
    ad_cpu_drift_range(P, s, acc, a, b, dt, cell_of, bins, d);
}

int ad_cpu_integrate8_avx2_entry(const ad_params *P, const ad_state *in, ad_state *out, const float *AX,
                                 const float *AY, float dt, int symplectic, uint32_t *cell_of, ad_cpu_fused_bin *bins,
                                 ad_motion8 *m8, ad_step_sums *sums, uint32_t *outside)
{
    return ad_cpu_integrate8_avx2(P, in, out, AX, AY, dt, symplectic, cell_of, bins, m8, sums, outside);
}

void ad_cpu_gather_all_avx2_entry(const ad_params *p, const ad_seg_grid *g, const uint32_t *start, const ad_state *s,
                                  const ad_cpu_xy *xy,
                                  uint32_t i, ad_state me, int fast, ad_accum *a)
{
    ad_cpu_gather_all(p, g, start, s, xy, i, me, fast, a);
}

unsigned ad_cpu_contact_free8_avx2_entry(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                         const ad_cpu_xy *xy, size_t s, int rows_fit8, float *free_until,
                                         const ad_cpu_free_clock *fc)
{
    return ad_cpu_contact_free8_avx2(p, g, start, xy, s, rows_fit8, free_until, fc);
}
#else
typedef int ad_cpu_interact_avx2_unused; /* not an x86-64 build: the portable pass only */
#endif
