/* stack_cpu_tile — one block of trial points of the CPU stack, for one instruction set.
 *
 * Included by kernels/stack_cpu.c once per variant, with
 *   TILE_FN    the function's name
 *   TILE_ATTR  its target attribute (empty for the build's own flags)
 *   TILE_VB    bytes per vector: the variant's register width (16, 32, 64)
 *   TILE_NV    vectors per time tile (times per tile TT = TILE_VB / 4 x TILE_NV, a divisor
 *              of STACK_T_TILE, so a tile's reads past nt stay inside stack_cf_need)
 * It defines its vector types VF, VI (float, int32) and VFU (unaligned float) in the
 * function, so each variant has its own.
 *
 * For each tile of TT times, each point j of the block, the rows are summed in their
 * order into TILE_NV accumulators that stay in registers (the reference keeps one
 * accumulator of nt floats in memory and loads and stores it for every row).  The block's
 * points are neighbours in the grid, so for a tile each row's reads for all of them lie in
 * a window of TT + (their delay spread) samples that the first point brings into L1 and
 * the others find there: the CPU form of the CUDA kernel's staged CF window.  The sums
 * are the reference's, in the same order, so the result is the same bit for bit; only
 * rows wholly invalid over the block are skipped (adding +0.0 to a sum that started at
 * +0.0 changes nothing) and valid rows skip the NaN test. */

static TILE_ATTR void TILE_FN(const struct stack_plan *p, struct stack_scratch *w, size_t j0, int jn)
{
    typedef float VF __attribute__((vector_size(TILE_VB)));
    typedef int32_t VI __attribute__((vector_size(TILE_VB)));
    typedef float VFU __attribute__((vector_size(TILE_VB), aligned(4), may_alias));
    typedef uint64_t VU __attribute__((vector_size(TILE_VB)));
    enum { L = TILE_VB / 4, NV = TILE_NV, TT = L * TILE_NV };
    const struct stack_args *a = p->a;
    const int nact = p->nact, nt = a->nt;
    const float *cf = a->cf;
    /* every row valid where read, and N a division by the same count (or none) */
    const int fast = !p->any_mixed && (a->norm == STACK_NORM_NONE || (a->norm == STACK_NORM_COUNT && p->nclean > 0));
    /* the same for the geometric mean: the means where a value could lead get their expf */
    const int fastg = !p->any_mixed && a->norm == STACK_NORM_GEOMETRIC && p->nclean > 0;
    uint32_t *off = w->off;
    /* the block's read offsets, point by point, active rows in order (the delay table is
     * read along j, contiguously) */
    for (int k = 0; k < nact; k++) {
        const uint16_t *d = a->delay + (size_t)p->act_row[k] * a->nj_pad + j0;
        uint32_t base = p->act_off[k];
        for (int jj = 0; jj < jn; jj++)
            off[(size_t)jj * nact + k] = base + d[jj];
    }
    /* per point and lane: the largest value (fast: the largest sum) and, for fastg, the
     * largest mean, whether another came close to it, whether any was a number */
    VF cm[STACK_CPU_JB][NV], cmx[STACK_CPU_JB][NV];
    VI amb[STACK_CPU_JB], seen[STACK_CPU_JB];
    VF accb[STACK_CPU_JB][NV]; /* the sums between row blocks */
    VI cntb[STACK_CPU_JB][NV];
    for (int jj = 0; jj < jn; jj++) {
        amb[jj] = seen[jj] = (VI){0};
        for (int v = 0; v < NV; v++)
            cm[jj][v] = cmx[jj][v] = SPLAT(-INFINITY);
    }
    VI lane;
    for (int l = 0; l < L; l++)
        lane[l] = l;
    for (int t0 = 0; t0 < nt; t0 += TT) {
        const float *cft = cf + t0;
        VI live[NV];
        for (int v = 0; v < NV; v++)
            live[v] = lane + (t0 + L * v) < nt;
        /* with every row valid, two points at a time: their sums are independent, so the
         * adds of one overlap the latency of the other's (each sum is still its rows in
         * order) */
        const int jq = p->any_mixed ? 1 : 2;
        /* rows in blocks of STACK_CPU_RB, each block's CF windows for the points of the
         * block reused from L2 (2048 rows' windows would not fit); the sums carry over
         * from block to block in row order */
        for (int k0 = 0; k0 == 0 || k0 < nact; k0 += STACK_CPU_RB) {
            const int k1 = nact - k0 < STACK_CPU_RB ? nact : k0 + STACK_CPU_RB;
            for (int jb = 0; jb < jn; jb += jq) {
                const int nq = jn - jb < jq ? jn - jb : jq;
                const uint32_t *o = off + (size_t)jb * nact, *o2 = o + nact;
                VF acc2[2][NV];
                VI cnt[NV];
                for (int v = 0; v < NV; v++) {
                    acc2[0][v] = k0 ? accb[jb][v] : SPLAT(0.0f);
                    acc2[1][v] = k0 && nq == 2 ? accb[jb + 1][v] : SPLAT(0.0f);
                    cnt[v] = k0 ? cntb[jb][v] : (VI){0} + p->nclean;
                }
                if (nq == 2) {
                    for (int k = k0; k < k1; k++) {
                        const float *r = cft + o[k], *r2 = cft + o2[k];
#pragma GCC unroll 8
                        for (int v = 0; v < NV; v++) {
                            acc2[0][v] += *(const VFU *)(r + L * v);
                            acc2[1][v] += *(const VFU *)(r2 + L * v);
                        }
                    }
                } else if (!p->any_mixed) {
                    for (int k = k0; k < k1; k++) {
                        const float *r = cft + o[k];
#pragma GCC unroll 8
                        for (int v = 0; v < NV; v++)
                            acc2[0][v] += *(const VFU *)(r + L * v);
                    }
                } else {
                    for (int k = k0; k < k1; k++) {
                        const float *r = cft + o[k];
                        if (p->mixed[k]) {
#pragma GCC unroll 8
                            for (int v = 0; v < NV; v++) {
                                VF x = *(const VFU *)(r + L * v);
                                VI ok = x == x;
                                acc2[0][v] += (VF)((VI)x & ok);
                                cnt[v] -= ok;
                            }
                        } else {
#pragma GCC unroll 8
                            for (int v = 0; v < NV; v++)
                                acc2[0][v] += *(const VFU *)(r + L * v);
                        }
                    }
                }
                if (k1 < nact) {
                    /* more rows to come: the sums wait in L1 */
                    for (int v = 0; v < NV; v++) {
                        for (int q = 0; q < nq; q++)
                            accb[jb + q][v] = acc2[q][v];
                        cntb[jb][v] = cnt[v];
                    }
                    continue;
                }
                for (int q = 0; q < nq; q++) {
                    VF *acc = acc2[q];
                    const int jj = jb + q;
                    /* N(sum), the running maxima over points (per time) and over times (per point) */
                    const int32_t j = (int32_t)(j0 + (size_t)jj);
                    const VI jv = (VI){0} + j;
                    if (fast) {
                        /* the maxima of the sums themselves, divided only where a point takes the
                         * lead: N is the same non-decreasing division for every sum, so a sum
                         * not above the best sum so far is not above its value either (and a
                         * tie goes to the earlier point, which has it) */
                        VI lead = {0};
                        for (int v = 0; v < NV; v++) {
                            acc[v] = SELECT(live[v], acc[v], SPLAT(-INFINITY));
                            lead |= acc[v] > *(VF *)(w->la + t0 + L * v);
                            cm[jj][v] = SELECT(acc[v] > cm[jj][v], acc[v], cm[jj][v]);
                        }
                        VU any = (VU)lead;
                        uint64_t anyl = 0;
                        for (int l = 0; l < TILE_VB / 8; l++)
                            anyl |= any[l];
                        if (!anyl)
                            continue;
                        for (int v = 0; v < NV; v++) {
                            VF *la = (VF *)(w->la + t0 + L * v), *lv = (VF *)(w->lv + t0 + L * v);
                            VI *li = (VI *)(w->li + t0 + L * v);
                            VI up = acc[v] > *la;
                            VF val = a->norm == STACK_NORM_NONE ? acc[v] : acc[v] / SPLAT((float)p->nclean);
                            VI upd = up & ((val > *lv) | ((val == *lv) & (jv < *li)));
                            *lv = SELECT(upd, val, *lv);
                            *li = (*li & ~upd) | (jv & upd);
                            *la = SELECT(up, acc[v], *la);
                        }
                        continue;
                    }
                    if (fastg) {
                        /* expf only where a value could lead: expf is within 1 ulp (glibc's
                         * documented bound), so a mean m < best - (|best| + 1) 2^-20 has a value
                         * at least 7 float ulps below exp(best): strictly below best's value,
                         * whatever the roundings (monotonicity of expf is not assumed).  For the
                         * maximum over times only the largest mean per lane is kept, with a flag
                         * when another mean came within that margin of it (then the point's
                         * maximum is taken from the reference's loop). */
                        VF m[NV];
                        VI nl[NV], any = {0};
                        for (int v = 0; v < NV; v++) {
                            m[v] = SELECT(live[v], acc[v] / SPLAT((float)p->nclean), SPLAT(-INFINITY));
                            VF lm = *(VF *)(w->la + t0 + L * v), cmm = cmx[jj][v];
                            nl[v] = ~(m[v] < lm - (ABS(lm) + 1.0f) * 0x1p-20f) & live[v];
                            any |= nl[v];
                            VI ok = (m[v] == m[v]) & live[v], gt = m[v] > cmm;
                            VF hi = SELECT(gt, m[v], cmm), lo = SELECT(gt, cmm, m[v]);
                            amb[jj] |= ~(lo < hi - (ABS(hi) + 1.0f) * 0x1p-20f) & (lo != hi) & ok;
                            seen[jj] |= ok;
                            cmx[jj][v] = hi;
                        }
                        VU anyu = (VU)any;
                        uint64_t anyl = 0;
                        for (int l = 0; l < TILE_VB / 8; l++)
                            anyl |= anyu[l];
                        if (!anyl)
                            continue;
                        for (int v = 0; v < NV; v++)
                            for (int l = 0; l < L; l++) {
                                if (!nl[v][l])
                                    continue;
                                float e = expf(m[v][l]);
                                int t = t0 + L * v + l;
                                if (e > w->lv[t] || (e == w->lv[t] && j < w->li[t])) {
                                    w->lv[t] = e;
                                    w->li[t] = j;
                                    w->la[t] = m[v][l];
                                }
                            }
                        continue;
                    }
                    for (int v = 0; v < NV; v++) {
                        VF val;
                        if (a->norm == STACK_NORM_NONE)
                            val = acc[v];
                        else {
                            VI has = cnt[v] != 0;
                            VF m = acc[v] / __builtin_convertvector(cnt[v] | ~has, VF);
                            if (a->norm == STACK_NORM_GEOMETRIC) {
                                float e[L];
                                for (int l = 0; l < L; l++)
                                    e[l] = expf(m[l]);
                                memcpy(&m, e, sizeof e);
                            }
                            val = (VF)((VI)m & has);
                        }
                        val = SELECT(live[v], val, SPLAT(-INFINITY));
                        VF *lv = (VF *)(w->lv + t0 + L * v);
                        VI *li = (VI *)(w->li + t0 + L * v);
                        VI up = (val > *lv) | ((val == *lv) & (jv < *li));
                        *lv = SELECT(up, val, *lv);
                        *li = (*li & ~up) | (jv & up);
                        cm[jj][v] = SELECT(val > cm[jj][v], val, cm[jj][v]);
                    }
                }
            }
        }
    }
    for (int jj = 0; jj < jn; jj++) {
        float c = -INFINITY;
        for (int v = 0; v < NV; v++)
            for (int l = 0; l < L; l++)
                c = cm[jj][v][l] > c ? cm[jj][v][l] : c;
        if (fast && a->norm == STACK_NORM_COUNT)
            c = c / (float)p->nclean; /* the largest sum's value is the largest value */
        if (fastg) {
            VU au = (VU)amb[jj], su = (VU)seen[jj];
            uint64_t am = 0, se = 0;
            for (int l = 0; l < TILE_VB / 8; l++)
                am |= au[l], se |= su[l];
            float mx = -INFINITY;
            for (int v = 0; v < NV; v++)
                for (int l = 0; l < L; l++)
                    mx = cmx[jj][v][l] > mx ? cmx[jj][v][l] : mx;
            /* the lanes whose largest mean could give the largest value */
            float thr = mx - (fabsf(mx) + 1.0f) * 0x1p-20f;
            c = -INFINITY;
            for (int v = 0; v < NV && se && !am; v++)
                for (int l = 0; l < L; l++)
                    if (!(cmx[jj][v][l] < thr) || cmx[jj][v][l] == mx) {
                        float e = expf(cmx[jj][v][l]);
                        c = e > c ? e : c;
                    }
            if (am)
                c = 0.0f; /* a near tie: the reference's loop below */
        }
        /* a maximum of zero may be +0 or -0 at different times; the reference keeps the
         * first, which the lanes do not record: take it from the reference's loop */
        a->coh[j0 + (size_t)jj] = c == 0.0f ? stack_cpu_coh_one(a, j0 + (size_t)jj) : c;
    }
}
