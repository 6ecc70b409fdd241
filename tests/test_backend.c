/* Backend selection: auto falls back to the CPU only when no GPU is usable, and says
 * why; a GPU asked for by name that is absent is an error; bad specs are refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "stream/error.h"

Test(backend, parse)
{
    bool is_auto;
    enum sl_device_kind kind;
    int index;
    cr_assert_eq(backend_parse("auto", &is_auto, &kind, &index), 0);
    cr_assert(is_auto);
    cr_assert_eq(backend_parse("cpu", &is_auto, &kind, &index), 0);
    cr_assert(!is_auto);
    cr_assert_eq(kind, SL_DEVICE_CPU);
    cr_assert_eq(backend_parse("cuda:3", &is_auto, &kind, &index), 0);
    cr_assert_eq(kind, SL_DEVICE_CUDA);
    cr_assert_eq(index, 3);
    const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", "cuda:1x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(backend_parse(bad[i], &is_auto, &kind, &index), -EINVAL, "%s", bad[i]);
}

Test(backend, cpu_always_works)
{
    struct sl_device d;
    cr_assert_eq(backend_select("cpu", &d), 0);
    cr_assert_eq(d.kind, SL_DEVICE_CPU);
    cr_assert_not_null(strstr(d.name, "CPU"));
}

Test(backend, auto_and_named_gpu_follow_what_is_present)
{
    char why[256] = "";
    int n = backend_cuda_count(why, sizeof why);
    struct sl_device d;
    cr_assert_eq(backend_select("auto", &d), 0);
    if (n == 0) {
        cr_assert_eq(d.kind, SL_DEVICE_CPU, "auto without a GPU must give the CPU");
        cr_assert_neq(why[0], '\0', "no reason given for the absence of a GPU");
        cr_assert_eq(backend_select("cuda:0", &d), -ENODEV);
        cr_assert_not_null(strstr(err_msg(), "device \"cuda:0\" asked for, but no CUDA GPU is usable"),
                           "%s", err_msg());
    } else {
        cr_assert_eq(d.kind, SL_DEVICE_CUDA);
        cr_assert_eq(d.index, 0);
        cr_assert_gt(d.mem_total, 0);
        char spec[32];
        snprintf(spec, sizeof spec, "cuda:%d", n);
        cr_assert_eq(backend_select(spec, &d), -ENODEV);
        cr_assert_not_null(strstr(err_msg(), "present"), "%s", err_msg());
    }
}

/* The host memory the RTM plan may take for strips and traces (MemAvailable, capped by a
 * cgroup limit where one is set): known, no more than the machine has, and what the CPU
 * device reports as its free memory (two readings: within 5 % of the machine). */
Test(backend, host_available_memory_is_bounded_by_the_machine)
{
    size_t av = dev_host_available();
    long page = sysconf(_SC_PAGESIZE), all = sysconf(_SC_PHYS_PAGES);
    cr_assert(page > 0 && all > 0);
    const double machine = (double)page * (double)all;
    cr_assert_gt(av, 0, "host memory available: unknown");
    cr_assert_leq((double)av, machine, "available %zu B exceeds the machine's %.0f B", av, machine);
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    size_t fr = 0, tot = 0;
    cr_assert_eq(dev_mem(&dev, &fr, &tot), 0, "%s", err_msg());
    cr_assert_leq(fabs((double)fr - (double)av), 0.05 * machine, "CPU device free %zu B, available %zu B", fr, av);
    cr_assert_leq(fr, tot);
}
