/* The CPU backend's 3D pass: the plain pipeline's step 4 (src/reference/plain_dim.h) with the CPU's sphere
 * gather (sphere_gather_cpu.h), which gives the plain gather's sums bit for bit. reference3.c runs it for
 * backend = cpu; backend = reference keeps the plain gather. */
#ifndef AD_CPU_SPHERE_PASS_CPU_H
#define AD_CPU_SPHERE_PASS_CPU_H

#include "../reference/plain.h"
#include "sphere_gather_cpu.h"

/* The pass's own arrays: the mirror of the sorted states' positions for the screen. */
typedef struct ad_cpu_sphere_pass {
    ad_cpu_xyz xyz;
    int avx2; /* the CPU has AVX2 and FMA (and AD_CPU_NO_AVX2 is unset): the screen's gather */
} ad_cpu_sphere_pass;

/* Bytes a sphere (and the padding) takes in the pass's arrays. */
size_t ad_cpu_sphere_pass_bytes(size_t capacity);
/* 0 where an allocation failed (nothing left allocated). */
int ad_cpu_sphere_pass_alloc(ad_cpu_sphere_pass *f, size_t capacity);
void ad_cpu_sphere_pass_free(ad_cpu_sphere_pass *f);
/* Step 4 over the world's spheres (ad_plain_interact3's results). */
void ad_cpu_sphere_pass_run(ad_world *w, ad_plain3 *g, ad_cpu_sphere_pass *f, float dt);

/* The gathers, in the gatherer's form (plain_dim.h), for baseline x86-64 and for AVX2 and FMA. */
void ad_cpu_gather3_portable(const void *ctx, const ad_world *w, const ad_plain3 *r, const ad_state3 *in, size_t s,
                             ad_state3 at, ad_state3 me, ad_accum3 *a);
#ifdef AD_CPU_X86
void ad_cpu_gather3_avx2(const void *ctx, const ad_world *w, const ad_plain3 *r, const ad_state3 *in, size_t s,
                         ad_state3 at, ad_state3 me, ad_accum3 *a);
#endif

#endif
