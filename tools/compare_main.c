/* seislive-compare — images side by side: the vertical sections of two or more final
 * images (the rtm job's [output] dir: image.f32 + image.json) in one PNG, and where a
 * reflector lands in each (the depth pick of docs/rtm.md: the largest value of the depth
 * profile under the chosen columns, and the zero crossing below it, where the interface
 * is).  Made for comparing migrations of the same data (tools/demo-tti.sh: isotropic
 * against TTI), so every image must have the same grid. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_files.h"
#include "io/png_slices.h"
#include "stream/error.h"
#include "tools/options.h"

static const char usage_text[] =
    "usage: seislive-compare [options] -o OUT.png DIR DIR...\n"
    "\n"
    "The vertical sections (x across, depth down, at the middle y) of the final images\n"
    "DIR/image.f32 (+ image.json, as the rtm job writes them to [output] dir), side by\n"
    "side in one PNG, left to right in the order given, a white gap between them; each\n"
    "section has its own colour clip (a percentile of its |values|), so images of\n"
    "different amplitude compare by shape.  For each image, one line:\n"
    "  DIR: maximum at Z m, zero crossing at Z m (x X0..X1 m, below Z_MIN m)\n"
    "the depth of the largest value of the depth profile (the section averaged over the\n"
    "columns X0..X1) below Z_MIN, and the first zero crossing below that positive lobe:\n"
    "an interface images as a doublet, positive above, negative below, with the zero\n"
    "crossing on the interface (docs/rtm.md); 'none' when the profile does not cross.\n"
    "\n"
    "options:\n"
    "  -o, --out FILE.png     the side-by-side picture (required)\n"
    "  --name NAME            the image files in each DIR (default image: image.f32)\n"
    "  --columns X0,X1        columns averaged for the pick, m (default: the middle fifth)\n"
    "  --z-min Z              pick below this depth, m (default 0)\n"
    "  --percentile P         colour clip of each section (default 99)\n"
    "  --scale S              PNG pixels per cell (default: 400 pixels for the widest axis\n"
    "                         of one image, at most 8 per cell)\n"
    "  -h, --help             this text\n"
    "\n"
    "exit status: 0 done, 1 an image could not be read or the PNG written (or the grids\n"
    "differ), 2 bad command line.\n";

/* Gap between sections, in cells of the picture. */
#define GAP_CELLS 4

struct pick {
    double z_max, z_zero; /* m; z_zero NAN when the profile does not cross */
};

/* The depth pick of section SEC (NX x NZ, x fastest) over columns I0..I1 below Z_MIN. */
static struct pick pick_depth(const float *sec, int nx, int nz, double dz, double oz, int i0, int i1, double z_min)
{
    double *p = malloc((size_t)nz * sizeof *p);
    for (int k = 0; k < nz; k++) {
        double s = 0;
        for (int i = i0; i <= i1; i++)
            s += sec[(size_t)k * nx + i];
        p[k] = s / (i1 - i0 + 1);
    }
    int k0 = (int)ceil((z_min - oz) / dz), km = -1;
    for (int k = k0 < 0 ? 0 : k0; k < nz; k++)
        if (isfinite(p[k]) && (km < 0 || p[k] > p[km]))
            km = k;
    struct pick r = {NAN, NAN};
    if (km >= 0) {
        r.z_max = oz + km * dz;
        for (int q = km; q + 1 < nz; q++)
            if (p[q] >= 0 && p[q + 1] < 0) {
                r.z_zero = oz + (q + p[q] / (p[q] - p[q + 1])) * dz;
                break;
            }
    }
    free(p);
    return r;
}

int main(int argc, char **argv)
{
    enum { O_NAME = 256, O_COLS, O_ZMIN, O_PCT, O_SCALE };
    static const struct option lo[] = {{"out", 1, 0, 'o'}, {"name", 1, 0, O_NAME}, {"columns", 1, 0, O_COLS},
                                       {"z-min", 1, 0, O_ZMIN}, {"percentile", 1, 0, O_PCT},
                                       {"scale", 1, 0, O_SCALE}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL, *name = "image";
    double cols[2] = {NAN, NAN}, z_min = 0, pct = 99;
    int scale = 0, opt, idx = 0, bad = 0;
    while (!bad && (opt = getopt_long(argc, argv, "o:h", lo, &idx)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case O_NAME: name = optarg; break;
        case O_COLS: bad = options_doubles(optarg, cols, 2, 2) < 0 || !(cols[0] <= cols[1]); break;
        case O_ZMIN: bad = options_doubles(optarg, &z_min, 1, 1) < 0 || !isfinite(z_min); break;
        case O_PCT: bad = options_doubles(optarg, &pct, 1, 1) < 0 || !(pct > 0 && pct <= 100); break;
        case O_SCALE: bad = options_ints(optarg, &scale, 1, 1) < 0 || scale < 1 || scale > 64; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: bad = 2; break;
        }
        if (bad == 1)
            fprintf(stderr, "seislive-compare: bad value for --%s: '%s'\n", lo[idx].name, optarg);
    }
    if (!bad && (!out || optind >= argc)) {
        fprintf(stderr, "seislive-compare: %s\n", !out ? "-o OUT.png is required" : "no image folder given");
        bad = 1;
    }
    if (bad) {
        fputs("try 'seislive-compare --help'\n", stderr);
        return 2;
    }
    const int nimg = argc - optind;
    struct image_meta m0, m;
    memset(&m0, 0, sizeof m0);
    float *pic = NULL;
    int nx = 0, nz = 0, w = 0, rc = 0;
    for (int k = 0; k < nimg && rc == 0; k++) {
        const char *dir = argv[optind + k];
        float *v = NULL;
        if ((rc = image_files_read(dir, name, &m, &v)) < 0) {
            fprintf(stderr, "seislive-compare: %s/%s: %s\n", dir, name, err_msg());
            break;
        }
        if (k == 0) {
            m0 = m;
            nx = m.n[0];
            nz = m.n[2];
            w = nimg * nx + (nimg - 1) * GAP_CELLS;
            pic = calloc((size_t)w * nz, sizeof *pic); /* 0: white */
        } else if (memcmp(m.n, m0.n, sizeof m.n) != 0 || memcmp(m.d, m0.d, sizeof m.d) != 0 ||
                   memcmp(m.o, m0.o, sizeof m.o) != 0) {
            fprintf(stderr, "seislive-compare: %s: grid %d x %d x %d differs from %s's %d x %d x %d\n", dir, m.n[0],
                    m.n[1], m.n[2], argv[optind], m0.n[0], m0.n[1], m0.n[2]);
            rc = -1;
        }
        if (rc == 0 && !pic) {
            fprintf(stderr, "seislive-compare: out of memory\n");
            rc = -1;
        }
        if (rc < 0) {
            free(v);
            break;
        }
        /* the section at the middle y, and each its own clip: the picture clips at 1 */
        const size_t nsec = (size_t)nx * nz;
        float *sec = malloc(nsec * sizeof *sec);
        const int j = m.n[1] / 2;
        for (int q = 0; q < nz; q++)
            memcpy(sec + (size_t)q * nx, v + ((size_t)q * m.n[1] + j) * nx, (size_t)nx * sizeof *sec);
        free(v);
        const float clip = png_robust_clip(sec, nsec, pct);
        for (int q = 0; q < nz; q++)
            for (int i = 0; i < nx; i++)
                pic[(size_t)q * w + k * (nx + GAP_CELLS) + i] = clip > 0 ? sec[(size_t)q * nx + i] / clip : 0;
        /* the middle fifth by default; columns outside the grid are clamped to it */
        double x0 = isnan(cols[0]) ? m.o[0] + 0.4 * (nx - 1) * m.d[0] : cols[0];
        double x1 = isnan(cols[1]) ? m.o[0] + 0.6 * (nx - 1) * m.d[0] : cols[1];
        int i0 = (int)ceil((x0 - m.o[0]) / m.d[0]), i1 = (int)floor((x1 - m.o[0]) / m.d[0]);
        i0 = i0 < 0 ? 0 : i0 >= nx ? nx - 1 : i0;
        i1 = i1 < i0 ? i0 : i1 >= nx ? nx - 1 : i1;
        struct pick p = pick_depth(sec, nx, nz, m.d[2], m.o[2], i0, i1, z_min);
        free(sec);
        char zz[32] = "none";
        if (!isnan(p.z_zero))
            snprintf(zz, sizeof zz, "%.1f m", p.z_zero);
        printf("%s: maximum at %.1f m, zero crossing at %s (x %.0f..%.0f m, below %.0f m)\n", dir, p.z_max, zz,
               m.o[0] + i0 * m.d[0], m.o[0] + i1 * m.d[0], z_min);
    }
    if (rc == 0) {
        const int n1[3] = {nx, 1, nz};
        if ((rc = png_write_section(out, pic, w, nz, 1.0f, scale > 0 ? scale : png_auto_scale(n1))) < 0)
            fprintf(stderr, "seislive-compare: %s\n", err_msg());
        else
            printf("%s: %d sections of %d x %d cells side by side (left to right as given)\n", out, nimg, nx, nz);
    }
    free(pic);
    return rc < 0 ? 1 : 0;
}
