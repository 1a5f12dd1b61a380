/* Open (far-field) sides and the free-stream reservoir, once for both backends.
 *
 * Open sides. A side of an open axis (AD_BOUNDARY_OPEN) is the far field of a wind tunnel, as in
 * rarefied-gas codes: a disc whose centre leaves through it is removed, and the free stream's inward
 * flux enters through it. The free stream is a drifting Maxwellian: number density n (per area),
 * velocity U, temperature kT/m = sigma^2 per component. Through a side of length L whose inward
 * normal is nhat the stream's normal velocity is u = U . nhat, a = u / sigma, and kinetic theory gives
 *   the discs entering per time     L n sigma (phi(a) + a Phi(a))      (phi, Phi: the standard normal's
 *                                                                      density and distribution),
 *   their normal speed v > 0 with density proportional to v exp(-(v - u)^2 / (2 sigma^2)) (flux-weighted),
 *   their tangential velocity       U_t + sigma N(0, 1),
 *   where they cross                uniformly along the side, at a uniform instant of the step, so that a
 *                                   disc is a distance v dt u' inside at the step's end (u' uniform).
 * The count per step is that rate times dt accumulated, its whole part entering (exact on average).
 *
 * Room. Without disc-disc contacts (free-molecular flow) every entering disc is placed. With them, a
 * disc placed where another centre lies within a diameter would store far more elastic energy than
 * kT; an entering disc whose spot is not clear waits, outside, and tries again in the next step at
 * the same point of the side with the same velocity (a fresh depth): the flux, the distribution of
 * the entering velocities and of the entry points stay those of the free stream, only later. A spot
 * is judged against the gas after the step's pass (the grid or tree of the step, whose positions
 * moved at most max_move radii since: the search reaches 1.5 diameters) and against the spots of the
 * entering discs listed before it in the step.
 *
 * The reservoir. In a dense gas an open side is not enough: the gas outside would push on the gas
 * inside (the collisional part of the pressure, half of it at area fraction 0.3), most spots at the
 * side are taken, and the gas inside expands out through it (measured in an empty tunnel at area
 * fraction 0.3: 0.66 of the stream's density, 0.85 of its temperature). A world with a reservoir
 * keeps a band along each open side, the outermost cells of its grid, where the gas is held at the
 * free stream:
 *  - a thermostat: each disc in the band gets a fresh free-stream velocity at the rate nu
 *    (Andersen's, with the stream's drift: the band's gas is an equilibrium gas at the stream's
 *    temperature moving at U);
 *  - a density controller: the band's boxes of cells are held at the stream's number density by
 *    a proportional-integral controller at the rate nu / AD_RES_CONTROL_SLOWER
 *    (ad_reservoir_decide): discs added at random spots with room, with free-stream velocities,
 *    or removed, chosen by a counter-based key;
 *  - its outer edge, the domain's: open where the stream enters or leaves (entries as above), a
 *    solid wall where the stream runs along it (no normal velocity: the wall is the stream's own
 *    symmetry there, and holds the band's pressure).
 * Inside the band's inner edge the gas is free; it meets there a gas of the free stream's density,
 * velocity, temperature and pressure, as the tunnel's gas would meet the free stream upstream.
 * Where the stream enters, the band adds most of the gas that enters the tunnel; a new disc has no
 * contacts, and the band there is wider (ad_world_def.reservoir_inflow) so the gas relaxes before
 * it reaches the tunnel. docs/ARCHITECTURE.md describes the choice, docs/VALIDATION.md measures it.
 *
 * Removed discs. A removed disc keeps its slot until the next sort, with the state ad_dead_state()
 * (NaN position) and the dead cell (nx * ny, after the grid's cells), so that the sort puts
 * the removed discs after the others and the world shrinks there. */
/* Two dimensions: four open sides with a 2D free-molecular flux (one tangential component), the
 * reservoir boxes tile a 2D band; 3D has six faces and two tangential components. */
#ifndef AD_PHYSICS_OPEN_H
#define AD_PHYSICS_OPEN_H

#include "grid.h"
#include "rng.h"
#include "state.h"

/* ------------------------------------------------------------ removed discs -- */

AD_HD static inline ad_state ad_dead_state(void)
{
    ad_state s;
    s.x = s.y = NAN;
    s.vx = s.vy = 0.0f;
    return s;
}

AD_HD static inline int ad_is_dead(ad_state s) { return s.x != s.x; }

/* The cell a disc is binned in: its grid cell, or the dead cell after the grid's cells. */
AD_HD static inline uint32_t ad_bin_cell(const ad_params *p, ad_state s)
{
    return ad_is_dead(s) ? (uint32_t)p->nx * (uint32_t)p->ny : ad_cell_index(p, s.x, s.y);
}

/* 3D: a removed sphere's state (NaN position), its test and its cell, as in 2D; the dead cell follows
 * the nx ny nz grid cells. */
AD_HD static inline ad_state3 ad_dead_state3(void)
{
    ad_state3 s;
    s.x = s.y = s.z = NAN;
    s.spare_p = s.vx = s.vy = s.vz = s.spare_v = 0.0f;
    return s;
}

AD_HD static inline int ad_is_dead3(ad_state3 s) { return s.x != s.x; }

AD_HD static inline uint32_t ad_bin_cell3(const ad_params *p, ad_state3 s)
{
    return ad_is_dead3(s) ? (uint32_t)p->nx * (uint32_t)p->ny * (uint32_t)p->nz : ad_cell_index3(p, s.x, s.y, s.z);
}

/* 1 when the centre is past an open side. */
AD_HD static inline int ad_left_open(const ad_params *p, float x, float y)
{
    return (p->open[0] && !(x >= p->x_min)) || (p->open[1] && !(x < p->x_max)) || (p->open[2] && !(y >= p->y_min)) ||
           (p->open[3] && !(y < p->y_max));
}

/* ------------------------------------------------------------- free stream -- */

/* The standard normal's density and distribution. */
AD_HD static inline double ad_normal_pdf(double a) { return 0.3989422804014327 * exp(-0.5 * a * a); }
AD_HD static inline double ad_normal_cdf(double a) { return 0.5 * erfc(-a * 0.7071067811865476); }

/* Discs entering per unit time and length of a side whose inward normal velocity of the stream is un. */
AD_HD static inline double ad_flux_per_length(double n, double sigma, double un)
{
    if (!(sigma > 0.0)) return un > 0.0 ? n * un : 0.0;
    double a = un / sigma;
    return n * sigma * (ad_normal_pdf(a) + a * ad_normal_cdf(a));
}

/* A normal speed of an entering disc, in units of sigma: density x exp(-(x - a)^2 / 2), x > 0.
 *   a >= 0: a normal proposal centred on the mode b, where x exp(-(b - a) x) bounds the ratio
 *           (acceptance above 1/2);
 *   -1 < a < 0: a Rayleigh proposal x exp(-x^2/2), accepted with exp(a x) (acceptance above 1/3);
 *   a <= -1: a Gamma(2, -a) proposal x exp(a x), accepted with exp(-x^2/2) (above 1/3).
 * Counter-based: the value depends on (seed, counter) only. */
AD_HD static inline double ad_flux_speed(uint64_t seed, uint64_t counter, double a)
{
    for (uint64_t k = 0; k < 64; k++) {
        uint64_t s = seed + k * 0x9E3779B97F4A7C15ull;
        double u = ad_rng_uniform(s ^ 0xA24BAED4963EE407ull, counter);
        if (a >= 0.0) {
            double b = 0.5 * (a + sqrt(a * a + 4.0)), c = b - a, xm = 1.0 / c, norm = xm * exp(-c * xm);
            double g1, g2;
            ad_rng_normal2(s, counter, &g1, &g2);
            double x = b + g1;
            if (x > 0.0 && u * norm <= x * exp(-c * x)) return x;
        } else if (a > -1.0) {
            double x = sqrt(-2.0 * log(ad_rng_uniform(s, 2 * counter)));
            if (u <= exp(a * x)) return x;
        } else {
            double x = -(log(ad_rng_uniform(s, 2 * counter)) + log(ad_rng_uniform(s, 2 * counter + 1))) / -a;
            if (u <= exp(-0.5 * x * x)) return x;
        }
    }
    return a > 0.0 ? a : 0.5; /* 64 rejections in a row: practically never */
}

/* A side of the domain: 0 x_min, 1 x_max, 2 y_min, 3 y_max. */
typedef struct ad_side {
    float nx, ny;    /* inward normal */
    float at;        /* the side's coordinate */
    float lo, hi;    /* its extent along the side (centres that may enter) */
    int along_periodic;
} ad_side;

AD_HD static inline ad_side ad_side_of(const ad_params *p, int f)
{
    ad_side s;
    int xs = f < 2;
    s.nx = xs ? (f == 0 ? 1.0f : -1.0f) : 0.0f;
    s.ny = xs ? 0.0f : (f == 2 ? 1.0f : -1.0f);
    s.at = f == 0 ? p->x_min : f == 1 ? p->x_max : f == 2 ? p->y_min : p->y_max;
    /* along a side: the other axis; solid walls there keep centres a radius off */
    float lo = xs ? p->y_min : p->x_min, hi = xs ? p->y_max : p->x_max;
    s.lo = p->wall[xs ? 2 : 0] ? lo + p->radius : lo;
    s.hi = p->wall[xs ? 3 : 1] ? hi - p->radius : hi;
    s.along_periodic = xs ? p->periodic_y : p->periodic_x;
    return s;
}

/* 1 when side f is open. */
AD_HD static inline int ad_side_open(const ad_params *p, int f) { return p->open[f]; }

/* 1 when a step's entering discs (`total`, the waiting ones and the reservoir's included) can be
 * neither placed nor held: more than the room under the capacity plus the waiting list. The step
 * then fails (AD_ERR_CAPACITY) before it draws them: a stream far denser or faster than the world was
 * sized for would otherwise draw up to 4e9 discs in one step (a hang, not a run). Both backends. */
AD_HD static inline int ad_entries_overflow(unsigned long long total, unsigned long long n, unsigned long long cap,
                                            unsigned long long waiting_max)
{
    return total > (cap > n ? cap - n : 0ull) + waiting_max;
}

/* The free stream's entry rate through side f [1/s] (ad_params.side_rate holds it). */
static inline double ad_side_rate(const ad_params *p, int f)
{
    if (!ad_side_open(p, f)) return 0.0;
    ad_side s = ad_side_of(p, f);
    double len = (double)s.hi - (double)s.lo;
    if (!(len > 0.0)) return 0.0;
    double un = (double)p->stream_vx * s.nx + (double)p->stream_vy * s.ny;
    return len * ad_flux_per_length(p->stream_density, p->stream_sigma, un);
}

/* An entering disc before its depth: the side, the point along it, its velocity. 16 bytes. */
typedef struct ad_entry {
    float along, vn, vt;
    uint32_t side;
} ad_entry;

/* Entering disc j of side f in `step`, drawn from (seed, step, f, j). */
AD_HD static inline ad_entry ad_entry_draw(const ad_params *p, int f, uint64_t step, uint32_t j)
{
    ad_side s = ad_side_of(p, f);
    uint64_t seed = (p->seed ^ 0x6A09E667F3BCC909ull) + step * 0xBB67AE8584CAA73Bull + (uint64_t)f * 0x3C6EF372FE94F82Bull;
    double sig = p->stream_sigma;
    double un = (double)p->stream_vx * s.nx + (double)p->stream_vy * s.ny;
    double ut = (double)p->stream_vx * -s.ny + (double)p->stream_vy * s.nx; /* along (-ny, nx) */
    ad_entry e;
    e.along = s.lo + (float)(ad_rng_uniform(seed, 3 * (uint64_t)j) * ((double)s.hi - (double)s.lo));
    if (!(e.along < s.hi)) e.along = s.lo;
    e.vn = sig > 0.0 ? (float)(sig * ad_flux_speed(seed ^ 0x510E527FADE682D1ull, j, un / sig)) : (float)un;
    double g1, g2;
    ad_rng_normal2(seed ^ 0x9B05688C2B3E6C1Full, j, &g1, &g2);
    e.vt = (float)(ut + sig * g1);
    e.side = (uint32_t)f;
    return e;
}

/* Where an entering disc is at the end of the step: a fraction u of the step inside (u in (0, 1]). */
AD_HD static inline ad_state ad_entry_place(const ad_params *p, ad_entry e, float dt, double u)
{
    ad_side s = ad_side_of(p, (int)e.side);
    float depth = (float)((double)e.vn * dt * u), along = e.along + (float)((double)e.vt * dt * u);
    if (s.along_periodic) {
        float lo = e.side < 2 ? p->y_min : p->x_min, len = e.side < 2 ? p->len_y : p->len_x;
        along = ad_wrap(along, lo, len);
    } else {
        along = along < s.lo ? s.lo : (along > s.hi ? s.hi : along);
    }
    ad_state q;
    /* velocity: vn along the inward normal, vt along (-ny, nx) */
    q.vx = e.vn * s.nx - e.vt * s.ny;
    q.vy = e.vn * s.ny + e.vt * s.nx;
    if (e.side < 2) {
        q.x = s.at + s.nx * depth;
        q.y = along;
    } else {
        q.x = along;
        q.y = s.at + s.ny * depth;
    }
    /* inside the domain: an open side's own coordinate is in it at x_min, not at x_max */
    if (e.side == 1 && !(q.x < p->x_max)) q.x = nextafterf(p->x_max, -INFINITY);
    if (e.side == 3 && !(q.y < p->y_max)) q.y = nextafterf(p->y_max, -INFINITY);
    return q;
}

/* --------------------------------------------------------------- reservoir -- */

/* The reservoir box of cell (cx, cy, cz) (cz = 0 in 2D), or -1 where the cell is inside the band's inner
 * edge. The band is the outer res_l, res_r columns and res_b, res_t rows of the grid, in four parts:
 * left and right columns full height, bottom and top rows between them; each cut into boxes of
 * res_box[part] cells, and in 3D into layers of res_box_z[part] cells along z (the parts span the
 * depth). A part's boxes run along x, then y (res_cols a row, res_rows rows a layer), then z. */
AD_HD static inline int ad_reservoir_box_of_cell(const ad_params *p, int cx, int cy, int cz)
{
    int part, lx, ly;
    if (cx < p->res_l) part = 0, lx = cx, ly = cy;
    else if (cx >= p->nx - p->res_r) part = 1, lx = cx - (p->nx - p->res_r), ly = cy;
    else if (cy < p->res_b) part = 2, lx = cx - p->res_l, ly = cy;
    else if (cy >= p->ny - p->res_t) part = 3, lx = cx - p->res_l, ly = cy - (p->ny - p->res_t);
    else return -1;
    int B = p->res_box[part];
    return p->res_first[part] + ((cz / p->res_box_z[part]) * p->res_rows[part] + ly / B) * p->res_cols[part] + lx / B;
}

/* Box b's cells [lo[a], hi[a]) along x, y, z (z: [0, 1) in 2D). */
AD_HD static inline void ad_reservoir_box_cells(const ad_params *p, int b, int lo[3], int hi[3])
{
    int part = 3;
    while (part > 0 && (b < p->res_first[part] || !p->res_cols[part])) part--;
    int k = b - p->res_first[part], B = p->res_box[part], Bz = p->res_box_z[part];
    int layer = p->res_cols[part] * p->res_rows[part], iz = k / layer;
    k -= iz * layer;
    int ix = k % p->res_cols[part], iy = k / p->res_cols[part];
    int x0 = part == 0 ? 0 : part == 1 ? p->nx - p->res_r : p->res_l;
    int x1 = part == 0 ? p->res_l : part == 1 ? p->nx : p->nx - p->res_r;
    int y0 = part < 2 ? 0 : part == 2 ? 0 : p->ny - p->res_t;
    int y1 = part < 2 ? p->ny : part == 2 ? p->res_b : p->ny;
    lo[0] = x0 + ix * B;
    hi[0] = lo[0] + B < x1 ? lo[0] + B : x1;
    lo[1] = y0 + iy * B;
    hi[1] = lo[1] + B < y1 ? lo[1] + B : y1;
    lo[2] = iz * Bz;
    hi[2] = lo[2] + Bz < p->nz ? lo[2] + Bz : p->nz;
}

/* The part of box b where a centre may lie [m]: its cells within the domain, a radius off solid walls
 * (along x, y, z; z unused in 2D). */
AD_HD static inline void ad_reservoir_box_rect(const ad_params *p, int b, float lo[3], float hi[3])
{
    int c0[3], c1[3];
    ad_reservoir_box_cells(p, b, c0, c1);
    const float org[3] = {p->origin_x, p->origin_y, p->origin_z}, cell[3] = {p->cell_x, p->cell_y, p->cell_z};
    const float mn[3] = {p->x_min, p->y_min, p->z_min}, mx[3] = {p->x_max, p->y_max, p->z_max};
    for (int a = 0; a < 3; a++) {
        float l = p->wall[2 * a] ? mn[a] + p->radius : mn[a], h = p->wall[2 * a + 1] ? mx[a] - p->radius : mx[a];
        float s = org[a] + (float)c0[a] * cell[a], e = org[a] + (float)c1[a] * cell[a];
        lo[a] = s > l ? s : l;
        hi[a] = e < h ? e : h;
    }
}

/* A disc's fate in step 5. */
enum { AD_KEPT = 0, AD_LEFT = 1, AD_RESERVOIR_REMOVED = 2 };

/* The density controller runs this many times slower than the thermostat. A controller that answers
 * every fluctuation of a box's count removes the discs that linger in a box (the slow ones) more
 * often than others, and the discs it adds have no contacts yet (less collisional pressure): in an
 * empty tunnel at area fraction 0.3 the free stream came out 2.5-3.5 % cold with both at one rate,
 * 1-2 % at a tenth, and within 1 % at a thirtieth (docs/VALIDATION.md). */
#define AD_RES_CONTROL_SLOWER 30.0

/* The reservoir's plan for box b in a step, from its count n of discs (before the pass) and the
 * stream's number there (want): a proportional-integral controller of the count at the rate nu,
 * critically damped: discs are added (removed) at the rate 2 nu e + nu^2 I, e = want - n the
 * shortfall and I its time integral, so that in a steady state the box's mean count is the stream's
 * whatever flows through it and however often a spot has no room. The rate accumulates in a debt: a
 * debt of a disc or more asks for that many additions (at most AD_RES_ADD_MAX a step), of minus one
 * or less for that many removals; each done settles one. The integral and the debt are bounded, so
 * that a box that cannot be helped (no room) does not wind up. Returns the removals; *add receives
 * the additions asked. state[0] is the debt, state[1] the integral. */
#define AD_RES_ADD_MAX 8
AD_HD static inline uint32_t ad_reservoir_decide(double *state, double want, uint32_t n, double nu, double dt,
                                                 uint32_t *add)
{
    double e = want - (double)n, lim = 4.0 * want + 4.0;
    double I = state[1] + e * dt, ilim = lim / (nu > 0.0 ? nu : 1.0);
    I = I > ilim ? ilim : (I < -ilim ? -ilim : I);
    state[1] = I;
    double d = state[0] + (2.0 * nu * e + nu * nu * I) * dt;
    d = d > lim ? lim : (d < -lim ? -lim : d);
    uint32_t rm = 0;
    *add = 0;
    if (d <= -1.0) {
        double k = floor(-d);
        rm = k < (double)n ? (uint32_t)k : n;
        d += (double)rm;
    } else if (d >= 1.0) {
        double k = floor(d);
        *add = k < AD_RES_ADD_MAX ? (uint32_t)k : AD_RES_ADD_MAX;
    }
    state[0] = d;
    return rm;
}

/* The order in which a box's discs are removed: the smallest keys of the step first. */
AD_HD static inline uint64_t ad_reservoir_key(const ad_params *p, uint64_t step, uint32_t id)
{
    return ad_rng_u64((p->seed ^ 0x428A2F98D728AE22ull) + step * 0x7137449123EF65CDull, id);
}

/* The first slot of grid row (cy, cz): a row's cells are one slot range of the grid's cell order. */
AD_HD static inline uint32_t ad_reservoir_row(const ad_params *p, int cy, int cz)
{
    return ((uint32_t)cz * (uint32_t)p->ny + (uint32_t)cy) * (uint32_t)p->nx;
}

/* Box b's cells (ad_reservoir_box_cells) within columns [c0, c1): none where lo[0] >= hi[0]. */
AD_HD static inline void ad_reservoir_box_cells_in(const ad_params *p, int b, int c0, int c1, int lo[3], int hi[3])
{
    ad_reservoir_box_cells(p, b, lo, hi);
    lo[0] = lo[0] > c0 ? lo[0] : c0;
    hi[0] = hi[0] < c1 ? hi[0] : c1;
}

/* Discs (spheres) of box b in the grid's cell order (`start`) within columns [c0, c1): row by row. */
AD_HD static inline uint32_t ad_reservoir_box_count_in(const ad_params *p, const uint32_t *start, int b, int c0, int c1)
{
    int lo[3], hi[3];
    ad_reservoir_box_cells_in(p, b, c0, c1, lo, hi);
    uint32_t n = 0;
    for (int cz = lo[2]; cz < hi[2] && lo[0] < hi[0]; cz++)
        for (int cy = lo[1]; cy < hi[1]; cy++)
            n += start[ad_reservoir_row(p, cy, cz) + (uint32_t)hi[0]] - start[ad_reservoir_row(p, cy, cz) + (uint32_t)lo[0]];
    return n;
}

/* Discs (spheres) of box b: all its columns. */
AD_HD static inline uint32_t ad_reservoir_box_count(const ad_params *p, const uint32_t *start, int b)
{
    return ad_reservoir_box_count_in(p, start, b, 0, p->nx);
}

#define AD_RES_PICK_MAX 16

/* A removal's candidate: the key of the step, the id and the slot (none: slot UINT32_MAX, key UINT64_MAX),
 * ordered by key, then id. Over several processes (backend = mpi) a box's removals are chosen among every
 * rank's candidates (mpi_res_merge), whose slots are their ranks'. */
typedef struct ad_res_pick {
    uint64_t key;
    uint32_t id, slot;
} ad_res_pick;

AD_HD static inline int ad_res_pick_before(ad_res_pick a, ad_res_pick b)
{
    return a.key != b.key ? a.key < b.key : a.id < b.id;
}

/* q kept among best[0..*n), sorted, where it is among the `want` first. */
AD_HD static inline void ad_res_pick_keep(ad_res_pick *best, uint32_t *n, uint32_t want, ad_res_pick q)
{
    if (!want || (*n == want && !ad_res_pick_before(q, best[*n - 1]))) return;
    uint32_t at = *n < want ? (*n)++ : *n - 1;
    while (at > 0 && ad_res_pick_before(q, best[at - 1])) {
        best[at] = best[at - 1];
        at--;
    }
    best[at] = q;
}

/* The candidates of box b: the `want` (at most AD_RES_PICK_MAX) with the smallest keys among its particles
 * of columns [c0, c1) (a rank's; all: 0, nx), into best[0..AD_RES_PICK_MAX) (the rest none); their number
 * returned. */
AD_HD static inline uint32_t ad_reservoir_picks_in(const ad_params *p, const uint32_t *start, const uint32_t *ids, int b,
                                                   uint64_t step, uint32_t want, int c0, int c1, ad_res_pick *best)
{
    for (int k = 0; k < AD_RES_PICK_MAX; k++) {
        best[k].key = UINT64_MAX;
        best[k].id = best[k].slot = UINT32_MAX;
    }
    if (want > AD_RES_PICK_MAX) want = AD_RES_PICK_MAX;
    int lo[3], hi[3];
    ad_reservoir_box_cells_in(p, b, c0, c1, lo, hi);
    uint32_t n = 0;
    for (int cz = lo[2]; cz < hi[2] && lo[0] < hi[0]; cz++)
        for (int cy = lo[1]; cy < hi[1]; cy++) {
            uint32_t row = ad_reservoir_row(p, cy, cz);
            for (uint32_t j = start[row + (uint32_t)lo[0]]; j < start[row + (uint32_t)hi[0]]; j++) {
                ad_res_pick q = {ad_reservoir_key(p, step, ids[j]), ids[j], j};
                ad_res_pick_keep(best, &n, want, q);
            }
        }
    return n;
}

/* Over several processes: marks `doomed` the particles of box b within columns [c0, c1) (a rank's) whose ids
 * are among the chosen[0..k) of every rank's candidates. */
AD_HD static inline void ad_reservoir_doom_in(const ad_params *p, const uint32_t *start, const uint32_t *ids, int b,
                                              int c0, int c1, const ad_res_pick *chosen, uint32_t k,
                                              unsigned char *doomed)
{
    int lo[3], hi[3];
    ad_reservoir_box_cells_in(p, b, c0, c1, lo, hi);
    for (int cz = lo[2]; cz < hi[2] && lo[0] < hi[0]; cz++)
        for (int cy = lo[1]; cy < hi[1]; cy++) {
            uint32_t row = ad_reservoir_row(p, cy, cz);
            for (uint32_t j = start[row + (uint32_t)lo[0]]; j < start[row + (uint32_t)hi[0]]; j++)
                for (uint32_t q = 0; q < k; q++)
                    if (chosen[q].id == ids[j]) doomed[j] = 1;
        }
}

/* The rm (at most AD_RES_PICK_MAX) discs of box b with the smallest keys of the step, through the
 * grid: their slots in slot[], their number returned. */
AD_HD static inline uint32_t ad_reservoir_pick(const ad_params *p, const uint32_t *start, const uint32_t *ids, int b,
                                               uint64_t step, uint32_t rm, uint32_t *slot)
{
    ad_res_pick best[AD_RES_PICK_MAX];
    uint32_t m = ad_reservoir_picks_in(p, start, ids, b, step, rm, 0, p->nx, best);
    for (uint32_t k = 0; k < m; k++) slot[k] = best[k].slot;
    return m;
}

/* What depends on the dimension, written once (reservoir_dim.h): the stream's velocities, a position's
 * box, the stream's number in a box, an addition's spot and velocity, and the pass's step 5 in the band
 * (ad_open_motion); the 2D names are 2D's, the 3D ones end in 3. */
#define AD_DIM 2
#include "reservoir_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "reservoir_dim.h"
#undef AD_DIM

/* Where entering disc k of a step goes, u from (seed, step, k). */
AD_HD static inline ad_state ad_entry_spot(const ad_params *p, ad_entry e, float dt, uint64_t step, uint32_t k)
{
    uint64_t seed = (p->seed ^ 0xE9B5DBA58189DBBCull) + step * 0x3956C25BF348B538ull;
    return ad_entry_place(p, e, dt, ad_rng_uniform(seed, k));
}

#endif
