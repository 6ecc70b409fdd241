/* picture_draw — one slice drawn with cairo: the slice bilinear between cell centres,
 * the axes with their ticks in metres, the title and the colour bar.  See picture.h. */
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/picture_impl.h"
#include "io/png_slices.h"
#include "stream/error.h"

#define FONT "DejaVu Sans"
enum { TICK_PT = 11, NAME_PT = 12, TITLE_PT = 13, TICK_LEN = 5, BAR_W = 16, MIN_PLOT = 96 };

double picture_tick_step(double span, int ticks)
{
    if (!(span > 0) || ticks < 1)
        return 1;
    double raw = span / ticks, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

struct ctx {
    cairo_t *cr;
    struct picture_layout *L;
};

/* Put TEXT with its ink box's left (ALIGN 0), centre (1) or right (2) at X and its
 * baseline at Y (ROT: turned a quarter anticlockwise, reading upwards, centred on X, Y)
 * and record the ink box. */
static void text_at(struct ctx *c, int kind, double value, const char *text, double x, double y,
                    int align, int rot)
{
    cairo_text_extents_t e;
    cairo_text_extents(c->cr, text, &e);
    double bx, by, bw, bh;
    if (!rot) {
        x -= e.x_bearing + (align == 1 ? e.width / 2 : align == 2 ? e.width : 0);
        cairo_move_to(c->cr, x, y);
        cairo_show_text(c->cr, text);
        bx = x + e.x_bearing, by = y + e.y_bearing, bw = e.width, bh = e.height;
    } else {
        /* text space (u, v) lands at (x + v, y - u): centre the ink box on x, y */
        double u0 = -e.x_bearing - e.width / 2, v0 = -e.y_bearing - e.height / 2;
        cairo_save(c->cr);
        cairo_translate(c->cr, x + v0, y - u0);
        cairo_rotate(c->cr, -M_PI / 2);
        cairo_move_to(c->cr, 0, 0);
        cairo_show_text(c->cr, text);
        cairo_restore(c->cr);
        bx = x - e.height / 2, by = y - e.width / 2, bw = e.height, bh = e.width;
    }
    if (c->L && c->L->ntext < PICTURE_MAX_TEXT) {
        struct picture_text *t = &c->L->text[c->L->ntext++];
        t->kind = kind;
        snprintf(t->text, sizeof t->text, "%s", text);
        t->value = value, t->x = bx, t->y = by, t->w = bw, t->h = bh;
    }
}

static double text_w(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.width;
}

static void tick_label(char *buf, size_t n, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, n, "%.*f", dec, fabs(v) < 1e-9 * step ? 0.0 : v);
}

/* Ticks along the plot edge from A (metres, at pixel P0) to B (at P0 + LEN); HORIZ: the
 * bottom edge at EDGE (labels below), else the left edge at EDGE (labels left). */
static void ticks(struct ctx *c, double a, double b, double p0, double len, double edge, int horiz)
{
    cairo_t *cr = c->cr;
    double step = picture_tick_step(b - a, (int)fmax(2, len / (horiz ? 90 : 60)));
    double last = -1e30;
    cairo_set_font_size(cr, TICK_PT);
    for (double t = ceil(a / step - 1e-9) * step; t <= b + 1e-9 * step; t += step) {
        if (fabs(t) < 1e-9 * step)
            t = 0; /* not -0 */
        double p = p0 + (t - a) / (b - a) * len;
        char s[32];
        tick_label(s, sizeof s, t, step);
        double w = text_w(cr, s);
        if (horiz) {
            cairo_move_to(cr, p, edge);
            cairo_line_to(cr, p, edge + TICK_LEN);
            cairo_stroke(cr);
            if (p - w / 2 < last + 6) /* labels never overlap */
                continue;
            text_at(c, PT_HTICK, t, s, p, edge + TICK_LEN + 4 + TICK_PT, 1, 0);
            last = p + w / 2;
        } else {
            cairo_move_to(cr, edge, p);
            cairo_line_to(cr, edge - TICK_LEN, p);
            cairo_stroke(cr);
            if (p - TICK_PT / 2.0 < last + 4)
                continue;
            text_at(c, PT_VTICK, t, s, edge - TICK_LEN - 4, p + 0.36 * TICK_PT, 2, 0);
            last = p + TICK_PT / 2.0;
        }
    }
}

/* The slice, bilinear between cell centres, into a PW x PH image surface. */
static cairo_surface_t *slice_surface(const struct picture *p, const struct picture_slice *sl,
                                      int pw, int ph)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS)
        return s;
    cairo_surface_flush(s);
    unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < ph; y++) {
        /* the cell coordinate of the pixel's centre: the plot spans half a cell beyond
         * the first and last centres, where the edge value holds */
        double fy = (y + 0.5) / ph * sl->sh - 0.5;
        fy = fy < 0 ? 0 : fy > sl->sh - 1 ? sl->sh - 1 : fy;
        int y0 = (int)fy, y1 = y0 + 1 < sl->sh ? y0 + 1 : y0;
        double gy = fy - y0;
        uint32_t *row = (uint32_t *)(data + (size_t)y * stride);
        for (int x = 0; x < pw; x++) {
            double fx = (x + 0.5) / pw * sl->sw - 0.5;
            fx = fx < 0 ? 0 : fx > sl->sw - 1 ? sl->sw - 1 : fx;
            int x0 = (int)fx, x1 = x0 + 1 < sl->sw ? x0 + 1 : x0;
            double gx = fx - x0;
            const float *r0 = sl->s + (size_t)y0 * sl->sw, *r1 = sl->s + (size_t)y1 * sl->sw;
            double v = (1 - gy) * ((1 - gx) * r0[x0] + gx * r0[x1]) + gy * ((1 - gx) * r1[x0] + gx * r1[x1]);
            uint8_t rgb[3];
            png_diverging_rgb((float)v, p->clip, rgb);
            row[x] = (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
        }
    }
    cairo_surface_mark_dirty(s);
    return s;
}

static void title_text(const struct picture *p, const struct picture_slice *sl, char *t, size_t n)
{
    static const char *const names[3] = {"x", "y", "depth"};
    static const char *const kinds[3] = {"crossline", "inline", "depth slice"};
    int ax = sl->axis == 'x' ? 0 : sl->axis == 'y' ? 1 : 2;
    size_t k = 0;
    k += (size_t)snprintf(t + k, n - k, "%s%s%s %s = %g m", p->m.job[0] ? p->m.job : "",
                          p->m.job[0] ? ": " : "", kinds[ax], names[ax],
                          p->m.o[ax] + sl->at * p->m.d[ax]);
    if (k < n && p->m.units >= 0)
        k += (size_t)snprintf(t + k, n - k, ", %lld %s", p->m.units, p->m.unit_name);
    if (k < n && p->m.final)
        k += (size_t)snprintf(t + k, n - k, ", final");
    if (k < n && p->m.time > 0) {
        time_t s = (time_t)p->m.time;
        struct tm tm;
        gmtime_r(&s, &tm);
        char b[40];
        strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
        snprintf(t + k, n - k, ", %s", b);
    }
}

static void gain_text(const struct picture *p, char *t, size_t n)
{
    size_t k = (size_t)snprintf(t, n, "p%g clip", p->o.percentile);
    if (k < n && p->o.gain > 0)
        k += (size_t)snprintf(t + k, n - k, ", z^%g", p->o.gain);
    if (k < n && p->o.agc > 0)
        snprintf(t + k, n - k, ", AGC %g m", p->o.agc);
}

int picture_draw(const struct picture *p, const struct picture_slice *sl, cairo_write_func_t write,
                 void *closure, struct picture_layout *L)
{
    const double dh = p->m.d[sl->h], dv = p->m.d[sl->v];
    double lh = sl->sw * dh, lv = sl->sh * dv, scale = p->o.size / fmax(lh, lv);
    int pw = (int)fmax(MIN_PLOT, lround(lh * scale)), ph = (int)fmax(MIN_PLOT, lround(lv * scale));
    struct picture_layout dummy;
    if (!L)
        L = &dummy;
    memset(L, 0, sizeof *L);
    L->h0 = p->m.o[sl->h] - dh / 2, L->h1 = L->h0 + lh;
    L->v0 = p->m.o[sl->v] - dv / 2, L->v1 = L->v0 + lv;
    L->clip = p->clip;

    /* measure first (a scratch context), then size the margins to the text */
    char title[256], gain[96], top[32], bot[32];
    title_text(p, sl, title, sizeof title);
    gain_text(p, gain, sizeof gain);
    snprintf(top, sizeof top, "+%.3g", p->clip);
    snprintf(bot, sizeof bot, "-%.3g", p->clip);
    cairo_surface_t *scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
    cairo_t *cr = cairo_create(scratch);
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, TICK_PT);
    char s[32];
    tick_label(s, sizeof s, fabs(L->v0) > fabs(L->v1) ? L->v0 : L->v1, picture_tick_step(lv, 8));
    double vlab = text_w(cr, s) + 8, blab = fmax(text_w(cr, top), text_w(cr, bot));
    cairo_set_font_size(cr, TITLE_PT);
    double tw = text_w(cr, title);
    cairo_set_font_size(cr, TICK_PT);
    double gw = text_w(cr, gain);
    cairo_destroy(cr);
    cairo_surface_destroy(scratch);

    int left = (int)ceil(12 + NAME_PT + 8 + vlab + TICK_LEN + 4);
    int topm = 14 + TITLE_PT + 12;
    int right = (int)ceil(14 + BAR_W + 6 + blab + 12);
    int bottom = TICK_LEN + 4 + TICK_PT + 10 + NAME_PT + 12;
    int width = left + pw + right;
    double need = fmax(tw + 24, left + pw + 14 + gw + 8); /* the title and the gain note fit */
    if (width < need)
        width = (int)ceil(need);
    int height = topm + ph + bottom;
    L->width = width, L->height = height;
    L->plot[0] = left, L->plot[1] = topm, L->plot[2] = pw, L->plot[3] = ph;
    L->bar[0] = left + pw + 14, L->bar[1] = topm, L->bar[2] = BAR_W, L->bar[3] = ph;

    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    cairo_surface_t *img = slice_surface(p, sl, pw, ph);
    cr = cairo_create(surf);
    int rc = 0;
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS || cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        rc = err_set(-ENOMEM, "picture: cairo: %s", cairo_status_to_string(cairo_status(cr)));
        goto out;
    }
    struct ctx c = {cr, L};
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_surface(cr, img, left, topm);
    cairo_paint(cr);

    /* colour bar: +clip at the top, -clip at the bottom, the same map as the slice */
    for (int y = 0; y < ph; y++) {
        uint8_t rgb[3];
        png_diverging_rgb((float)(p->clip * (1 - 2 * (y + 0.5) / ph)), p->clip, rgb);
        cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
        cairo_rectangle(cr, L->bar[0], topm + y, BAR_W, 1);
        cairo_fill(cr);
    }

    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, left - 0.5, topm - 0.5, pw + 1, ph + 1);
    cairo_rectangle(cr, L->bar[0] - 0.5, topm - 0.5, BAR_W + 1, ph + 1);
    cairo_stroke(cr);
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    ticks(&c, L->h0, L->h1, left, pw, topm + ph + 0.5, 1);
    ticks(&c, L->v0, L->v1, topm, ph, left - 0.5, 0);

    double bx = L->bar[0] + BAR_W + 6, ty = 0.36 * TICK_PT;
    text_at(&c, PT_BAR, p->clip, top, bx, topm + ty, 0, 0);
    text_at(&c, PT_BAR, 0, "0", bx, topm + ph / 2.0 + ty, 0, 0);
    text_at(&c, PT_BAR, -p->clip, bot, bx, topm + ph + ty, 0, 0);
    text_at(&c, PT_BAR, NAN, gain, left + pw + 14, height - 12, 0, 0);

    static const char *const axname[3] = {"x (m)", "y (m)", "depth (m)"};
    cairo_set_font_size(cr, NAME_PT);
    text_at(&c, PT_HNAME, NAN, axname[sl->h], left + pw / 2.0, height - 12, 1, 0);
    text_at(&c, PT_VNAME, NAN, axname[sl->v], 12 + NAME_PT / 2.0, topm + ph / 2.0, 1, 1);
    cairo_set_font_size(cr, TITLE_PT);
    text_at(&c, PT_TITLE, NAN, title, 12, 14 + TITLE_PT, 0, 0);

    cairo_surface_flush(surf);
    cairo_status_t st = cairo_surface_write_to_png_stream(surf, write, closure);
    if (st != CAIRO_STATUS_SUCCESS)
        rc = err_set(-EIO, "picture: PNG: %s", cairo_status_to_string(st));
out:
    cairo_destroy(cr);
    cairo_surface_destroy(img);
    cairo_surface_destroy(surf);
    return rc;
}
