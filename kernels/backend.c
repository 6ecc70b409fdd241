#define LOG_COMPONENT "backend"
#include "kernels/backend.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/log.h"

bool backend_cuda_compiled(void)
{
#ifdef SEISLIVE_CUDA
    return true;
#else
    return false;
#endif
}

int backend_cuda_count(char *why, size_t why_len)
{
#ifdef SEISLIVE_CUDA
    return cuda_device_count(why, why_len);
#else
    if (why)
        snprintf(why, why_len, "this binary was built without CUDA (make CUDA=0 or no nvcc)");
    return 0;
#endif
}

int backend_parse(const char *spec, bool *is_auto, enum sl_device_kind *kind, int *index)
{
    *is_auto = false;
    *kind = SL_DEVICE_CPU;
    *index = -1;
    if (strcmp(spec, "auto") == 0) {
        *is_auto = true;
        return 0;
    }
    if (strcmp(spec, "cpu") == 0)
        return 0;
    if (strncmp(spec, "cuda:", 5) == 0 && spec[5] >= '0' && spec[5] <= '9') {
        char *end;
        long v = strtol(spec + 5, &end, 10);
        if (*end == '\0' && v >= 0 && v < 1024) {
            *kind = SL_DEVICE_CUDA;
            *index = (int)v;
            return 0;
        }
    }
    return err_set(-EINVAL, "device \"%s\" is not \"auto\", \"cpu\" or \"cuda:N\"", spec);
}

static void cpu_device(struct sl_device *out)
{
    memset(out, 0, sizeof *out);
    out->kind = SL_DEVICE_CPU;
    out->index = -1;
    snprintf(out->name, sizeof out->name, "CPU (%d OpenMP threads)", omp_get_max_threads());
}

int backend_select(const char *spec, struct sl_device *out)
{
    bool is_auto;
    enum sl_device_kind kind;
    int index;
    int rc = backend_parse(spec, &is_auto, &kind, &index);
    if (rc < 0)
        return rc;

    char why[256] = "";
    if (kind == SL_DEVICE_CPU && !is_auto) {
        cpu_device(out);
        log_info("device: %s (asked for \"cpu\")", out->name);
        return 0;
    }
    int n = backend_cuda_count(why, sizeof why);
    if (is_auto) {
        if (n <= 0) {
            cpu_device(out);
            log_info("device: %s — auto found no usable GPU: %s", out->name, why);
            return 0;
        }
        index = 0;
    } else if (n <= index) {
        if (n == 0)
            return err_set(-ENODEV, "device \"%s\" asked for, but no CUDA GPU is usable: %s",
                           spec, why);
        return err_set(-ENODEV, "device \"%s\" asked for, but only %d CUDA GPU%s present",
                       spec, n, n == 1 ? " is" : "s are");
    }
#ifdef SEISLIVE_CUDA
    rc = cuda_device_query(index, out);
    if (rc < 0)
        return err_prefix(rc, "device \"%s\"", spec);
    log_info("device: cuda:%d %s (sm_%d%d, %d SMs, %.1f of %.1f GiB free)%s", index, out->name,
             out->cc_major, out->cc_minor, out->sm_count, out->mem_free / 1073741824.0,
             out->mem_total / 1073741824.0, is_auto ? " — chosen by auto" : "");
    return 0;
#else
    return err_set(-ENODEV, "device \"%s\": built without CUDA", spec);
#endif
}

int backend_bind(const struct sl_device *dev)
{
#ifdef SEISLIVE_CUDA
    if (dev->kind == SL_DEVICE_CUDA)
        return cuda_device_bind(dev->index);
#endif
    (void)dev;
    return 0;
}

int backend_mem_info(struct sl_device *dev)
{
#ifdef SEISLIVE_CUDA
    if (dev->kind == SL_DEVICE_CUDA)
        return cuda_device_mem(dev->index, &dev->mem_free, &dev->mem_total);
#endif
    (void)dev;
    return 0;
}
