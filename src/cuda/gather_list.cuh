/* The GPU's fast path of the disc-disc (sphere-sphere) search, for the usual grid (a cell of at least
 * the contact distance: reach 1 on every axis) away from a periodic seam column: the neighbour rows'
 * slot ranges (3 rows in 2D; 9 in 3D, as one list or a list a z layer: AD3_LIST_ROWS) walked as one
 * list by one loop, rather than row by row (gather_dim.h, the plain reference, which this must equal
 * term for term). Row by row, a warp waits for its longest row each row (in a 2D gas at area fraction
 * 0.3 about 13 candidates for 3.4 useful ones); one list waits once for the longest list (about 9).
 * The order of the terms is gather_dim.h's (rows in stencil order, slots ascending), so the sums are
 * the same. The disc itself is not skipped: at zero distance the contact law adds exact zeros, cheaper
 * than a divergent branch. Each candidate's state is loaded one iteration ahead. The callers return
 * 0, having done nothing, where this shape does not apply (the caller takes gather_dim.h's loops).
 * dev/cuda/gather.cu times the 2D list against gather_dim.h's rows. */
#ifndef AD_CUDA_GATHER_LIST_CUH
#define AD_CUDA_GATHER_LIST_CUH

#include "../physics/gather.h"

/* The disc-disc contact law as the list's loop takes it: contact.h's (dev/cuda/gather.cu passes
 * another to time it). */
struct ad_disc_contact {
    __device__ __forceinline__ void operator()(const ad_params *p, float dx, float dy, float dvx, float dvy,
                                               ad_accum *a) const
    {
        ad_contact_disc(p, dx, dy, dvx, dvy, a);
    }
};

/* What the loop loads of a candidate and how it meets it (the list's traits D): a 2D disc is one
 * 16-byte load {x, y, vx, vy}; a 3D sphere the position half {x, y, z, -} and, where the contacts are
 * damped (VEL: gamma_pp != 0), the velocity half {vx, vy, vz, -}. Undamped (an elastic gas, restitution
 * 1) the law's damping term is gamma_pp vn = 0 whatever vn, so the relative velocity is passed as zeros
 * (the same forces to the bit) and the candidate costs half the loads. x needs no minimum image (the
 * list is never used at a periodic seam column, so every candidate is within a cell in x); y (and z)
 * only where the rows wrap (WRAP: the loop is compiled twice rather than testing the axis per
 * candidate). */
template <class C = ad_disc_contact>
struct ad_list_disc {
    typedef ad_state state;
    typedef ad_accum accum;
    struct cand {
        float4 a;
    };
    static __device__ __forceinline__ cand load(const ad_state *__restrict__ s, unsigned j)
    {
        return cand{reinterpret_cast<const float4 *>(s)[j]};
    }
    template <bool WRAP>
    static __device__ __forceinline__ void meet(const ad_params &p, const cand &q, ad_state me, accum *a)
    {
        float dx = q.a.x - me.x;
        float dy = WRAP ? ad_min_image(q.a.y - me.y, 1, p.len_y, p.half_y) : q.a.y - me.y;
        const C contact;
        contact(&p, dx, dy, q.a.z - me.vx, q.a.w - me.vy, a);
    }
};

template <bool VEL>
struct ad_list_sphere {
    typedef ad_state3 state;
    typedef ad_accum3 accum;
    struct cand {
        float4 x, v;
    };
    static __device__ __forceinline__ cand load(const ad_state3 *__restrict__ s, unsigned j)
    {
        const float4 *s4 = reinterpret_cast<const float4 *>(s);
        return cand{s4[2 * j], VEL ? s4[2 * j + 1] : make_float4(0.0f, 0.0f, 0.0f, 0.0f)};
    }
    template <bool WRAP>
    static __device__ __forceinline__ void meet(const ad_params &p, const cand &q, ad_state3 me, accum *a)
    {
        float dx = q.x.x - me.x;
        float dy = WRAP ? ad_min_image(q.x.y - me.y, p.periodic_y, p.len_y, p.half_y) : q.x.y - me.y;
        float dz = WRAP ? ad_min_image(q.x.z - me.z, p.periodic_z, p.len_z, p.half_z) : q.x.z - me.z;
        if (VEL) ad_contact_disc3(&p, dx, dy, dz, q.v.x - me.vx, q.v.y - me.vy, q.v.z - me.vz, a);
        else ad_contact_disc3(&p, dx, dy, dz, 0.0f, 0.0f, 0.0f, a);
    }
};

/* The list's loop over R rows: row r's slots b[r] .. b[r] + (end[r] - end[r - 1]), end[] the running
 * ends (end[R - 1] the list's length). The slot of the next entry is stepped, not computed: one past
 * the last, or the start of the next row where the entry count reaches a row's end (tests on the entry
 * count, exact whatever order the rows' slot ranges have; an empty row's end equals the one before, and
 * the later row wins), and the load past the list's end reads its first entry again instead of
 * branching around it. */
template <int R, bool WRAP, class D>
__device__ __forceinline__ void ad_list_loop(const ad_params &p, const typename D::state *__restrict__ s,
                                             typename D::state me, const unsigned b[R], const unsigned end[R],
                                             typename D::accum *a)
{
    const unsigned total = end[R - 1];
    if (total == 0) return;
    unsigned j = b[0];
#pragma unroll
    for (int r = 0; r + 1 < R; r++) j = end[r] == 0 ? b[r + 1] : j; /* the first row with slots */
    const unsigned first = j;
    typename D::cand o = D::load(s, j);
    /* not unrolled: lanes of a warp have lists of different lengths, and an unrolled body
     * with a remainder loop makes them take different paths one after the other (2D, 4x
     * unrolled: the pass 0.466 -> 0.488 ms, H200) */
#pragma unroll 1
    for (unsigned k = 1; k <= total; k++) {
        typename D::cand q = o;
        j++;
#pragma unroll
        for (int r = 0; r + 1 < R; r++) j = k == end[r] ? b[r + 1] : j;
        o = D::load(s, k < total ? j : first);
        D::template meet<WRAP>(p, q, me, a);
    }
}

/* Row (dy, dz)'s cells lo..hi (one slot range): its first slot in b, the running end in *end. */
__device__ __forceinline__ void ad_list_row(const unsigned *__restrict__ start, int row, unsigned base, int lo, int hi,
                                            unsigned *b, unsigned *end)
{
    unsigned j0 = start[base + (unsigned)lo], j1 = start[base + (unsigned)hi + 1];
    *b = j0;
    *end += row < 0 ? 0u : j1 - j0;
}

/* 2D: the disc contacts of ad_gather_discs (gather_dim.h), the three rows as one list. */
template <class C = ad_disc_contact>
__device__ __forceinline__ int ad_gather_discs_list(const ad_params &p, const unsigned *__restrict__ start,
                                                    const ad_state *__restrict__ s, ad_state me, int cx, int cy,
                                                    ad_accum *a)
{
    if (p.reach_x != 1 || p.reach_y != 1) return 0;
    if (p.periodic_x && (cx == 0 || cx == p.nx - 1)) return 0;
    int lo = cx > 0 ? cx - 1 : 0, hi = cx < p.nx - 1 ? cx + 1 : cx;
    unsigned b[3], end[3], run = 0;
#pragma unroll
    for (int d = 0; d < 3; d++) {
        int row = ad_neighbour_row(cy, d - 1, p.ny, p.periodic_y);
        ad_list_row(start, row, (unsigned)(row < 0 ? 0 : row) * (unsigned)p.nx, lo, hi, &b[d], &run);
        end[d] = run;
    }
    if (p.periodic_y) ad_list_loop<3, true, ad_list_disc<C>>(p, s, me, b, end, a);
    else ad_list_loop<3, false, ad_list_disc<C>>(p, s, me, b, end, a);
    return 1;
}

/* 3D: the nine rows of the 27 cells as one list (AD3_LIST_ROWS 9), or the three rows of each z layer
 * as one (3: fewer registers, a wait a layer). */
#ifndef AD3_LIST_ROWS
#define AD3_LIST_ROWS 3
#endif

template <int R, bool VEL>
__device__ __forceinline__ void ad_gather_layers3(const ad_params &p, const unsigned *__restrict__ start,
                                                  const ad_state3 *__restrict__ s, ad_state3 me, int lo, int hi,
                                                  int cy, int cz, ad_accum3 *a)
{
    const bool wrap = p.periodic_y || p.periodic_z;
#pragma unroll 1
    for (int l = 0; l < 9 / R; l++) {
        unsigned b[R], end[R], run = 0;
#pragma unroll
        for (int k = 0; k < R; k++) {
            int r = l * R + k; /* the stencil's order: z outermost, then y */
            int row = ad_neighbour_row(cy, r % 3 - 1, p.ny, p.periodic_y);
            int layer = ad_neighbour_row(cz, r / 3 - 1, p.nz, p.periodic_z);
            if (layer < 0) row = -1;
            unsigned base = ((unsigned)(layer < 0 ? 0 : layer) * (unsigned)p.ny + (unsigned)(row < 0 ? 0 : row)) *
                            (unsigned)p.nx;
            ad_list_row(start, row, base, lo, hi, &b[k], &run);
            end[k] = run;
        }
        if (wrap) ad_list_loop<R, true, ad_list_sphere<VEL>>(p, s, me, b, end, a);
        else ad_list_loop<R, false, ad_list_sphere<VEL>>(p, s, me, b, end, a);
    }
}

__device__ __forceinline__ int ad_gather_discs_list3(const ad_params &p, const unsigned *__restrict__ start,
                                                     const ad_state3 *__restrict__ s, ad_state3 me, int cx, int cy,
                                                     int cz, ad_accum3 *a)
{
    if (p.reach_x != 1 || p.reach_y != 1 || p.reach_z != 1 || p.stencil.rows != 9) return 0;
    if (p.periodic_x && (cx == 0 || cx == p.nx - 1)) return 0;
    int lo = cx > 0 ? cx - 1 : 0, hi = cx < p.nx - 1 ? cx + 1 : cx;
    if (p.gamma_pp != 0.0f) ad_gather_layers3<AD3_LIST_ROWS, true>(p, start, s, me, lo, hi, cy, cz, a);
    else ad_gather_layers3<AD3_LIST_ROWS, false>(p, start, s, me, lo, hi, cy, cz, a);
    return 1;
}

#endif
