/* Checkpoints of the body's panels (included by checkpoint.c after its loader): the panels' sums and
 * whether they are sampled (section PANL), and the discs' contact states (TUCH, panel.h), both written only
 * where the world samples its surfaces (ad_params.surfaces), so a checkpoint without them, an older one
 * included, loads with zeros and sampling off.
 *
 *   PANL  u64 npanels, u32 sampling, u32 zero, ad_panel_sums[npanels]
 *   TUCH  u64 n, u32 touch[n]   (the particles' order, as PART / PAR3) */

static void put_panels(writer *wr, const ad_world *w, const ad_snapshot *snap)
{
    if (!w->params.surfaces) return;
    uint64_t n = w->panels.count, m = snap->n;
    uint32_t on = 1, zero = 0;
    section(wr, "PANL", 16 + n * sizeof(ad_panel_sums));
    put(wr, &n, 8);
    put(wr, &on, 4);
    put(wr, &zero, 4);
    put(wr, w->panels.sums, n * sizeof(ad_panel_sums));
    section(wr, "TUCH", 8 + 4 * m);
    put(wr, &m, 8);
    put(wr, snap->touch, 4 * m);
}

static ad_status read_panl(loader *ld, uint64_t len)
{
    uint64_t n;
    uint32_t on, zero;
    AD_TRY(get(ld, &n, 8, "the panels' section"));
    AD_TRY(get(ld, &on, 4, "the panels' section"));
    AD_TRY(get(ld, &zero, 4, "the panels' section"));
    if (on != 1 || zero != 0) return bad(ld, "its panels' section has the flags %u, %u (1, 0)", on, zero);
    if (n > ((uint64_t)1 << 30) || len != 16 + n * sizeof(ad_panel_sums))
        return bad(ld, "its panels' section of %llu bytes does not hold the sums of %llu panels",
                   (unsigned long long)len, (unsigned long long)n);
    ld->npanel = n;
    ld->panels = malloc(n * sizeof *ld->panels + 1);
    if (!ld->panels) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading the panels of %s", ld->path);
    AD_TRY(get(ld, ld->panels, n * sizeof *ld->panels, "the panels' sums"));
    for (uint64_t k = 0; k < n; k++) {
        const ad_panel_sums *p = &ld->panels[k];
        if (!isfinite(p->impulse[0]) || !isfinite(p->impulse[1]) || !isfinite(p->impulse[2]) || !isfinite(p->energy))
            return bad(ld, "panel %llu has a non-finite impulse or energy", (unsigned long long)k);
    }
    return ad_ok();
}

static ad_status read_tuch(loader *ld, uint64_t len)
{
    uint64_t n;
    AD_TRY(get(ld, &n, 8, "the contact states"));
    if (n > ((uint64_t)1 << 32) || len != 8 + 4 * n)
        return bad(ld, "its contact states' section of %llu bytes does not hold %llu states", (unsigned long long)len,
                   (unsigned long long)n);
    ld->ntouch = n;
    ld->snap.touch = malloc(4 * n + 1);
    if (!ld->snap.touch) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading the contact states of %s", ld->path);
    return get(ld, ld->snap.touch, 4 * n, "the contact states");
}

/* The sections' agreement with the rest: both or neither, a state per particle, a sum per panel, every
 * state's panel among them. */
static ad_status check_panels(const loader *ld)
{
    int panl = !!(ld->seen & SEC_PANL), tuch = !!(ld->seen & SEC_TUCH);
    if (panl != tuch) return bad(ld, "it holds %s section without %s", panl ? "a PANL" : "a TUCH", panl ? "TUCH" : "PANL");
    if (!panl) return ad_ok();
    uint64_t body = ld->def.dimensions == 3 ? ld->ntri : ld->nseg;
    if (ld->npanel != body)
        return bad(ld, "it holds the sums of %llu panels, its body %llu", (unsigned long long)ld->npanel,
                   (unsigned long long)body);
    if (ld->ntouch != ld->snap.n)
        return bad(ld, "it holds %llu contact states for %zu particles", (unsigned long long)ld->ntouch, ld->snap.n);
    for (uint64_t k = 0; k < ld->ntouch; k++) {
        int p = ad_touch_panel(ld->snap.touch[k]);
        if (p >= (int64_t)body || (ld->snap.touch[k] >> 31))
            return bad(ld, "particle %llu has the contact state 0x%08x: a panel or wall that is not there",
                       (unsigned long long)k, ld->snap.touch[k]);
    }
    return ad_ok();
}

/* The panels into the new world: sampling on and the sums where the file holds them. */
static void build_panels(const loader *ld, ad_world *w)
{
    if (!(ld->seen & SEC_PANL)) return;
    w->params.surfaces = 1;
    memcpy(w->panels.sums, ld->panels, ld->npanel * sizeof *ld->panels);
}
