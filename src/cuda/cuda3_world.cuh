/* The CUDA backend's 3D world (a world's device buffers and stream, behind ad_world.impl) and what its two
 * files share: cuda3.cu (creation, spheres and triangles in, the step and its graphs) and
 * cuda3_readback.cu (the statistics both ways, read-back, checkpoints, the field and panel sums). */
#ifndef AD_CUDA_CUDA3_WORLD_CUH
#define AD_CUDA_CUDA3_WORLD_CUH

#include "cuda_world.cuh"

struct cuda3_world {
    size_t cap, n, ncell;
    unsigned count_lg; /* the cell counters' width: 32 >> count_lg bits (counts.cuh) */
    cudaStream_t stream;
    ad_state3 *state, *sorted; /* the world's state between steps; the step's in cell order */
    unsigned *id, *id_sorted;
    ad_accel3 *acc, *acc_sorted;
    float *pressure, *virial;
    unsigned *cell_of, *rank, *members, *perm; /* a sphere's cell, its rank in it; the stable order's */
    unsigned *count, *start, *tile_sum;        /* the cell counters, their scan (ad_start_slots), its scratch */
    ad_state3 *rk[3]; /* RK4: two stage buffers and the weighted sum */
    ad_step_sums *blocks, *blocks2;
    ad_ctrl *ctrl, *ctrl_host;
    ad_tri *tris;
    ad_dev_tree<ad_bvh_box3, ad_bvh3> tree; /* the triangle tree's arrays */
    ad_tri_tree gdev;                       /* what the kernels walk */
    cudaEvent_t batch[2];
    cudaGraphExec_t graph[2]; /* the step, [1] observing (kernels3.cuh: OBS) */
    int graph_ok[2], primed, dt_stale;
    double *field_sums; /* the field sums on the device (fields3.cuh), ad_field_sum_count of them */
    size_t field_vals;
    int sums_on_host;   /* the host's copy of field_sums is current: no step since the last copy either way */
    /* open faces: the count on the device (c->n unused), the entries' buffers (open3.cuh) */
    int open;
    ad_entry3 *waiting, *waiting_next; /* AD_WAITING_MAX each */
    ad_state3 *spots;                  /* AD_ROOM_MAX */
    unsigned char *spot_gas;           /* AD_ROOM_MAX: a spot has room in the gas (open3.cuh) */
    unsigned *vmax2_new;
    /* the reservoir (enter.cuh): per box the controller's debt and integral, the additions asked and
     * their scan (its scratch), per slot the plan's marks */
    double *res_state;
    unsigned *res_add, *res_add_start;
    void *res_scan_temp;
    size_t res_scan_bytes;
    unsigned char *doomed;
    /* sampled surfaces: the contact states ([0] with state, [1] with sorted) and the panels' sums */
    ad_dev_panels panels;
};

static inline cuda3_world *C3(const ad_world *w) { return (cuda3_world *)w->impl; }
static inline unsigned grid3_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* The size per-sphere kernels are launched for: the count, or with open faces the capacity; and the
 * count as the kernels take it (with open faces, read on the device). */
static inline unsigned launch_n(const cuda3_world *c) { return (unsigned)(c->open ? c->cap : c->n); }
static inline ad_n count_of(const cuda3_world *c, unsigned n) { return ad_n{n, c->open ? &c->ctrl->n : NULL}; }

/* cuda3.cu: the step's graphs forgotten (the world changed) */
void ad_cuda3_forget_graph(cuda3_world *c);

/* cuda3_readback.cu */
cudaError_t ad_cuda3_pull_ctrl(const cuda3_world *c);
ad_status ad_cuda3_push_stats(ad_world *w);
ad_status ad_cuda3_pull_stats(ad_world *w);
ad_status ad_cuda3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count);
ad_status ad_cuda3_export(const ad_world *w, ad_snapshot *s);
ad_status ad_cuda3_import(ad_world *w, const ad_snapshot *s);
ad_status ad_cuda3_fields_to_device(ad_world *w);
ad_status ad_cuda3_fields_to_host(ad_world *w);
ad_status ad_cuda3_panels_to_host(ad_world *w);
ad_status ad_cuda3_panels_reset(ad_world *w);

#endif
