/* The CPU uniform grid: binning with the cell index kept, a parallel exclusive scan, a stable scatter. */
#include "grid_cpu.h"

#include <stdlib.h>
#include <string.h>

#include "../physics/grid.h"
#include "../physics/open.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef AD_CPU_X86
#include <immintrin.h>
#endif

void ad_cpu_bin(const ad_params *p, const ad_state *s, size_t n, uint32_t *cell_of, uint8_t *count, int threads,
                ad_grid_diag *diag)
{
    uint64_t outside = 0;
    const ad_params P = *p;
    if (threads <= 1) {
        for (size_t i = 0; i < n; i++) {
            ad_state q = s[i];
            uint32_t c = ad_bin_cell(&P, q); /* a removed disc: the dead cell (open.h) */
            cell_of[i] = c;
            count[c]++;
            outside += (uint64_t)(!ad_is_dead(q) && ad_outside_domain(&P, q.x, q.y));
        }
    } else {
        /* integer counts: atomic increments give the same totals (modulo 256) in any order */
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : outside)
        for (size_t i = 0; i < n; i++) {
            ad_state q = s[i];
            uint32_t c = ad_bin_cell(&P, q);
            cell_of[i] = c;
            __atomic_fetch_add(&count[c], (uint8_t)1, __ATOMIC_RELAXED);
            outside += (uint64_t)(!ad_is_dead(q) && ad_outside_domain(&P, q.x, q.y));
        }
    }
    diag->outside = outside;
}

/* A scan chunk's diagnostics: largest count, largest sum of three consecutive counts
 * inside the chunk, and the discs past `capacity` summed over its cells. */
typedef struct chunk_diag {
    uint32_t mx, m3;
    uint64_t ov;
} chunk_diag;

/* Cells [a, b) from `run`: start[c] = the running total, count[c] = 0; returns the total
 * after b and fills *d (the windows of three read ahead of the writes). */
static uint32_t scan_chunk(uint8_t *count, uint32_t *start, size_t a, size_t b, uint32_t run, uint32_t capacity,
                           chunk_diag *d)
{
    uint32_t m = 0, w = 0;
    uint64_t ov = 0;
    for (size_t c = a; c < b; c++) { /* a dependent add per cell; the rest runs beside it */
        uint32_t v = count[c];
        if (c + 2 < b) {
            uint32_t r = v + (uint32_t)count[c + 1] + (uint32_t)count[c + 2];
            w = r > w ? r : w;
        }
        start[c] = run;
        count[c] = 0;
        run += v;
        m = v > m ? v : m;
        ov += v > capacity ? v - capacity : 0;
    }
    d->mx = m;
    d->m3 = w;
    d->ov = ov;
    return run;
}

#ifdef AD_CPU_X86
/* The same, eight cells a time in AVX2 lanes (chosen at run time; integer sums, so the
 * same values): the eight counters widened to 32 bits, an in-register prefix sum, the
 * running total carried as a broadcast vector. */
__attribute__((target("avx2"))) static uint32_t scan_chunk_avx2(uint8_t *count, uint32_t *start, size_t a, size_t b,
                                                                uint32_t run, uint32_t capacity, chunk_diag *d)
{
    __m256i total = _mm256_set1_epi32((int)run), most = _mm256_setzero_si256(), most3 = most, over = most;
    const __m256i last = _mm256_set1_epi32(7), cap = _mm256_set1_epi32((int)capacity);
    size_t c = a;
    for (; c + 10 <= b; c += 8) {
        __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(count + c)));
        /* the eight windows c..c+2, ..., c+7..c+9, before this step's stores */
        __m256i r = _mm256_add_epi32(
            _mm256_add_epi32(v, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(count + c + 1)))),
            _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(count + c + 2))));
        __m256i x = _mm256_add_epi32(v, _mm256_slli_si256(v, 4)); /* within each 128-bit half */
        x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
        /* the low half's sum to each lane of the high half */
        x = _mm256_add_epi32(x, _mm256_permute2x128_si256(_mm256_shuffle_epi32(x, 0xff), x, 0x08));
        __m256i st = _mm256_add_epi32(total, _mm256_sub_epi32(x, v)); /* exclusive */
        _mm256_storeu_si256((__m256i *)(start + c), st);
        _mm_storel_epi64((__m128i *)(count + c), _mm_setzero_si128());
        total = _mm256_add_epi32(total, _mm256_permutevar8x32_epi32(x, last));
        most = _mm256_max_epu32(most, v);
        most3 = _mm256_max_epu32(most3, r);
        /* past the capacity: max(v, cap) - cap (a lane's sum stays below the disc count) */
        over = _mm256_add_epi32(over, _mm256_sub_epi32(_mm256_max_epu32(v, cap), cap));
    }
    _Alignas(32) uint32_t m8[8], w8[8], o8[8];
    _mm256_store_si256((__m256i *)m8, most);
    _mm256_store_si256((__m256i *)w8, most3);
    _mm256_store_si256((__m256i *)o8, over);
    uint32_t m = 0, w = 0;
    uint64_t ov = 0;
    for (int l = 0; l < 8; l++) {
        m = m8[l] > m ? m8[l] : m;
        w = w8[l] > w ? w8[l] : w;
        ov += o8[l];
    }
    /* the rest, whose windows start at c: those before c were taken above */
    run = scan_chunk(count, start, c, b, (uint32_t)_mm256_cvtsi256_si32(total), capacity, d);
    d->mx = d->mx > m ? d->mx : m;
    d->m3 = d->m3 > w ? d->m3 : w;
    d->ov += ov;
    return run;
}
#endif

/* The chunk scan of this CPU. */
static uint32_t scan_any(uint8_t *count, uint32_t *start, size_t a, size_t b, uint32_t run, uint32_t capacity,
                         chunk_diag *d)
{
#ifdef AD_CPU_X86
    if (__builtin_cpu_supports("avx2")) return scan_chunk_avx2(count, start, a, b, run, capacity, d);
#endif
    return scan_chunk(count, start, a, b, run, capacity, d);
}

/* The windows of three consecutive counts that start in [b - 2, b) and run past b: a
 * chunk's scan does not see them. */
static uint32_t windows_across(const uint8_t *count, size_t b, size_t ncell)
{
    uint32_t w = 0;
    for (size_t c = b >= 2 ? b - 2 : 0; c < b && c + 2 < ncell; c++) {
        uint32_t r = (uint32_t)count[c] + count[c + 1] + count[c + 2];
        w = r > w ? r : w;
    }
    return w;
}

/* The sum of the counters [a, b). */
static uint32_t sum_counts(const uint8_t *count, size_t a, size_t b)
{
    uint32_t sum = 0;
    size_t c = a;
#ifdef AD_CPU_X86
    /* sixteen at a time: SSE2's sum of absolute differences from zero (every x86-64 CPU) */
    __m128i acc = _mm_setzero_si128();
    for (; c + 16 <= b; c += 16) acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(count + c)),
                                                                       _mm_setzero_si128()));
    sum = (uint32_t)(_mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)));
#endif
    for (; c < b; c++) sum += count[c];
    return sum;
}

/* The diagnostics of chunks 0..m-1 and of the windows of three across their ends. */
static void fold_diag(const chunk_diag *cd, const uint32_t *across, int m, ad_grid_diag *diag)
{
    diag->max_occupancy = diag->max_run3 = 0;
    diag->overflow = 0;
    for (int k = 0; k < m; k++) {
        diag->max_occupancy = cd[k].mx > diag->max_occupancy ? cd[k].mx : diag->max_occupancy;
        uint32_t w = cd[k].m3 > across[k] ? cd[k].m3 : across[k];
        diag->max_run3 = w > diag->max_run3 ? w : diag->max_run3;
        diag->overflow += cd[k].ov;
    }
}

/* The counts where a counter wrapped (ad_cpu_scan): cell_of[0..n) counted again in 32 bits
 * into start[0..ncell), then scanned there in place, with the diagnostics. */
static void recount(const uint32_t *cell_of, size_t n, uint32_t *start, size_t ncell, uint32_t capacity,
                    ad_grid_diag *diag)
{
    memset(start, 0, ncell * sizeof *start);
    for (size_t i = 0; i < n; i++) start[cell_of[i]]++;
    uint32_t run = 0, m = 0, w = 0;
    uint64_t ov = 0;
    for (size_t c = 0; c < ncell; c++) {
        uint32_t v = start[c];
        if (c + 2 < ncell) { /* the window's later counts are not overwritten yet */
            uint32_t r = v + start[c + 1] + start[c + 2];
            w = r > w ? r : w;
        }
        start[c] = run;
        run += v;
        m = v > m ? v : m;
        ov += v > capacity ? v - capacity : 0;
    }
    start[ncell] = run;
    diag->max_occupancy = m;
    diag->max_run3 = w;
    diag->overflow = ov;
}

void ad_cpu_scan(uint8_t *count, uint32_t *start, size_t ncell, const uint32_t *cell_of, size_t n, uint32_t capacity,
                 ad_grid_diag *diag)
{
    /* one thread: on several the engine scans inside the reorder's region (ad_cpu_sort) */
    chunk_diag cd;
    uint32_t across = 0;
    start[ncell] = scan_any(count, start, 0, ncell, 0, capacity, &cd);
    if (start[ncell] != (uint32_t)n) { /* short by a multiple of 256: a counter wrapped */
        recount(cell_of, n, start, ncell, capacity, diag);
        return;
    }
    fold_diag(&cd, &across, 1, diag);
}

/* What the reorder moves, for its per-thread loops (their own copies of the pointers: in an
 * OpenMP region the compiler reloads shared ones after every store that might alias them). */
typedef ad_cpu_reorder_job reorder_job;

/* Disc i to its cell's cursor, an absolute slot (the cell's start, counted up). */
static inline __attribute__((always_inline)) void place(const reorder_job *J, size_t i, uint32_t c)
{
    uint32_t slot = J->cursor[c]++;
    ad_state q = J->src[i];
    J->dst[slot] = q;
    J->idst[slot] = J->isrc[i];
    if (J->adst) J->adst[slot] = J->asrc[i];
    if (J->free_until_dst) J->free_until_dst[slot] = J->free_until_src[i];
    if (J->touch_dst) J->touch_dst[slot] = J->touch_src[i];
    if (J->xy) {
        J->xy->x[slot] = q.x;
        J->xy->y[slot] = q.y;
    }
}

/* place_range's loop, compiled once for each combination of its constant flags: `check`
 * (only cells in [lo, lo + width)), `acc` (accelerations move too), `pos` (positions to xy),
 * `until` (the contact-free expiries move too). */
static inline __attribute__((always_inline)) void place_loop(const reorder_job *J, size_t a, size_t b, uint32_t lo,
                                                             uint32_t width, const int check, const int acc,
                                                             const int pos, const int until)
{
    const uint32_t *restrict cell_of = J->cell_of;
    uint32_t *restrict cursor = J->cursor;
    const ad_state *restrict src = J->src;
    ad_state *restrict dst = J->dst;
    const uint32_t *restrict isrc = J->isrc;
    uint32_t *restrict idst = J->idst;
    const ad_accel *restrict asrc = J->asrc;
    ad_accel *restrict adst = J->adst;
    const float *restrict usrc = J->free_until_src;
    float *restrict udst = J->free_until_dst;
    float *restrict px = pos ? J->xy->x : NULL, *restrict py = pos ? J->xy->y : NULL;
    for (size_t i = a; i < b; i++) {
        uint32_t c = cell_of[i];
        if (check && c - lo >= width) continue; /* another thread's cell */
        uint32_t slot = cursor[c]++;
        ad_state v = src[i];
        dst[slot] = v;
        idst[slot] = isrc[i];
        if (acc) adst[slot] = asrc[i];
        if (until) udst[slot] = usrc[i];
        if (pos) {
            px[slot] = v.x;
            py[slot] = v.y;
        }
    }
}

/* Discs [a, b) whose cells are in [lo, lo + width), in index order (width = UINT32_MAX:
 * every cell). */
static void place_range(const reorder_job *J, size_t a, size_t b, uint32_t lo, uint32_t width)
{
    int check = width != UINT32_MAX, acc = J->adst != NULL, pos = J->xy != NULL, until = J->free_until_dst != NULL;
    if (J->touch_dst) { /* surfaces sampled (the slow pass, interact_cpu.h): every array tested per disc */
        for (size_t i = a; i < b; i++) {
            uint32_t c = J->cell_of[i];
            if (!check || c - lo < width) place(J, i, c);
        }
        return;
    }
    switch (check << 3 | acc << 2 | pos << 1 | until) {
#define AD_PLACE_CASE(k) \
    case k: place_loop(J, a, b, lo, width, (k) >> 3 & 1, (k) >> 2 & 1, (k) >> 1 & 1, (k) & 1); break;
        AD_PLACE_CASE(0) AD_PLACE_CASE(1) AD_PLACE_CASE(2) AD_PLACE_CASE(3) AD_PLACE_CASE(4) AD_PLACE_CASE(5)
        AD_PLACE_CASE(6) AD_PLACE_CASE(7) AD_PLACE_CASE(8) AD_PLACE_CASE(9) AD_PLACE_CASE(10) AD_PLACE_CASE(11)
        AD_PLACE_CASE(12) AD_PLACE_CASE(13) AD_PLACE_CASE(14)
    default: place_loop(J, a, b, lo, width, 1, 1, 1, 1); break;
#undef AD_PLACE_CASE
    }
}

/* The discs of list[0..m) whose cells are in [lo, lo + width), in list order. */
static void place_list(const reorder_job *J, const uint32_t *list, size_t m, uint32_t lo, uint32_t width)
{
    for (size_t q = 0; q < m; q++) {
        uint32_t i = list[q], c = J->cell_of[i];
        if (c - lo < width) place(J, i, c);
    }
}

/* Lists the discs of [a, b) whose cells are outside [lo, lo + width); returns their
 * number, or SIZE_MAX when they do not fit `cap`. Nearly every disc is inside: on x86-64
 * four cells are tested at once (SSE2, in every x86-64 CPU) and only a group with one
 * outside is looked into (a scalar loop took 1.2 ns a disc here, a third of the reorder). */
static size_t list_strays(const uint32_t *restrict cell_of, size_t a, size_t b, uint32_t lo, uint32_t width,
                           uint32_t *restrict list, size_t cap)
{
    size_t m = 0, i = a;
#ifdef AD_CPU_X86
    /* c - lo >= width, unsigned, as a signed compare of both sides offset by 2^31 */
    const __m128i bias = _mm_set1_epi32((int)0x80000000u), vlo = _mm_set1_epi32((int)lo);
    const __m128i vlim = _mm_xor_si128(_mm_set1_epi32((int)width), bias);
    for (; i + 4 <= b; i += 4) {
        __m128i d = _mm_xor_si128(_mm_sub_epi32(_mm_loadu_si128((const __m128i *)(cell_of + i)), vlo), bias);
        /* inside: d < width; outside: not (width > d) */
        int in = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(vlim, d)));
        if (in == 0xf) continue;
        for (int l = 0; l < 4; l++)
            if (!(in >> l & 1)) {
                if (m == cap) return SIZE_MAX;
                list[m++] = (uint32_t)(i + (size_t)l);
            }
    }
#endif
    for (; i < b; i++)
        if (cell_of[i] - lo >= width) {
            if (m == cap) return SIZE_MAX;
            list[m++] = (uint32_t)i;
        }
    return m;
}

/* The first slot of thread k's window: whole blocks of the interact pass, k nb / t of them
 * before it, so that a thread reorders the slots its pass wrote (claim_block,
 * step_cpu.c). */
static size_t window(int k, size_t n, int t)
{
    size_t nb = (n + AD_BLOCK - 1) / AD_BLOCK, a = (size_t)((uint64_t)k * nb / (uint64_t)t) * AD_BLOCK;
    return a < n ? a : n;
}

/* The cells of each thread: [split[k], split[k+1]), from the cell of its window's first
 * disc, or with the pass's leavers (ad_cpu_leavers, fused_bin_cpu.h) from the first cell of
 * its window's first block, so that each of its blocks' own cells are the thread's. */
static void thread_cells(const uint32_t *cell_of, const ad_cpu_leavers *lv, size_t n, size_t ncell, int t,
                         uint32_t *split)
{
    split[0] = 0;
    for (int k = 1; k < t; k++) {
        size_t a = window(k, n, t);
        uint32_t c = a >= n ? (uint32_t)ncell : lv ? lv->first_cell[a / AD_BLOCK] : cell_of[a];
        split[k] = c > split[k - 1] ? c : split[k - 1];
    }
    split[t] = (uint32_t)ncell;
}

/* list_strays from the pass's leavers (fused_bin_cpu.h): the listed discs of the window's
 * blocks (whole blocks, [a, b)) whose cells are outside [lo, lo + width), in index order (each
 * block's list is). Every other disc of the window stayed in its block's cells, which are the
 * thread's (thread_cells). */
static size_t list_strays_of_leavers(const ad_cpu_leavers *lv, const uint32_t *cell_of, size_t a, size_t b,
                                     uint32_t lo, uint32_t width, uint32_t *list, size_t cap)
{
    size_t m = 0;
    for (size_t blk = a / AD_BLOCK; blk * AD_BLOCK < b; blk++)
        for (uint32_t q = 0; q < lv->count[blk]; q++) {
            uint32_t i = lv->list[blk * AD_BLOCK + q];
            if (cell_of[i] - lo < width) continue;
            if (m == cap) return SIZE_MAX;
            list[m++] = i;
        }
    return m;
}

/* Thread k's placing, after every thread listed its strays (nf[j] of them, SIZE_MAX
 * where they did not fit): those of the windows before its own, its own window's, those of
 * the windows after; or, should any list have overflowed, every disc of its cells. */
static void place_thread(const reorder_job *J, int k, int t, size_t n, uint32_t lo, uint32_t width,
                         const uint32_t *strays, size_t share, const size_t *nf)
{
    int spill = 0;
    for (int j = 0; j < t; j++) spill |= nf[j] == SIZE_MAX;
    if (spill) {
        place_range(J, 0, n, lo, width);
        return;
    }
    for (int j = 0; j < t; j++) {
        if (j == k) place_range(J, window(k, n, t), window(k + 1, n, t), lo, width);
        else place_list(J, strays + (size_t)j * share, nf[j], lo, width);
    }
}

/* The reorder on t > 1 threads (ad_cpu_reorder's comment), the starts in J->cursor; with
 * `count` not NULL each thread first scans its own cells into them (ad_cpu_sort). */
static void reorder_threads(const reorder_job *J, size_t n, size_t ncell, int t, uint8_t *count, uint32_t capacity,
                            const ad_cpu_leavers *leavers, uint32_t *strays, size_t strays_cap, ad_grid_diag *diag)
{
    enum { MAXT = 256 };
    uint32_t split[MAXT + 1], partial[MAXT], across[MAXT];
    size_t nf[MAXT];
    chunk_diag cd[MAXT];
    thread_cells(J->cell_of, leavers, n, ncell, t, split);
    const size_t share = strays_cap / (size_t)t;
#pragma omp parallel num_threads(t)
    {
#ifdef _OPENMP
        int k = omp_get_thread_num();
#else
        int k = 0;
#endif
        const uint32_t lo = split[k], hi = split[k + 1], width = hi - lo;
        if (count) { /* its cells' total and the windows of three across their end, before any is cleared */
            partial[k] = sum_counts(count, lo, hi);
            across[k] = windows_across(count, hi, ncell);
        }
        if (leavers)
            nf[k] = list_strays_of_leavers(leavers, J->cell_of, window(k, n, t), window(k + 1, n, t), lo, width,
                                           strays + (size_t)k * share, share);
        else
            nf[k] = list_strays(J->cell_of, window(k, n, t), window(k + 1, n, t), lo, width,
                                strays + (size_t)k * share, share);
#pragma omp barrier
        int place = 1;
        if (count) { /* its cells' starts, from the totals before it (and its counters cleared) */
            uint32_t run = 0, total = 0;
            for (int j = 0; j < t; j++) {
                run += j < k ? partial[j] : 0;
                total += partial[j];
            }
            run = scan_any(count, J->cursor, lo, hi, run, capacity, &cd[k]);
            if (k == t - 1) J->cursor[ncell] = run;
            place = total == (uint32_t)n; /* else a counter wrapped: the starts come from the recount below */
        }
        if (place) place_thread(J, k, t, n, lo, width, strays, share, nf);
    }
    if (count && J->cursor[ncell] != (uint32_t)n) {
        recount(J->cell_of, n, J->cursor, ncell, capacity, diag);
        reorder_threads(J, n, ncell, t, NULL, 0, leavers, strays, strays_cap, NULL);
    } else if (count)
        fold_diag(cd, across, t, diag);
}

void ad_cpu_reorder(const ad_cpu_reorder_job *job, size_t n, size_t ncell, int threads, uint32_t *strays,
                    size_t strays_cap)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (n < 2048) t = 1; /* small: not worth waking threads (the tests run 3000 discs on 2 to 4) */
    const reorder_job J = *job;
    if (t == 1) { /* every cell is this thread's */
        place_range(&J, 0, n, 0, UINT32_MAX);
        return;
    }
    /* Thread k owns the cells [split[k], split[k+1]) and the discs of the index window
     * [window(k), window(k+1)), about n / t of them; the discs are still nearly in cell
     * order (they moved less than a cell since the last reorder), so its window holds nearly
     * all the discs that land in its cells, and the cells of evenly spaced discs give each
     * thread about the same share. Each thread lists its window's discs that land in other
     * threads' cells (the strays: the few near a window's ends and the re-entered ones), then
     * moves, in index order, the discs of its cells: the strays of the windows before
     * its own, its own window's, those of the windows after. Each cell is filled in index
     * order, so the result is the same for any number of threads. Should a window's strays
     * not fit their share of `strays`, every thread reads every disc instead (the
     * same result, slower). */
    reorder_threads(&J, n, ncell, t, NULL, 0, NULL, strays, strays_cap, NULL);
}

void ad_cpu_sort(uint8_t *count, const ad_cpu_reorder_job *job, size_t n, size_t ncell, int threads, uint32_t capacity,
                 const ad_cpu_leavers *leavers, uint32_t *strays, size_t strays_cap, ad_grid_diag *diag)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (n < 2048) t = 1; /* as ad_cpu_reorder */
    if (t == 1) {
        ad_cpu_scan(count, job->cursor, ncell, job->cell_of, n, capacity, diag);
        ad_cpu_reorder(job, n, ncell, 1, strays, strays_cap);
        return;
    }
    /* ad_cpu_reorder's threads, each scanning its own cells just before it fills them: the
     * scan's chunks are the reorder's cell ranges, so no thread waits for the others' starts
     * (one region, one barrier; the windows of three across the chunks' ends are taken
     * before the barrier, while every counter still holds its count). */
    reorder_threads(job, n, ncell, t, count, capacity, leavers, strays, strays_cap, diag);
}
