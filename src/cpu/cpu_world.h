/* The CPU backend's world and what its files share (cpu_backend.c, step_cpu.c, readback_cpu.c, ...). */
#ifndef AD_CPU_WORLD_H
#define AD_CPU_WORLD_H

#include "../core/world_internal.h"
#include "bvh_cpu.h"
#include "contact_free_cpu.h"
#include "grid_cpu.h"
#include "integrate8_cpu.h"
#include "verlet_drift_cpu.h"

/* The team a step runs on where the world's threads were left to the library (thread_team_cpu.c). */
typedef struct ad_cpu_team {
    int adapt;        /* the team follows what the steps take (threads left to the library) */
    int max;          /* the most threads: the world's */
    int home;         /* the team the run keeps */
    int probing;      /* this window tries another team (cpu_world.threads) */
    int dir;          /* the next probe: -1 half the home team, +1 twice it */
    unsigned windows; /* home windows since the last probe */
    unsigned every;   /* home windows between probes */
    double seconds, work; /* the current window: its seconds and disc-steps */
    double rate_home; /* disc-steps a second of the last home window */
} ad_cpu_team;

typedef struct cpu_world {
    int threads; /* the threads the next step runs on (at most team.max) */
    ad_cpu_team team;
    int avx2; /* the CPU has AVX2 and FMA: the interact pass takes its AVX2 build (interact_avx2.c) */
    size_t cap, ncell, nblocks;
    ad_state *state[2]; /* hot state, double-buffered: [cur] is current */
    uint32_t *id, *id_tmp; /* ids of the current order; scratch for the reorder */
    uint32_t *touch, *touch_tmp; /* the contact states (panel.h), moved with the ids where surfaces are sampled */
    uint32_t *strays;      /* the reorder's lists of the discs bound for other threads' cells (grid_cpu.c) */
    size_t strays_cap;
    int cur;
    uint32_t *cell_of, *start;
    uint8_t *count; /* the cell counters, 8 bits (grid_cpu.h) */
    ad_cpu_xy xy; /* the slots' positions in SoA, for the AVX2 prefilters (candidate_screen_cpu.h) */
    /* no three consecutive cells hold more than 8 discs (the last scan's max_run3), so no row
     * of a disc's neighbour cells does: the contact-free test skips its row-length checks
     * (contact_free_cpu.h) */
    int rows_fit8;
    /* The next pass may run the prefilters (the candidate screen and the contact-free test):
     * xy is current, the states are finite with speeds below 1e15, cells below 1e17 m (set
     * after every step by cpu_one_step, cleared where discs are added or imported) */
    int prefilter_valid;
    /* The contact-free expiries (contact_free_cpu.h): disc i is contact-free while free_clock
     * is below free_until[i]; in slot order, moved by the reorder; NULL where not kept (no
     * AVX2, RK4, the BVH, an inlet/outlet axis). */
    float *free_until, *free_until_tmp;
    double free_clock;   /* grows by twice the largest move of every step (ad_cpu_free_clock_step) */
    float free_clock_v2; /* the largest speed squared of the last step */
    double free_clock_ulp; /* an ulp of the grid's largest coordinate (coord_ulp) */
    ad_cpu_free_clock free_clock_f; /* the clock in floats, as the next pass takes it */
    uint32_t *blk_outside; /* per block: discs binned outside the domain by the interact pass */
    struct {
        _Alignas(64) uint64_t word;
    } * ranges; /* the pass's block ranges, one a thread (claim_block in step_cpu.c) */
    /* The fused bin's leavers (fused_bin_cpu.h): the pass's discs bound for other blocks' cells,
     * listed per block (leavers + b AD_BLOCK, blk_leavers[b] of them) */
    uint32_t *leavers, *blk_leavers;
    uint32_t *blk_first_cell; /* per block: the cell of its first slot before the pass (ad_cpu_leavers) */
    int leavers_valid;        /* the leavers account for every disc of the last pass (ad_cpu_leavers) */
    int bin_current;          /* cell_of and count hold the bin of the current state (step 1 done by the pass,
                                 or by Verlet's drift) */
    uint64_t drift_outside;   /* Verlet: the discs its drift binned outside the domain */
    int pass_kept;            /* the last pass ran the prefilters and kept the expiries (Verlet's clock) */
    size_t n;              /* slots in use: the discs, and those removed in the last pass until the next sort */
    /* open sides and the reservoir (open_cpu.c) */
    ad_open_state open;
    ad_entry *entries;     /* a step's entering discs: the waiting ones, then the new ones */
    ad_state *spots;       /* where the step's new discs would go: the entries', then the reservoir's */
    unsigned char *room;   /* per spot: 1 where it had room */
    double *res_debt;      /* per reservoir box: its controller's debt (ad_reservoir_decide) */
    uint32_t *res_add;     /* per box: discs to add after the pass */
    uint8_t *res_doomed;   /* per slot: the pass removes it (the step's plan) */
    uint32_t *res_doomed_list; /* the slots marked, to clear after the step */
    size_t res_ndoomed, res_doomed_cap;
    int *spot_box;         /* per spot: the reservoir box it would join, -1 for an entering disc */
    uint32_t *spot_head;   /* the spots judged for room in buckets (room.h): AD_SPOT_BUCKETS first spots */
    uint32_t *spot_next;   /* and per spot the next of its bucket (AD_ROOM_MAX) */
    size_t spots_cap;
    float *pressure, *virial;
    ad_accel *acc[2];           /* Verlet: acceleration of the last force evaluation */
    ad_accel *accel;            /* other integrators: the same, for observers only */
    int verlet_primed;          /* Verlet: acc holds the forces of the current state (verlet_prime, step_cpu.c) */
    int dt_stale;               /* particles were added: size the next step from their speeds */
    ad_state *rk[3];            /* RK4: stage in, stage out, weighted sum */
    ad_step_sums *blocks;
    int use_bvh;                /* broad_phase = bvh: the tree replaces the grid (count, start unused) */
    ad_cpu_bvh bvh;
    ad_bvh tree;                /* over state[cur] of the last build */
} cpu_world;

/* What a run of the interact pass does: a step, or Verlet's priming (the forces of the
 * current state, no motion: verlet_prime in step_cpu.c). */
typedef enum { INTERACT_STEP, INTERACT_PRIME } interact_kind;

/* The backend's entries beyond creation (the table is in cpu_backend.c): the step (step_cpu.c),
 * reading back and snapshots (readback_cpu.c). */
ad_status ad_cpu_step(ad_world *w, uint64_t nsteps);
ad_status ad_cpu_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count);
ad_status ad_cpu_export(const ad_world *w, ad_snapshot *s);
ad_status ad_cpu_import(ad_world *w, const ad_snapshot *s);
/* The accelerations observers read: Verlet's current ones, else the other integrators' copy (readback_cpu.c). */
const ad_accel *ad_cpu_observed_accel(const cpu_world *c);
/* Adds the current discs to the field sums, serially in slot order (fields_cpu.c). */
void ad_cpu_sample_fields(ad_world *w, const cpu_world *c);
/* The contact-free test's clock (contact_free_clock_cpu.c): at zero for a new world, and advanced after a step. */
void ad_cpu_free_clock_init(ad_world *w, cpu_world *c);
void ad_cpu_free_clock_step(const ad_world *w, cpu_world *c, size_t n, int kept, double dt, float v2);

/* The team of the steps (thread_team_cpu.c): set up at creation; after each step, with the step's
 * wall time and discs, it may change cpu_world.threads for the next. */
void ad_cpu_team_init(cpu_world *c, const ad_world_def *d);
void ad_cpu_team_after_step(cpu_world *c, double seconds, size_t discs);

/* Open sides and the reservoir on the CPU (open_cpu.c). */
ad_status ad_cpu_open_create(ad_world *w, cpu_world *c);
void ad_cpu_open_destroy(cpu_world *c);
/* Before the pass, on the grid of the step: each reservoir box's count, the discs its controller
 * removes in the pass (marked in res_doomed) and adds after it. */
void ad_cpu_reservoir_plan(const ad_world *w, cpu_world *c, float dt);
/* After the pass: the free stream's entering discs and the reservoir's additions, appended at slot
 * c->n (binned where the pass binned). *vmax2 receives their largest speed squared. */
ad_status ad_cpu_open_enter(ad_world *w, cpu_world *c, float dt, float *vmax2);
/* The id of a new disc (ad_open_state). */
uint32_t ad_cpu_new_id(cpu_world *c);
/* After a sort that put the removed discs in slots [alive, n): the world ends at alive. */
void ad_cpu_open_compact(ad_world *w, cpu_world *c, size_t alive);

/* Step 4 for one block of AD_BLOCK slots (interact_cpu.h), portable and AVX2 builds. */
void ad_cpu_interact_block_portable(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt, ad_integrator integ,
                                    interact_kind kind, uint64_t step, int obs);
/* Verlet's drift of discs [a, b), binned (verlet_drift_cpu.h), portable and AVX2 builds. */
void ad_cpu_drift_range_portable(const ad_params *P, ad_state *s, const ad_accel *acc, size_t a, size_t b, float dt,
                                 uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d);
#ifdef AD_CPU_X86
void ad_cpu_drift_range_avx2(const ad_params *P, ad_state *s, const ad_accel *acc, size_t a, size_t b, float dt,
                             uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d);
void ad_cpu_interact_block_avx2(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt, ad_integrator integ,
                                interact_kind kind, uint64_t step, int obs);
/* The AVX2 build's pieces, out of line for tests/test_isa.c and tests/test_pairs.h. */
int ad_cpu_integrate8_avx2_entry(const ad_params *P, const ad_state *in, ad_state *out, const float *AX,
                                 const float *AY, float dt, int symplectic, uint32_t *cell_of, ad_cpu_fused_bin *bins,
                                 ad_motion8 *m8, ad_step_sums *sums, uint32_t *outside);
void ad_cpu_gather_all_avx2_entry(const ad_params *p, const ad_seg_grid *g, const uint32_t *start, const ad_state *s,
                                  const ad_cpu_xy *xy,
                                  uint32_t i, ad_state me, int fast, ad_accum *a);
unsigned ad_cpu_contact_free8_avx2_entry(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                         const ad_cpu_xy *xy, size_t s, int rows_fit8, float *free_until,
                                         const ad_cpu_free_clock *fc);
#endif

#endif
