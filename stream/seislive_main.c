/* seislive — the appliance's command line: check, run, model. */
#define LOG_COMPONENT "main"
#include <errno.h>
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "stream/check.h"
#include "stream/error.h"
#include "stream/job.h"
#include "stream/log.h"
#include "stream/mpi.h"
#include "stream/signals.h"
#include "version.h"

static const char usage_text[] =
    "usage: seislive COMMAND [options]\n"
    "\n"
    "Real-time seismic imaging: migrates shots (rtm) or locates microseismic events\n"
    "(locate) as the data arrive, and publishes the growing result over ZeroMQ.\n"
    "\n"
    "commands:\n"
    "  check -c FILE           validate FILE and what run would fail on (endpoints, paths,\n"
    "                          model file); print the resolved configuration and the derived\n"
    "                          quantities (stable dt, time dispersion, memory, strategy)\n"
    "  run -c FILE             run the configured job until its input ends or SIGTERM\n"
    "                          (the rtm job on several ranks: mpirun -np N seislive run ...,\n"
    "                          with [runtime] decompose = \"shots\"; docs/mpi.md)\n"
    "  model -c FILE -o OUT    forward-model the configured shots into the SEG-Y file OUT\n"
    "                          (several ranks: mpirun -np N seislive model ..., with\n"
    "                          [runtime] decompose = \"domain\"; docs/mpi.md)\n"
    "  reference               print the configuration key reference (Markdown)\n"
    "  example                 print an example configuration with every key\n"
    "\n"
    "options:\n"
    "  -c, --config FILE       configuration file (TOML); see conf/seislive.example.toml\n"
    "  -o, --output FILE       output file (model)\n"
    "  -d, --device SPEC       override [runtime] device: auto, cpu or cuda:N\n"
    "  -q, --quiet             check: print only errors (nothing when FILE can run)\n"
    "  -n, --ranks N           check: plan [runtime] decompose for N MPI ranks\n"
    "  -h, --help              this text\n"
    "  -V, --version           version, git revision and whether CUDA is compiled in\n"
    "\n"
    "exit status:\n"
    "  0  success (also a run stopped by SIGTERM/SIGINT after saving its state)\n"
    "  1  the run failed (I/O, data or device error; the log says where)\n"
    "  2  bad command line or invalid configuration (the message names file:line:col)\n"
    "  3  the requested device is not available\n";

static void print_version(void)
{
    printf("seislive %s (git %s, %s build)\n", SEISLIVE_VERSION, SEISLIVE_GIT_REV,
           SEISLIVE_BUILD_KIND);
    printf("CUDA: %s\n", backend_cuda_compiled() ? "compiled in" : "not compiled in (CPU only)");
    printf("MPI: %s\n", sl_mpi_compiled() ? "compiled in (mpirun -np N; docs/mpi.md)" : "not compiled in (one rank)");
}

struct args {
    const char *command;
    const char *config;
    const char *output;
    const char *device;
    int quiet;
    int ranks;              /* check --ranks N; 0 = not given */
};

static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"output", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {"ranks", required_argument, NULL, 'n'},  {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    int opt;
    opterr = 0;
    /* GNU getopt permutes: options may come before or after the command. */
    while ((opt = getopt_long(argc, argv, "c:o:d:qhVn:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': a->config = optarg; break;
        case 'o': a->output = optarg; break;
        case 'd': a->device = optarg; break;
        case 'q': a->quiet = 1; break;
        case 'n': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 65536) {
                fprintf(stderr, "seislive: --ranks %s: a number of ranks 1..65536\n", optarg);
                return -EINVAL;
            }
            a->ranks = (int)v;
            break;
        }
        case 'h': fputs(usage_text, stdout); exit(EXIT_OK);
        case 'V': print_version(); exit(EXIT_OK);
        default:
            fprintf(stderr, "seislive: unknown option or missing value: '%s'\n"
                            "try 'seislive --help'\n", argv[optind - 1]);
            return -EINVAL;
        }
    }
    if (optind < argc)
        a->command = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "seislive: unexpected argument '%s'\ntry 'seislive --help'\n", argv[optind]);
        return -EINVAL;
    }
    return 0;
}

/* Load the config, apply the command-line overrides and the [log] settings. */
static int load_config(const struct args *a, struct sl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg); /* config_free() is safe on it from here on */
    if (!a->config) {
        fprintf(stderr, "seislive %s: missing -c FILE\ntry 'seislive --help'\n", a->command);
        return EXIT_USAGE;
    }
    if (config_load(a->config, cfg) < 0) {
        fprintf(stderr, "seislive: %s\n", err_msg());
        return EXIT_USAGE;
    }
    if (a->device) {
        bool is_auto;
        enum sl_device_kind kind;
        int index;
        if (backend_parse(a->device, &is_auto, &kind, &index) < 0) {
            fprintf(stderr, "seislive: --device: %s\n", err_msg());
            return EXIT_USAGE;
        }
        free(cfg->runtime.device);
        cfg->runtime.device = strdup(a->device);
    }
    log_set_level((enum log_level)cfg->log.level);
    if (cfg->log.file[0] && log_set_file(cfg->log.file) < 0) {
        fprintf(stderr, "seislive: [log] file \"%s\": %s\n", cfg->log.file, strerror(errno));
        return EXIT_USAGE;
    }
    if (cfg->runtime.threads > 0)
        omp_set_num_threads(cfg->runtime.threads);
    return EXIT_OK;
}

/* decompose = "domain" where the job has no decomposition yet (docs/mpi.md): refused by
 * check and run alike.  Returns true with err_msg() set. */
static bool domain_refused(const struct sl_config *cfg, const char *path)
{
    if (cfg->runtime.decompose != DECOMPOSE_DOMAIN || cfg->job.kind == JOB_MODEL || cfg->job.kind == JOB_RTM)
        return false;
    err_set(-EINVAL, "%s: [runtime] decompose = \"domain\" runs the model and rtm jobs only so far (seislive model, "
            "or [job] kind = \"model\" or \"rtm\"), not \"%s\" (docs/mpi.md)", path,
            config_enum_name("job", "kind", cfg->job.kind));
    return true;
}

/* decompose = "shots" where the job has no shots: the config check refuses it, but
 * `seislive model -c` of an rtm job's file makes a model job of it after that check. */
static bool shots_refused(const struct sl_config *cfg, const char *path)
{
    if (cfg->runtime.decompose != DECOMPOSE_SHOTS || cfg->job.kind == JOB_RTM)
        return false;
    err_set(-EINVAL, "%s: [runtime] decompose = \"shots\" hands the shots of the rtm job out to the ranks; the %s "
            "job has none (docs/mpi.md)", path, config_enum_name("job", "kind", cfg->job.kind));
    return true;
}

static int cmd_check(const struct args *a)
{
    struct sl_config cfg;
    int rc = load_config(a, &cfg);
    if (rc != EXIT_OK) {
        config_free(&cfg);
        return rc;
    }
    /* -q prints only errors: warnings (dispersion, ...) are for the full check. */
    if (a->quiet && cfg.log.level < LOG_ERROR)
        log_set_level(LOG_ERROR);
    if (a->ranks) /* the rank count the decomposition report plans for (docs/mpi.md) */
        cfg.runtime.ranks = a->ranks;
    if (!a->quiet) {
        printf("# %s: valid\n# resolved configuration (defaults filled in)\n\n", a->config);
        config_print(&cfg, stdout);
    }
    /* The reports write unconditionally: a quiet check gives them a sink rather than
     * NULL, so each job runs the very same checks in both modes. */
    FILE *out = stdout;
    if (a->quiet && !(out = fopen("/dev/null", "w"))) {
        fprintf(stderr, "seislive: /dev/null: %s\n", strerror(errno));
        config_free(&cfg);
        return EXIT_FAILED;
    }
    if (!a->quiet)
        printf("\n# derived\n");
    /* What run would fail on (endpoints, paths, model file and values), then the
     * job's own derived quantities. */
    const struct job_ops *job = job_find(cfg.job.kind);
    if (domain_refused(&cfg, a->config) || shots_refused(&cfg, a->config) || check_runnable(&cfg, out) < 0 ||
        (job && job->report && job->report(&cfg, out) < 0)) {
        fprintf(stderr, "seislive: %s\n", err_msg());
        rc = EXIT_USAGE;
    }
    if (out != stdout)
        fclose(out);
    config_free(&cfg);
    return rc;
}

static int cmd_run(const struct args *a, bool model_only)
{
    struct sl_config cfg;
    int rc = load_config(a, &cfg);
    if (rc != EXIT_OK) {
        config_free(&cfg);
        return rc;
    }
    if (model_only)
        cfg.job.kind = JOB_MODEL;
    const struct job_ops *job = job_find(cfg.job.kind);
    if (!job || !job->run) {
        fprintf(stderr, "seislive: %s: [job] kind \"%s\" is not available in this build\n",
                a->config, config_enum_name("job", "kind", cfg.job.kind));
        config_free(&cfg);
        return EXIT_USAGE;
    }
    /* Several ranks: each does its part of a decomposed job, or they would all do the whole
     * job (docs/mpi.md); and each takes its own GPU by local rank unless told otherwise. */
    if (sl_mpi_size() > 1 && cfg.runtime.decompose == DECOMPOSE_NONE) {
        log_error("%s: %d MPI ranks but [runtime] decompose = \"none\": every rank would run the whole job; set "
                  "decompose = \"domain\" (model job) or \"shots\" (rtm job), or run one rank (docs/mpi.md)", a->config, sl_mpi_size());
        config_free(&cfg);
        return EXIT_USAGE;
    }
    if (domain_refused(&cfg, a->config) || shots_refused(&cfg, a->config)) {
        log_error("%s", err_msg());
        config_free(&cfg);
        return EXIT_USAGE;
    }
    char spec[64], why[256];
    sl_mpi_device_spec(cfg.runtime.device, cfg.runtime.device_map,
                       sl_mpi_size() > 1 && !strcmp(cfg.runtime.device, "auto") ? backend_cuda_count(why, sizeof why) : 0,
                       spec, sizeof spec);
    struct sl_device dev;
    if (backend_select(spec, &dev) < 0) {
        log_error("%s", err_msg());
        config_free(&cfg);
        return EXIT_NO_DEVICE;
    }
    if (signals_install() < 0) {
        log_error("%s", err_msg());
        config_free(&cfg);
        return EXIT_FAILED;
    }
    log_info("%s job \"%s\" starting (config %s)", job->name, cfg.job.name, a->config);
    rc = job->run(&cfg, &dev, a->output);
    if (rc < 0) {
        log_error("%s job failed: %s", job->name, err_msg());
        config_free(&cfg);
        return EXIT_FAILED;
    }
    /* Say what the stop kept: the streaming jobs checkpoint into [output] state_dir at
     * the stop (stream/pipeline.c), but only when one is set; the model job keeps none. */
    if (signals_stop_requested()) {
        const char *sd = cfg.output.state_dir;
        if (cfg.job.kind == JOB_MODEL)
            log_info("stopped by signal %d; the model job keeps no state: its output is incomplete",
                     signals_last());
        else if (sd && sd[0] && cfg.runtime.decompose == DECOMPOSE_SHOTS && sl_mpi_rank() > 0)
            log_info("stopped by signal %d; rank 0 saves the state in %s", signals_last(), sd);
        else if (sd && sd[0])
            log_info("stopped by signal %d; state saved in %s", signals_last(), sd);
        else
            log_info("stopped by signal %d; no [output] state_dir: nothing saved, a restart starts afresh",
                     signals_last());
    }
    config_free(&cfg);
    return EXIT_OK;
}

static int dispatch(int argc, char **argv);

/* MPI around everything (stream/mpi.h): one rank unless started by mpirun. */
int main(int argc, char **argv)
{
    if (sl_mpi_init(&argc, &argv) < 0) {
        fprintf(stderr, "seislive: %s\n", err_msg());
        return EXIT_USAGE;
    }
    return sl_mpi_finish(dispatch(argc, argv));
}

static int dispatch(int argc, char **argv)
{
    struct args a;
    if (parse_args(argc, argv, &a) < 0)
        return EXIT_USAGE;
    if (!a.command) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(a.command, "check") == 0)
        return cmd_check(&a);
    if (strcmp(a.command, "run") == 0)
        return cmd_run(&a, false);
    if (strcmp(a.command, "model") == 0) {
        if (!a.output) {
            fprintf(stderr, "seislive model: missing -o OUT.segy\ntry 'seislive --help'\n");
            return EXIT_USAGE;
        }
        return cmd_run(&a, true);
    }
    if (strcmp(a.command, "example") == 0) {
        config_print_example(stdout);
        return EXIT_OK;
    }
    if (strcmp(a.command, "reference") == 0) {
        config_print_reference(stdout);
        return EXIT_OK;
    }
    fprintf(stderr, "seislive: unknown command '%s'\ntry 'seislive --help'\n", a.command);
    return EXIT_USAGE;
}
