/* io/picture: what a reader needs is on the picture.  Every check reads the PNG back
 * (cairo's PNG reader) and looks at pixels: tick labels inked where the renderer says,
 * with the size cairo's own text extents give for that text, at the tick's position;
 * the rest of the axis margins blank; the colour bar from red to blue; the depth gain
 * and AGC raising a weak deep reflector's contrast; no blocky steps when enlarged. */
#include <cairo.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "io/picture.h"
#include "tests/support.h"

struct rd {
    const unsigned char *b;
    size_t len, off;
};

static cairo_status_t rd_read(void *c, unsigned char *data, unsigned int len)
{
    struct rd *r = c;
    if (r->off + len > r->len)
        return CAIRO_STATUS_READ_ERROR;
    memcpy(data, r->b + r->off, len);
    r->off += len;
    return CAIRO_STATUS_SUCCESS;
}

/* The PNG in memory as a cairo image surface (RGB24 / ARGB32, 0xAARRGGBB words). */
static cairo_surface_t *decode(const unsigned char *png, size_t len)
{
    struct rd r = {png, len, 0};
    cairo_surface_t *s = cairo_image_surface_create_from_png_stream(rd_read, &r);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "PNG does not decode");
    cairo_surface_flush(s);
    return s;
}

static uint32_t px(cairo_surface_t *s, int x, int y)
{
    const unsigned char *d = cairo_image_surface_get_data(s);
    return ((const uint32_t *)(d + (size_t)y * cairo_image_surface_get_stride(s)))[x] & 0xffffff;
}

static int chan(uint32_t c, int k) { return (int)(c >> (16 - 8 * k)) & 255; }

/* A layered test volume: flat events at depth cells Z1 (amplitude A1) and Z2 (A2),
 * each a -0.5, 1, -0.5 wavelet in depth, plus a little deterministic noise. */
static float *layers(const int n[3], int z1, double a1, int z2, double a2, double noise)
{
    size_t nxy = (size_t)n[0] * n[1];
    float *v = calloc(nxy * n[2], sizeof *v);
    unsigned s = 12345;
    for (size_t i = 0; i < nxy * n[2]; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (float)(noise * (((s >> 16) & 0x7fff) / 16384.0 - 1.0));
    }
    const int zs[2] = {z1, z2};
    const double as[2] = {a1, a2};
    for (int r = 0; r < 2; r++)
        for (int dz = -1; dz <= 1; dz++)
            for (size_t i = 0; i < nxy; i++)
                v[(size_t)(zs[r] + dz) * nxy + i] += (float)(as[r] * (dz == 0 ? 1 : -0.5));
    return v;
}

static const struct picture_meta META = {{60, 9, 40}, {10, 10, 5}, {100, 0, 0}, "test", 7, NULL,
                                         1767225600.0, 1};

static int inside_text(const struct picture_layout *L, int x, int y, double pad)
{
    for (int i = 0; i < L->ntext; i++) {
        const struct picture_text *t = &L->text[i];
        if (x >= t->x - pad && x <= t->x + t->w + pad && y >= t->y - pad && y <= t->y + t->h + pad)
            return 1;
    }
    return 0;
}

Test(picture, axis_labels_inked_at_their_ticks_with_cairos_extents)
{
    float *v = layers(META.n, 10, 1.0, 30, 0.5, 0.01);
    struct picture *p;
    cr_assert_eq(picture_prepare(&p, v, &META, NULL), 0);
    unsigned char *png;
    size_t len;
    struct picture_layout L;
    cr_assert_eq(picture_render_png(p, 'y', -1, &png, &len, &L), 0);
    cairo_surface_t *s = decode(png, len);
    cr_assert_eq(cairo_image_surface_get_width(s), L.width);
    cr_assert_eq(cairo_image_surface_get_height(s), L.height);
    /* x from 95 m to 695 m over 640 pixels, depth -2.5 to 197.5 m: the plot keeps the
     * metres' aspect (600 m x 200 m) */
    cr_assert_float_eq(L.h0, 95.0, 1e-9);
    cr_assert_float_eq(L.v1, 197.5, 1e-9);
    cr_assert_eq((int)L.plot[2], 640);
    cr_assert_eq((int)L.plot[3], 213);

    /* cairo's own extents of each label, in the font and size the renderer promises */
    cairo_surface_t *m = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
    cairo_t *cr = cairo_create(m);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    int nh = 0, nv = 0, names = 0, title = 0;
    for (int i = 0; i < L.ntext; i++) {
        const struct picture_text *t = &L.text[i];
        if (t->kind == PT_HNAME || t->kind == PT_VNAME)
            names += strcmp(t->text, t->kind == PT_HNAME ? "x (m)" : "depth (m)") == 0;
        if (t->kind == PT_TITLE)
            title = strstr(t->text, "test: inline y = 40 m, 7 shots stacked, final, 2026-01-01 00:00:00 UTC") != NULL;
        if (t->kind != PT_HTICK && t->kind != PT_VTICK)
            continue;
        cairo_text_extents_t e;
        cairo_text_extents(cr, t->text, &e);
        cr_assert_float_eq(t->w, e.width, 0.01, "label '%s': box %g wide, cairo says %g", t->text, t->w, e.width);
        cr_assert_float_eq(t->h, e.height, 0.01, "label '%s'", t->text);
        char want[32];
        snprintf(want, sizeof want, "%.0f", t->value);
        cr_assert_str_eq(t->text, want);
        /* inked: the pixels of its box are not all one colour */
        int x0 = (int)floor(t->x), x1 = (int)ceil(t->x + t->w), y0 = (int)floor(t->y), y1 = (int)ceil(t->y + t->h);
        int dark = 0;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++)
                dark += chan(px(s, x, y), 1) < 128;
        cr_assert_gt(dark, 2, "label '%s' at %d,%d: no ink", t->text, x0, y0);
        if (t->kind == PT_HTICK) { /* centred under its tick, below the plot */
            double want_x = L.plot[0] + (t->value - L.h0) / (L.h1 - L.h0) * L.plot[2];
            cr_assert_float_eq(t->x + t->w / 2, want_x, 1.0, "label '%s'", t->text);
            cr_assert_gt(t->y, L.plot[1] + L.plot[3]);
            nh++;
        } else { /* left of the plot, level with its tick */
            double want_y = L.plot[1] + (t->value - L.v0) / (L.v1 - L.v0) * L.plot[3];
            cr_assert_float_eq(t->y + t->h / 2, want_y, 2.0, "label '%s'", t->text);
            cr_assert_lt(t->x + t->w, L.plot[0]);
            nv++;
        }
    }
    cr_assert_geq(nh, 4, "%d distance labels", nh);
    cr_assert_geq(nv, 3, "%d depth labels", nv);
    cr_assert_eq(names, 2, "axis names");
    cr_assert(title, "title: %s", L.text[L.ntext - 1].text);

    /* the margins left of and below the plot hold nothing but the labels and ticks */
    const uint32_t white = 0xffffff;
    int ink = 0, stray = 0;
    for (int y = 0; y < L.height; y++)
        for (int x = 0; x < L.width; x++) {
            int left = x < L.plot[0] - 7, below = y > L.plot[1] + L.plot[3] + 7 && x < L.bar[0] - 8;
            if (!left && !below)
                continue;
            if (inside_text(&L, x, y, 1.5))
                ink += px(s, x, y) != white;
            else
                stray += px(s, x, y) != white;
        }
    cr_assert_eq(stray, 0, "%d non-background pixels in the margins outside the labels", stray);
    cr_assert_gt(ink, 100);
    cairo_destroy(cr);
    cairo_surface_destroy(m);
    cairo_surface_destroy(s);
    free(png);
    picture_free(p);
    free(v);
}

Test(picture, colour_bar_from_red_to_blue_with_its_clip)
{
    float *v = layers(META.n, 10, 1.0, 30, 0.5, 0.01);
    struct picture *p;
    cr_assert_eq(picture_prepare(&p, v, &META, NULL), 0);
    unsigned char *png;
    size_t len;
    struct picture_layout L;
    cr_assert_eq(picture_render_png(p, 'x', -1, &png, &len, &L), 0);
    cairo_surface_t *s = decode(png, len);
    int bx = (int)(L.bar[0] + L.bar[2] / 2), top = (int)L.bar[1] + 1, bot = (int)(L.bar[1] + L.bar[3]) - 2;
    uint32_t t = px(s, bx, top), b = px(s, bx, bot), mid = px(s, bx, (int)(L.bar[1] + L.bar[3] / 2));
    cr_assert(chan(t, 0) > 90 && chan(t, 2) < 60, "top %06x: not red", t);
    cr_assert(chan(b, 2) > 80 && chan(b, 0) < 20, "bottom %06x: not blue", b);
    cr_assert(chan(mid, 0) > 230 && chan(mid, 1) > 230 && chan(mid, 2) > 230, "middle %06x: not white", mid);
    char want[32];
    snprintf(want, sizeof want, "+%.3g", picture_clip(p));
    int found = 0;
    for (int i = 0; i < L.ntext; i++)
        found += L.text[i].kind == PT_BAR && strcmp(L.text[i].text, want) == 0 &&
                 L.text[i].x > L.bar[0] + L.bar[2];
    cr_assert_eq(found, 1, "no colour bar label %s", want);
    /* the clip is the 99th percentile of |value|: the peak rows (2.5 % of the cells, 1 +- noise) */
    cr_assert(picture_clip(p) > 0.99f && picture_clip(p) < 1.01f, "clip %g", picture_clip(p));
    cairo_surface_destroy(s);
    free(png);
    picture_free(p);
    free(v);
}

/* Mean distance from white of the plot's pixel rows around depth cell Z. */
static double row_contrast(const float *v, const struct picture_opts *o, int z)
{
    unsigned char *png;
    size_t len;
    struct picture *p;
    struct picture_layout L;
    cr_assert_eq(picture_prepare(&p, v, &META, o), 0);
    cr_assert_eq(picture_render_png(p, 'y', -1, &png, &len, &L), 0);
    cairo_surface_t *s = decode(png, len);
    double y = L.plot[1] + (META.o[2] + z * META.d[2] - L.v0) / (L.v1 - L.v0) * L.plot[3];
    double sum = 0;
    int n = 0;
    for (int x = (int)L.plot[0] + 2; x < L.plot[0] + L.plot[2] - 2; x++, n++) {
        uint32_t c = px(s, x, (int)lround(y));
        sum += (255 - chan(c, 0) + abs(255 - chan(c, 1)) + 255 - chan(c, 2)) / 3.0;
    }
    cairo_surface_destroy(s);
    free(png);
    picture_free(p);
    return sum / n;
}

Test(picture, depth_gain_and_agc_raise_the_deep_reflector)
{
    /* the deep reflector 40 times weaker than the shallow one, as spreading makes it */
    float *v = layers(META.n, 6, 1.0, 34, 0.025, 0.0005);
    struct picture_opts o;
    picture_opts_default(&o);
    double c0 = row_contrast(v, &o, 34), s0 = row_contrast(v, &o, 6);
    o.gain = 2;
    double c2 = row_contrast(v, &o, 34);
    picture_opts_default(&o);
    o.agc = 50;
    double ca = row_contrast(v, &o, 34);
    fprintf(stderr, "deep reflector contrast: %.1f linear, %.1f z^2, %.1f AGC 50 m (shallow %.1f)\n",
            c0, c2, ca, s0);
    cr_assert_gt(s0, 100, "the shallow reflector is strong without gain (%g)", s0);
    cr_assert_lt(c0, 15, "without gain the deep reflector is faint (%g)", c0);
    cr_assert_gt(c2, 4 * c0, "z^2 gain: %g, none: %g", c2, c0);
    cr_assert_gt(c2, 60);
    cr_assert_gt(ca, 4 * c0, "AGC: %g, none: %g", ca, c0);
    cr_assert_gt(ca, 60);
    free(v);
}

Test(picture, enlarged_without_blocky_steps)
{
    /* 8 x 1 x 6 cells, columns alternating in sign: drawn at 640 pixels across, 80 per
     * cell */
    struct picture_meta m = {{8, 1, 6}, {10, 10, 10}, {0, 0, 0}, "", -1, NULL, 0, 0};
    float v[48];
    for (int i = 0; i < 48; i++)
        v[i] = (i % 8) % 2 ? 1.0f : -1.0f;
    unsigned char *png;
    size_t len;
    struct picture *p;
    struct picture_layout L;
    cr_assert_eq(picture_prepare(&p, v, &m, NULL), 0);
    cr_assert_eq(picture_render_png(p, 'y', 0, &png, &len, &L), 0);
    cairo_surface_t *s = decode(png, len);
    cr_assert_eq((int)L.plot[2], 640);
    int y = (int)(L.plot[1] + L.plot[3] / 2), maxstep = 0, distinct = 0;
    uint32_t prev = px(s, (int)L.plot[0], y);
    for (int x = (int)L.plot[0] + 1; x < L.plot[0] + L.plot[2]; x++) {
        uint32_t c = px(s, x, y);
        for (int k = 0; k < 3; k++) {
            int d = abs(chan(c, k) - chan(prev, k));
            maxstep = d > maxstep ? d : maxstep;
        }
        distinct += c != prev;
        prev = c;
    }
    /* blocky cells would jump from dark red to dark blue (> 150 per channel) once per
     * cell and hold still in between; bilinear moves a few levels per pixel */
    cr_assert_lt(maxstep, 16, "a step of %d levels between neighbouring pixels", maxstep);
    cr_assert_gt(distinct, 400, "only %d colour changes along 640 pixels", distinct);
    cairo_surface_destroy(s);
    free(png);
    picture_free(p);
}

Test(picture, file_is_the_buffer_written_atomically)
{
    char *dir = test_tmpdir();
    float *v = layers(META.n, 10, 1.0, 30, 0.5, 0.01);
    char prefix[4200], path[4300];
    snprintf(prefix, sizeof prefix, "%s/img", dir);
    struct picture_opts o;
    picture_opts_default(&o);
    o.at[2] = 10;
    cr_assert_eq(picture_write_slices(prefix, v, &META, &o), 0);
    unsigned char *png;
    size_t len;
    cr_assert_eq(picture_slice_png(v, &META, &o, 'z', &png, &len), 0);
    snprintf(path, sizeof path, "%s_z.png", prefix);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    unsigned char *file = malloc(len + 1);
    cr_assert_eq(fread(file, 1, len + 1, f), len, "%s: not the buffer's %zu bytes", path, len);
    fclose(f);
    cr_assert_eq(memcmp(file, png, len), 0);
    free(png);
    /* three pictures and no temp files left */
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            n++;
            cr_assert_null(strstr(e->d_name, ".tmp"), "%s left", e->d_name);
        }
    closedir(d);
    cr_assert_eq(n, 3);
    cr_assert_eq(picture_slice_png(v, &META, &o, 'q', &png, &len), -EINVAL);
    o.percentile = 0;
    cr_assert_eq(picture_slice_png(v, &META, &o, 'z', &png, &len), -EINVAL);
    free(file);
    free(v);
    test_rmtree(dir);
    free(dir);
}

Test(picture, gain_numbers)
{
    /* one column of ones: depth^2 gain gives k^2 (half a cell squared at the top);
     * AGC gives 1 everywhere for a constant column */
    int n[3] = {1, 1, 10};
    double d[3] = {5, 5, 5};
    float v[10], g[10];
    for (int i = 0; i < 10; i++)
        v[i] = 2.0f;
    picture_apply_gain(g, v, n, d, 2.0, 0);
    cr_assert_float_eq(g[0], 0.5f, 1e-6);
    cr_assert_float_eq(g[7], 98.0f, 1e-4);
    picture_apply_gain(g, v, n, d, 0, 20);
    for (int i = 0; i < 10; i++)
        cr_assert_float_eq(g[i], 1.0f, 1e-5, "AGC at %d: %g", i, g[i]);
    cr_assert_float_eq(picture_tick_step(600, 7), 100.0, 1e-9);
    cr_assert_float_eq(picture_tick_step(200, 4), 50.0, 1e-9);
    cr_assert_float_eq(picture_tick_step(0.3, 3), 0.1, 1e-12);
}
