/* seislive-bench — benchmarks that print tables (never tests): stencil, rtm, stack,
 * pipeline, dispersion, scaling.  `seislive-bench NAME [--json] [options]`, `seislive-bench all`.
 * Each benchmark lives in tools/bench_<name>.c and has one line in the table below. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/bench.h"

static const struct bench benches[] = {
    /* {"stencil", "...", bench_stencil}, added as each lands */
    {"stencil", "propagator step: Gpts/s per kernel and order vs the copy roofline", bench_stencil},
    {"rtm", "one reference shot migrated with each source-wavefield strategy: time, peak memory, vs stencil", bench_rtm},
    {"stack", "coherent stack: sums/s per trial grid, real-time factor, largest real-time grid, roofline", bench_stack},
    {"pipeline", "ingest + H2D + compute overlap vs compute alone; io_uring file ingest vs dd", bench_pipeline},
    {"tdt", "time-dispersion correction: forward / inverse transform of a shot's traces on the host", bench_tdt},
    {"dispersion", "ppw for 1 % / 0.1 % per operator and order; coarsest grid and time per shot for a trace accuracy",
     bench_dispersion},
    {"scaling", "under mpirun -np N: domain decomposition's ms/step, Gpts/s, efficiency vs 1 rank, halo hidden",
     bench_scaling},
    {"cpml", "CPML reflection per layer width, damping and memory storage (fp32 / bf16), on the CPU", bench_cpml},
    {NULL, NULL, NULL},
};

/* The options of each benchmark, as its parser in tools/bench_NAME.c reads them (kept
 * here so that `NAME --help` never reaches a parser that would call it unknown). */
static const struct {
    const char *name, *options;
} bench_options[] = {
    {"stencil",
     "  --sizes N,N,...        cube edges in points (default 256,512)\n"
     "  --grids NXxNYxNZ,...   padded grids that are not cubes (e.g. 400x400x200, the RTM reference shot)\n"
     "  --cpml-memory LIST     fp32 and/or bf16: storage of the CPML memory, tiled rows once per storage\n"
     "  --orders O,O,...       space orders (default 2,4,8,16)\n"
     "  --operator OP          acoustic rows' derivative operator: taylor (default), optimized, implicit\n"
     "  --steps N              time steps per measurement (default 50)\n"
     "  --pml N                absorbing-layer width in cells (default 20)\n"
     "  --kernels LIST         naive and/or tiled (default both)\n"
     "  --variants LIST        GPU variants PIPE/TILE/DEPTH/CPML, comma-separated\n"
     "                         (e.g. ring/4x4/2/fused,regs/4x4/2/split)\n"
     "  --no-cpml-rows         leave out the rows with the CPML faces\n"
     "  --2d                   2D grids SIZE x 1 x SIZE (default sizes 1024,4096)\n"
     "  --physics P            acoustic, tti or both (default both): which propagator's rows\n"
     "  --tti-orders O,...     orders of the TTI rows (default 8; 2..16)\n"
     "  kernel choices (struct wave_tuning, docs/TUNING.md; unset: the production default):\n"
     "  --tile T               tiled block: 8x2, 4x4, 8x4 (ring); 16x1, 8x1, 8x2, 4x4 (regs)\n"
     "  --pipe P               tiled pipeline: ring or regs\n"
     "  --prefetch N           tiled planes in flight: 1..3 (ring), 1..2 (regs)\n"
     "  --cpml C               tiled CPML arrangement: lines, split, fused or ring\n"
     "  --cpml-overlap on|off  split/fused/ring CPML on a second stream\n"
     "  --naive-block WxH      naive thread block (W a multiple of 32, W x H <= 1024)\n"
     "  --layer-zchunk N       z planes per fused-CPML (or ring CPML) block\n"
     "  --ring-shape F/Z       ring CPML frame / z-layer tiles at order 8, e.g. 8x2d2/8x1d2\n"},
    {"rtm",
     "  --n NX NY NZ           model size in points (default 400 400 200)\n"
     "  --d M                  grid spacing in m (default 12.5)\n"
     "  --pml N                absorbing-layer width in cells, the random strategy's too (default:\n"
     "                         the config's, 12 CPML and 20 random; 20 CPML with --physics tti)\n"
     "  --steps N              time steps (default 3000)\n"
     "  --rx N                 receivers (default 200)\n"
     "  --order O              space order (default 8)\n"
     "  --image-every N|auto   imaging step interval (default 1; auto: floor(1 / (2 fmax dt)))\n"
     "  --repeat N             runs per strategy, the median is shown (default 1)\n"
     "  --strategies LIST      default boundary,random,checkpoint,checkpoint-uniform,full\n"
     "  --kernel K             auto, naive or tiled (default auto)\n"
     "  --device SPEC          auto, cpu or cuda:N (default auto)\n"
     "  --physics P            acoustic (default) or tti (eps 0.2, delta 0.1, 30 degree tilt)\n"
     "  --one-stream           source and receiver wavefields on one stream\n"
     "  --imaging-scalar       the scalar imaging kernel\n"
     "  --cpml-memory M        fp32 (default) or bf16: storage of the CPML memory\n"
     "  --verbose              per-run details\n"},
    {"stack",
     "  --grids N,N,...        trial-grid edges in points (default 32,64,96,128,160)\n"
     "  --stations N           stations (default 2048)\n"
     "  --fs HZ                sampling rate (default 500)\n"
     "  --block S              block length in s (default 1)\n"
     "  --cpu-grid N           trial-grid edge of the CPU row (default 16)\n"
     "  --kernels LIST         staged, staged-db and/or direct (default all three)\n"
     "  --device SPEC          auto, cpu or cuda:N (default auto)\n"},
    {"pipeline",
     "  --units N              units pushed through the pipeline (default 32)\n"
     "  --mib M                MiB per unit (default 64)\n"
     "  --compute-ms MS        simulated compute per unit (default 20)\n"
     "  --file PATH            file for the io_uring ingest row (default: none)\n"
     "  --file-mib M           MiB read from it (default 2048)\n"},
    {"tdt",
     "  --lengths N,N,...      samples per trace (default 1001,4001,16001)\n"
     "  --traces N             traces per shot (default 1000)\n"
     "  --repeat N             runs per row, the best is shown (default 3)\n"},
    {"dispersion",
     "  --orders O,O,...       space orders (default 2,4,...,16; the trade-off takes those >= 4)\n"
     "  --target E             trace relative L2 error to reach (default 0.01)\n"
     "  --cfl F,F,...          dt as fractions of each operator's stable dt (default 0.9,0.2)\n"
     "  --f-peak HZ            Ricker peak frequency (default 15; fmax = 2.5 f-peak)\n"
     "  --offset M             source-receiver distance of the accuracy trace (default 600)\n"
     "  --survey X,Y,Z         reference survey volume in m (default 4000,4000,2000)\n"
     "  --t-max S              reference shot length (default 4)\n"
     "  --rate-n N             cube edge inside the 16 layers of the step-rate grid (default 480 GPU: 512^3 padded; 96 CPU)\n"
     "  --tdc none|correct|both  trade-off rows without / with the time-dispersion correction (default both)\n"
     "  --receivers N          traces per survey shot the correction transforms (default 10000)\n"
     "  --device SPEC          auto, cpu or cuda:N (default auto)\n"},
    {"scaling",
     "  (run under mpirun -np N: the row of N ranks, with 1 rank measured inside the run)\n"
     "  --weak E               weak scaling: an E^3 subdomain per rank (default 512)\n"
     "  --strong NX,NY,NZ      strong scaling: one grid cut among the ranks (default 1024,1024,512)\n"
     "  --mode M               weak, strong, both (default) or none (--verify alone)\n"
     "  --order O              space order (default 8)\n"
     "  --steps N              time steps per phase (default 20)\n"
     "  --pml N                CPML width on the whole grid's faces (default 20)\n"
     "  --device SPEC          auto (GPU = local rank mod GPUs, else CPU), cpu or cuda:N (every rank)\n"
     "  --transport T          auto, nccl or staged (default auto; docs/mpi.md)\n"
     "  --verify NX,NY,NZ      first check V overlapped steps of that grid against one rank\n"
     "                         (bitwise on the CPU, 1e-5 on a GPU; exit 1 otherwise)\n"
     "  --verify-steps V       steps of --verify (default 30)\n"},
    {"cpml",
     "  --widths N,N,...       layer widths in cells (default 8,10,12,16,20)\n"
     "  --reflection R,...     theoretical reflection coefficients of the damping (default 1e-4)\n"
     "  --memory LIST          fp32 and/or bf16: storage of psi and zeta (default both)\n"
     "  --degrees N,N,...      polynomial degrees of the damping profile (default 2)\n"
     "  --f-peak F             the Ricker's peak frequency and f_ref in Hz (default 15)\n"
     "  --op taylor|implicit   the operator (default taylor)\n"
     "  --order O              space order (default 8)\n"},
};

/* -h or --help anywhere among a benchmark's arguments. */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return true;
    return false;
}

static void bench_usage(const struct bench *b)
{
    printf("usage: seislive-bench %s [--json] [options]\n\n%s\n\noptions:\n"
           "  --json                 JSON instead of a Markdown table\n", b->name, b->doc);
    for (size_t i = 0; i < sizeof bench_options / sizeof *bench_options; i++)
        if (!strcmp(bench_options[i].name, b->name))
            fputs(bench_options[i].options, stdout);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: seislive-bench NAME [--json] [options]\n\nbenchmarks:\n");
    for (const struct bench *b = benches; b->name; b++)
        fprintf(f, "  %-10s %s\n", b->name, b->doc);
    fprintf(f, "  %-10s every benchmark above but scaling, with its defaults\n", "all");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "all") == 0) {
        int rc = 0;
        for (const struct bench *b = benches; b->name; b++) {
            if (!strcmp(b->name, "scaling"))
                continue; /* a run per rank count, under mpirun: not one of a series */
            char *args[] = {(char *)b->name, NULL};
            rc |= b->run(1, args) != 0;
        }
        return rc;
    }
    for (const struct bench *b = benches; b->name; b++)
        if (strcmp(argv[1], b->name) == 0) {
            if (wants_help(argc - 1, argv + 1)) {
                bench_usage(b);
                return 0;
            }
            return b->run(argc - 1, argv + 1) == 0 ? 0 : 1;
        }
    fprintf(stderr, "seislive-bench: unknown benchmark '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
