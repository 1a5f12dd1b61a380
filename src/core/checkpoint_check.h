/* The checks of a checkpoint's contents (included by checkpoint.c only): every field, after its checksum
 * and before it is used, against the world's definition and the invariants the engine keeps. */
#ifndef AD_CORE_CHECKPOINT_CHECK_H
#define AD_CORE_CHECKPOINT_CHECK_H

#include <float.h>

/* How far outside the domain a disc's centre may be found: a disc pressed into a wall, or past an
 * open side before the end of its step removes it, is within a few diameters of it; no step of the
 * engine puts one further. */
#define CKPT_MARGIN_RADII 8.0
/* The largest speed component: the step keeps the largest speed squared in a float. */
#define CKPT_VMAX (0.5 * 1.8446743e19) /* sqrt(FLT_MAX) / 2 */

static double ckpt_margin(const ad_world_def *d) { return CKPT_MARGIN_RADII * d->radius; }

/* How far the next step of dt carries a disc of velocity (vx, vy) and acceleration (ax, ay). The adaptive
 * step keeps it below a radius (max_move); more than the margin is a state no step led to (a speed the
 * step was not chosen for), and the step would throw the disc far outside the domain. */
static double ckpt_move(double vx, double vy, double ax, double ay, double dt)
{
    return (hypot(vx, vy) + hypot(ax, ay) * dt) * dt;
}

/* Ahead of ad_params_from_def (a new world's checks, which the definition gets next): the values it
 * converts to int or float before it compares them, compared here in double first, so that no
 * conversion overflows (the contact reach in cells, the reservoir's bands in cells, its automatic rate). */
static ad_status precheck_def(const loader *ld)
{
    const ad_world_def *d = &ld->def;
    if (d->radius > 0.0 && d->radius <= FLT_MAX && d->cell_size > 0.0 && !(4.0 * d->radius / d->cell_size <= 1e9))
        return bad(ld, "its world definition has cell_size = %g m, below a billionth of the contact distance of "
                   "radius = %g m", d->cell_size, d->radius);
    const double len[2] = {d->x_max - d->x_min, d->y_max - d->y_min};
    const int open[2] = {d->boundary_x == AD_BOUNDARY_OPEN, d->boundary_y == AD_BOUNDARY_OPEN};
    for (int a = 0; a < 2; a++)
        if (open[a] && d->reservoir != 0.0 && (!(d->reservoir <= len[a]) || !(d->reservoir_inflow <= len[a])))
            return bad(ld, "its world definition has reservoir bands of %g m (inflow %g m), wider than the domain's "
                       "%g m along %s", d->reservoir, d->reservoir_inflow, len[a], a ? "y" : "x");
    double v = fmax(fabs(d->stream_vx), fabs(d->stream_vy)), rate = 4.0 * (v + sqrt(2.0 * d->stream_temperature));
    if (d->reservoir > 0.0 && d->reservoir_rate == 0.0 && !(rate / d->reservoir <= FLT_MAX))
        return bad(ld, "its world definition has an automatic reservoir_rate of %g / s, beyond a float",
                   rate / d->reservoir);
    return ad_ok();
}

/* The statistics: counters a run can reach, sums finite. */
static ad_status check_stats(const loader *ld)
{
    const ad_stats *s = &ld->stats;
    if (s->step > (1ull << 53))
        return bad(ld, "statistics: step = %llu, beyond the 2^53 steps whose time a double still advances",
                   (unsigned long long)s->step);
    const struct {
        const char *name;
        double v;
        int nonneg;
    } f[] = {{"time", s->time, 1},
             {"dt", s->dt, 1},
             {"kinetic_energy", s->kinetic_energy, 1},
             {"potential_energy", s->potential_energy, 1},
             {"momentum_x", s->momentum_x, 0},
             {"momentum_y", s->momentum_y, 0},
             {"contact_virial", s->contact_virial, 0},
             {"max_overlap", s->max_overlap, 1},
             {"body_force_x", s->body_force_x, 0},
             {"body_force_y", s->body_force_y, 0},
             {"body_impulse_x", s->body_impulse_x, 0},
             {"body_impulse_y", s->body_impulse_y, 0},
             {"wall_impulse[0]", s->wall_impulse[0], 0},
             {"wall_impulse[1]", s->wall_impulse[1], 0},
             {"wall_impulse[2]", s->wall_impulse[2], 0},
             {"wall_impulse[3]", s->wall_impulse[3], 0},
             {"kinetic_energy_integral", s->kinetic_energy_integral, 1},
             {"contact_virial_integral", s->contact_virial_integral, 0}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!isfinite(f[k].v) || (f[k].nonneg && f[k].v < 0.0))
            return bad(ld, "statistics: %s = %g is not %s", f[k].name, f[k].v, f[k].nonneg ? "finite and >= 0" : "finite");
    if (!(s->dt > 0.0)) return bad(ld, "statistics: dt = %g s is not positive", s->dt);
    if (s->entries_waiting > AD_WAITING_MAX)
        return bad(ld, "statistics: entries_waiting = %u, above the %d that can wait", s->entries_waiting, AD_WAITING_MAX);
    return ad_ok();
}

/* The next step, of the file's dt, moves no disc and no waiting entry further than the margin. */
static ad_status check_moves(const loader *ld)
{
    const ad_snapshot *s = &ld->snap;
    double m = ckpt_margin(&ld->def), dt = ld->stats.dt;
    for (size_t i = 0; i < s->n && ld->three; i++) {
        ad_state3 q = s->state3[i];
        ad_accel3 a = s->accel3[i];
        double move = (sqrt((double)q.vx * q.vx + (double)q.vy * q.vy + (double)q.vz * q.vz) +
                       sqrt((double)a.ax * a.ax + (double)a.ay * a.ay + (double)a.az * a.az) * dt) * dt;
        if (!(move <= m))
            return bad(ld, "sphere %zu (id %u), of velocity (%g, %g, %g) m/s, would move %g m in the next step of %g s: "
                       "more than the %g m of the domain's margin", i, s->id[i], q.vx, q.vy, q.vz, move, dt, m);
    }
    for (size_t i = 0; i < s->n && !ld->three; i++) {
        ad_state q = s->state[i];
        ad_accel a = s->accel[i];
        double move = ckpt_move(q.vx, q.vy, a.ax, a.ay, dt);
        if (!(move <= m))
            return bad(ld, "particle %zu (id %u), of velocity (%g, %g) m/s and acceleration (%g, %g) m/s^2, would move "
                       "%g m in the next step of %g s: more than the %g m of the domain's margin", i, s->id[i], q.vx,
                       q.vy, a.ax, a.ay, move, dt, m);
    }
    for (uint32_t i = 0; i < s->open.nwaiting && ld->def.dimensions == 3; i++) {
        ad_entry3 e = s->open.waiting3[i];
        double move = sqrt((double)e.vn * e.vn + (double)e.vt[0] * e.vt[0] + (double)e.vt[1] * e.vt[1]) * dt;
        if (!(move <= m))
            return bad(ld, "open sides: waiting entry %u, of speeds %g, %g and %g m/s, would move %g m in the next step "
                       "of %g s: more than the %g m of the domain's margin", i, e.vn, e.vt[0], e.vt[1], move, dt, m);
    }
    for (uint32_t i = 0; i < s->open.nwaiting && ld->def.dimensions != 3; i++) {
        ad_entry e = s->open.waiting[i];
        double move = ckpt_move(e.vn, e.vt, 0.0, 0.0, dt);
        if (!(move <= m))
            return bad(ld, "open sides: waiting entry %u, of speeds %g and %g m/s, would move %g m in the next step of "
                       "%g s: more than the %g m of the domain's margin", i, e.vn, e.vt, move, dt, m);
    }
    return ad_ok();
}

/* The clock against the world's own step: dt no longer than a step of it, time no more than the
 * steps taken times that (a relative allowance for the sum's rounding). */
static ad_status check_clock(const loader *ld, const ad_world *w)
{
    const ad_stats *s = &ld->stats;
    double dt = ad_dt_next(&w->dt_rule, 0.0);
    if (!(s->dt <= dt * (1.0 + 1e-12)))
        return bad(ld, "statistics: dt = %g s, longer than the world's longest step %g s", s->dt, dt);
    double most = (double)s->step * dt * (1.0 + 1e-6);
    if (!(s->time <= most))
        return bad(ld, "statistics: time = %g s after %llu steps of at most %g s", s->time,
                   (unsigned long long)s->step, dt);
    /* the free stream through the open sides in the world's longest step: more discs than the capacity
     * fail that step anyway, after drawing every one of them (up to 10^9 a side: a hang) */
    double inflow = 0.0;
    for (int f = 0; f < 4; f++) inflow += w->params.side_rate[f] * dt;
    if (!(inflow <= (double)ld->def.capacity + AD_WAITING_MAX))
        return bad(ld, "its free stream brings %g discs through the open sides in a step of %g s, more than the "
                   "world's capacity of %zu", inflow, dt, ld->def.capacity);
    return check_moves(ld);
}

/* 3D: every sphere inside the box (with the margin), its spare words zero, moving at a speed a float
 * can square, with finite forces. */
static ad_status check_spheres(const loader *ld)
{
    const ad_world_def *d = &ld->def;
    const ad_snapshot *s = &ld->snap;
    double m = ckpt_margin(d);
    const double lo[3] = {d->x_min - m, d->y_min - m, d->z_min - m}, hi[3] = {d->x_max + m, d->y_max + m, d->z_max + m};
    for (size_t i = 0; i < s->n; i++) {
        ad_state3 q = s->state3[i];
        const float x[3] = {q.x, q.y, q.z}, v[3] = {q.vx, q.vy, q.vz};
        ad_accel3 a = s->accel3[i];
        unsigned id = s->id[i];
        for (int k = 0; k < 3; k++)
            if (!(x[k] >= lo[k] && x[k] <= hi[k]))
                return bad(ld, "sphere %zu (id %u) at %c = %g m, outside the domain [%g, %g] m", i, id, "xyz"[k], x[k],
                           lo[k], hi[k]);
        if (!(fabsf(v[0]) <= CKPT_VMAX && fabsf(v[1]) <= CKPT_VMAX && fabsf(v[2]) <= CKPT_VMAX))
            return bad(ld, "sphere %zu (id %u) has velocity (%g, %g, %g) m/s: not finite, or a component above %g m/s",
                       i, id, v[0], v[1], v[2], CKPT_VMAX);
        if (q.spare_p != 0.0f || q.spare_v != 0.0f)
            return bad(ld, "sphere %zu (id %u) has spare words %g and %g (0)", i, id, q.spare_p, q.spare_v);
        if (!isfinite(a.ax) || !isfinite(a.ay) || !isfinite(a.az))
            return bad(ld, "sphere %zu (id %u) has acceleration (%g, %g, %g) m/s^2: not finite", i, id, a.ax, a.ay,
                       a.az);
        if (!(s->pressure[i] >= 0.0f && s->pressure[i] <= FLT_MAX) || !isfinite(s->virial[i]))
            return bad(ld, "sphere %zu (id %u) has pressure %g N (finite, >= 0) and virial %g N m (finite)", i, id,
                       s->pressure[i], s->virial[i]);
    }
    return ad_ok();
}

/* Every disc inside the domain (with the margin), moving at a speed a float can square, with finite
 * forces. */
static ad_status check_particles(const loader *ld)
{
    const ad_world_def *d = &ld->def;
    const ad_snapshot *s = &ld->snap;
    if (s->n > d->capacity)
        return bad(ld, "it holds %zu particles, more than the world's capacity of %zu", s->n, d->capacity);
    if (ld->three != (d->dimensions == 3))
        return bad(ld, "its world has dimensions = %d and its particles are %s", d->dimensions, ld->three ? "3D" : "2D");
    if (ld->three) return check_spheres(ld);
    double m = ckpt_margin(d), x0 = d->x_min - m, x1 = d->x_max + m, y0 = d->y_min - m, y1 = d->y_max + m;
    for (size_t i = 0; i < s->n; i++) {
        ad_state q = s->state[i];
        unsigned id = s->id[i];
        if (!(q.x >= x0 && q.x <= x1))
            return bad(ld, "particle %zu (id %u) at x = %g m, outside the domain [%g, %g] m", i, id, q.x, x0, x1);
        if (!(q.y >= y0 && q.y <= y1))
            return bad(ld, "particle %zu (id %u) at y = %g m, outside the domain [%g, %g] m", i, id, q.y, y0, y1);
        if (!(fabsf(q.vx) <= CKPT_VMAX && fabsf(q.vy) <= CKPT_VMAX))
            return bad(ld, "particle %zu (id %u) has velocity (%g, %g) m/s: not finite, or a component above %g m/s",
                       i, id, q.vx, q.vy, CKPT_VMAX);
        ad_accel a = s->accel[i];
        if (!isfinite(a.ax) || !isfinite(a.ay))
            return bad(ld, "particle %zu (id %u) has acceleration (%g, %g) m/s^2: not finite", i, id, a.ax, a.ay);
        if (!(s->pressure[i] >= 0.0f && s->pressure[i] <= FLT_MAX) || !isfinite(s->virial[i]))
            return bad(ld, "particle %zu (id %u) has pressure %g N (finite, >= 0) and virial %g N m (finite)", i, id,
                       s->pressure[i], s->virial[i]);
    }
    return ad_ok();
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The discs' ids are unique; without open sides 0 .. n-1, with them below the id counter (unless the
 * ids handed out, every disc now there, left or removed, may have wrapped past 2^32: ad_open_state). */
static ad_status check_ids(const loader *ld, int open)
{
    const ad_snapshot *snap = &ld->snap;
    size_t n = snap->n;
    uint64_t gone = ld->stats.left + ld->stats.reservoir_removed;
    int wrapped = gone < ld->stats.left || gone + n < gone || gone + n >= (1ull << 32);
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory checking the ids of %s", ld->path);
    memcpy(v, snap->id, n * sizeof *v);
    qsort(v, n, sizeof *v, u32_cmp);
    ad_status st = ad_ok();
    for (size_t i = 0; i < n && !st.code; i++) {
        if (!open && v[i] >= n)
            st = bad(ld, "particle id %u is out of range: the ids of a world without open sides are 0 to %zu", v[i],
                     n ? n - 1 : 0);
        else if (open && !wrapped && v[i] >= snap->open.next_id)
            st = bad(ld, "particle id %u is not below the id counter next_id = %u", v[i], snap->open.next_id);
        else if (i > 0 && v[i] == v[i - 1])
            st = bad(ld, "particle id %u appears twice", v[i]);
    }
    free(v);
    return st;
}

/* A 3D world's entering spheres waiting (WAI3): an open face, a point on it, speeds. */
static ad_status check_waiting3(const loader *ld)
{
    const ad_open_state *o = &ld->snap.open;
    const ad_params *p = &ld->params;
    for (uint32_t i = 0; i < o->nwaiting; i++) {
        ad_entry3 e = o->waiting3[i];
        if (e.side > 3 || !p->open[e.side])
            return bad(ld, "open sides: waiting entry %u enters through face %u, not an open face", i, e.side);
        ad_face3 f = ad_face_of3(p, (int)e.side);
        for (int k = 0; k < 2; k++)
            if (!(e.along[k] >= f.lo[k] && e.along[k] <= f.hi[k]))
                return bad(ld, "open sides: waiting entry %u enters at %g m along axis %d, outside its face's [%g, %g] m",
                           i, e.along[k], f.t[k], f.lo[k], f.hi[k]);
        if (!(e.vn >= 0.0f && e.vn <= CKPT_VMAX && fabsf(e.vt[0]) <= CKPT_VMAX && fabsf(e.vt[1]) <= CKPT_VMAX))
            return bad(ld, "open sides: waiting entry %u has speeds %g (inward, >= 0), %g and %g m/s: not finite or "
                       "above %g m/s", i, e.vn, e.vt[0], e.vt[1], CKPT_VMAX);
    }
    return ad_ok();
}

/* The open sides: entries owed, entering discs waiting (an open side, a point along it, a speed), the
 * reservoir's boxes as the definition lays them out, its controllers finite. */
static ad_status check_open(const loader *ld)
{
    const ad_open_state *o = &ld->snap.open;
    const ad_params *p = &ld->params;
    for (int k = 0; k < 4; k++)
        if (!(o->owed[k] >= 0.0 && o->owed[k] < 1.0))
            return bad(ld, "open sides: the entries owed at side %d (%g) are not in [0, 1)", k, o->owed[k]);
    if (o->res_boxes != (uint32_t)p->res_boxes)
        return bad(ld, "open sides: it holds %u reservoir boxes; its world definition lays out %d", o->res_boxes,
                   p->res_boxes);
    for (uint32_t b = 0; b < 2 * o->res_boxes; b++)
        if (!isfinite(o->res_state[b]))
            return bad(ld, "open sides: reservoir controller %u is %g, not finite", b, o->res_state[b]);
    if (ld->def.dimensions == 3) return check_waiting3(ld);
    for (uint32_t i = 0; i < o->nwaiting; i++) {
        ad_entry e = o->waiting[i];
        if (e.side > 3 || !p->open[e.side])
            return bad(ld, "open sides: waiting entry %u enters through side %u, not an open side", i, e.side);
        ad_side s = ad_side_of(p, (int)e.side);
        if (!(e.along >= s.lo && e.along <= s.hi))
            return bad(ld, "open sides: waiting entry %u enters at %g m, outside its side's [%g, %g] m", i, e.along,
                       s.lo, s.hi);
        if (!(e.vn >= 0.0f && e.vn <= CKPT_VMAX && fabsf(e.vt) <= CKPT_VMAX))
            return bad(ld, "open sides: waiting entry %u has speeds %g (inward, >= 0) and %g m/s: not finite or above "
                       "%g m/s", i, e.vn, e.vt, CKPT_VMAX);
    }
    return ad_ok();
}

/* Along one axis: the grid's extent and the cells of it the domain spans, which int cell indices must
 * hold (ad_field_cell) from wherever a disc may be. */
static ad_status check_field_axis(const loader *ld, const char *axis, double lo, double hi, int n, double dlo,
                                  double dhi)
{
    if (!isfinite(lo) || !isfinite(hi) || !(hi > lo))
        return bad(ld, "its field grid's extent along %s [%g, %g] m is empty or not finite", axis, lo, hi);
    double span = fmax(fabs(dhi - lo), fabs(dlo - lo)) * n / (hi - lo);
    if (!(span < 1073741824.0))
        return bad(ld, "its field grid's cells along %s, %g m, are so fine that the domain [%g, %g] m spans %g of "
                   "them (at most 2^30)", axis, (hi - lo) / n, dlo, dhi, span);
    return ad_ok();
}

/* The field grid: its extent, interval and sample counts, finite sums; the probe's rectangle. */
static ad_status check_fields(const loader *ld)
{
    const ad_field_def *f = &ld->fdef;
    const ad_world_def *d = &ld->def;
    double m = 2.0 * ckpt_margin(d); /* a disc inside the margin, moved by at most the margin in a step */
    AD_TRY(check_field_axis(ld, "x", f->x0, f->x1, f->nx, d->x_min - m, d->x_max + m));
    AD_TRY(check_field_axis(ld, "y", f->y0, f->y1, f->ny, d->y_min - m, d->y_max + m));
    int three = d->dimensions == 3;
    if (three) AD_TRY(check_field_axis(ld, "z", f->z0, f->z1, f->nz, d->z_min - m, d->z_max + m));
    if (f->interval < 1) return bad(ld, "its field grid's interval is 0 steps (at least 1)");
    uint64_t steps = ld->stats.step;
    if (ld->fsamples > steps || ld->psamples > steps)
        return bad(ld, "its fields hold %llu samples and its probe %llu, more than the %llu steps taken",
                   (unsigned long long)ld->fsamples, (unsigned long long)ld->psamples, (unsigned long long)steps);
    size_t vals = ad_field_sum_count(f, d->dimensions), per = AD_FS_COUNT_DIM(d->dimensions);
    for (size_t k = 0; k < vals; k++)
        if (!isfinite(ld->fsums[k]))
            return bad(ld, "field sum %zu (cell %zu) is %g, not finite", k, k / per, ld->fsums[k]);
    const ad_probe_def *q = &ld->pdef;
    if (ld->fprobe && (!isfinite(q->x0) || !isfinite(q->x1) || !isfinite(q->y0) || !isfinite(q->y1) ||
                       !(q->x1 > q->x0) || !(q->y1 > q->y0) || !isfinite(hypot(q->dir_x, q->dir_y))))
        return bad(ld, "its probe [%g, %g] x [%g, %g] m along (%g, %g) is empty or not finite", q->x0, q->x1, q->y0,
                   q->y1, q->dir_x, q->dir_y);
    if (ld->fprobe && three && (!isfinite(q->z0) || !isfinite(q->z1) || !(q->z1 > q->z0)))
        return bad(ld, "its probe along z [%g, %g] m is empty or not finite", q->z0, q->z1);
    return ad_ok();
}

/* The segments: finite, of some length, within the domain grown by its own size each way. */
static ad_status check_segments(const loader *ld)
{
    const ad_world_def *d = &ld->def;
    double lx = d->x_max - d->x_min, ly = d->y_max - d->y_min;
    double x0 = d->x_min - lx, x1 = d->x_max + lx, y0 = d->y_min - ly, y1 = d->y_max + ly;
    for (uint64_t i = 0; i < ld->nseg; i++) {
        ad_segment s = ld->segs[i];
        int in = s.x0 >= x0 && s.x0 <= x1 && s.x1 >= x0 && s.x1 <= x1 && s.y0 >= y0 && s.y0 <= y1 && s.y1 >= y0 &&
                 s.y1 <= y1;
        if (!in || (s.x0 == s.x1 && s.y0 == s.y1))
            return bad(ld, "segment %llu from (%g, %g) to (%g, %g) m is %s", (unsigned long long)i, s.x0, s.y0, s.x1,
                       s.y1, in ? "of zero length" : "not finite or far outside the domain");
    }
    return ad_ok();
}

static ad_status check_all(loader *ld)
{
    unsigned need[] = {SEC_DEF, SEC_STAT, SEC_PART};
    const char *name[] = {"definition", "statistics", "particle"};
    for (int k = 0; k < 3; k++)
        if (!(ld->seen & need[k])) return bad(ld, "it lacks its %s section", name[k]);
    int open = ld->params.open_x || ld->params.open_y;
    if (open != !!(ld->seen & SEC_OPEN))
        return bad(ld, "its world %s open sides and the file %s their section", open ? "has" : "has no",
                   ld->seen & SEC_OPEN ? "holds" : "lacks");
    if (!open) ld->snap.open.next_id = (uint32_t)ld->snap.n; /* ids 0 .. n-1 */
    int three = ld->def.dimensions == 3;
    if (!!(ld->seen & SEC_WAI3) != (open && three))
        return bad(ld, "its %s world %s 3D waiting entries (section WAI3)", three ? "3D" : "2D",
                   ld->seen & SEC_WAI3 ? "holds" : "with open sides lacks");
    if (open && three) { /* a 3D world's OPEN section holds no entries: they are WAI3's */
        if (ld->snap.open.nwaiting)
            return bad(ld, "its 3D world's open sides' section holds %u 2D entries", ld->snap.open.nwaiting);
        ld->snap.open.waiting3 = ld->wait3;
        ld->snap.open.nwaiting = ld->nwait3;
    }
    AD_TRY(check_stats(ld));
    AD_TRY(check_particles(ld));
    AD_TRY(check_ids(ld, open));
    if (open) AD_TRY(check_open(ld));
    if ((ld->seen & SEC_FLDS) && ld->fields3 != three)
        return bad(ld, "its %s world holds %s fields (section %s)", three ? "3D" : "2D", ld->fields3 ? "3D" : "2D",
                   ld->fields3 ? "FLD3" : "FLDS");
    if (ld->seen & SEC_FLDS) AD_TRY(check_fields(ld));
    if ((ld->seen & SEC_TRIS) && ld->def.dimensions != 3) return bad(ld, "its 2D world holds triangles");
    if ((ld->seen & SEC_SEGS) && ld->nseg && ld->def.dimensions == 3) return bad(ld, "its 3D world holds segments");
    return check_segments(ld);
}

#endif
