/* device — see device.h; the CPU side and the dispatch here, the CUDA side in device.cu. */
#include "kernels/device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stream/error.h"

bool dev_is_gpu(const struct sl_device *dev) { return dev && dev->kind == SL_DEVICE_CUDA; }

#ifdef SEISLIVE_CUDA
#define ON_GPU(dev, call)                                                                    \
    do {                                                                                     \
        if (dev_is_gpu(dev))                                                                 \
            return call;                                                                     \
    } while (0)
#else
#define ON_GPU(dev, call)                                                                    \
    do {                                                                                     \
        if (dev_is_gpu(dev))                                                                 \
            return err_set(-ENODEV, "device: a CUDA device in a build without CUDA");        \
    } while (0)
#endif

int dev_alloc(const struct sl_device *dev, size_t bytes, void **out)
{
    *out = NULL;
    if (bytes == 0)
        bytes = 1;
    ON_GPU(dev, dev_cu_alloc(bytes, out));
    *out = malloc(bytes);
    if (!*out)
        return err_set(-ENOMEM, "device: cannot allocate %zu bytes of host memory", bytes);
    return 0;
}

void dev_free(const struct sl_device *dev, void *p)
{
    if (!p)
        return;
#ifdef SEISLIVE_CUDA
    if (dev_is_gpu(dev)) {
        dev_cu_free(p);
        return;
    }
#endif
    (void)dev;
    free(p);
}

int dev_zero(const struct sl_device *dev, void *p, size_t bytes, void *stream)
{
    if (!bytes)
        return 0;
    ON_GPU(dev, dev_cu_zero(p, bytes, stream));
    (void)stream;
    memset(p, 0, bytes);
    return 0;
}

int dev_fill_ff_2d(const struct sl_device *dev, void *p, size_t pitch, size_t width, size_t height)
{
    if (!width || !height)
        return 0;
    ON_GPU(dev, dev_cu_fill_ff_2d(p, pitch, width, height));
    for (size_t r = 0; r < height; r++)
        memset((char *)p + r * pitch, 0xff, width);
    return 0;
}

int dev_copy(const struct sl_device *dev, void *dst, const void *src, size_t bytes,
             enum dev_copy_kind kind, void *stream)
{
    if (!bytes)
        return 0;
    ON_GPU(dev, dev_cu_copy(dst, src, bytes, (int)kind, stream));
    (void)kind;
    (void)stream;
    memmove(dst, src, bytes);
    return 0;
}

int dev_copy_2d(const struct sl_device *dev, void *dst, size_t dpitch, const void *src, size_t spitch,
                size_t width, size_t height, enum dev_copy_kind kind)
{
    if (!width || !height)
        return 0;
    ON_GPU(dev, dev_cu_copy_2d(dst, dpitch, src, spitch, width, height, (int)kind));
    (void)kind;
    for (size_t r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return 0;
}

int dev_host_register(const struct sl_device *dev, void *p, size_t bytes)
{
    ON_GPU(dev, dev_cu_host_register(p, bytes));
    (void)p;
    (void)bytes;
    return 0;
}

int dev_host_unregister(const struct sl_device *dev, void *p)
{
    ON_GPU(dev, dev_cu_host_unregister(p));
    (void)p;
    return 0;
}

/* DEV_PIN_PIECES: the pieces BYTES is registered in, each a whole number of UNIT bytes
 * (the last takes the rest): *N pieces of *SIZE bytes, piece k at k * *SIZE.  Eight:
 * measured on the H100's host (seislive-bench rtm --pin-probe 8), eight threads register
 * 8 GiB at 40 GiB/s where one registers it at 9. */
#ifdef SEISLIVE_CUDA
#define PIN_PIECES 8
static void pieces_of(size_t bytes, size_t unit, int *n, size_t *size)
{
    if (unit == 0)
        unit = 1;
    const size_t units = (bytes + unit - 1) / unit;
    *size = (units + PIN_PIECES - 1) / PIN_PIECES * unit;
    *n = (int)((bytes + *size - 1) / *size);
}

/* DEV_PIN_REGISTER / _PIECES: map, touch every page from all threads, register (in
 * pieces, by as many threads, with PIECES). */
static int host_register_alloc(const struct sl_device *dev, size_t bytes, bool pieces, size_t unit, void **out)
{
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return err_set(-ENOMEM, "device: mmap of %.1f MiB of host memory: %s", bytes / 1048576.0, strerror(errno));
    /* huge pages: 512 times fewer faults and pinned pages (advice; ignored without THP) */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    const size_t chunk = (size_t)2 << 20;
    const long nchunks = (long)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        size_t at = (size_t)c * chunk, n = bytes - at < chunk ? bytes - at : chunk;
        memset(p + at, 0, n);
    }
    int n = 1;
    size_t size = bytes;
    if (pieces)
        pieces_of(bytes, unit, &n, &size);
    int ok[PIN_PIECES] = {0}, bad = 0;
    char why[256] = "";
#pragma omp parallel for num_threads(n) schedule(static, 1) reduction(+ : bad)
    for (int k = 0; k < n; k++) {
        const size_t at = (size_t)k * size, len = bytes - at < size ? bytes - at : size;
        /* a worker thread: the caller's device current here too */
        int rc = backend_bind(dev);
        if (rc == 0)
            rc = dev_cu_host_register(p + at, len);
        ok[k] = rc == 0;
        if (rc < 0) {
#pragma omp critical(pin_why)
            snprintf(why, sizeof why, "%s", err_msg());
            bad++;
        }
    }
    if (bad) {
        for (int k = 0; k < n; k++)
            if (ok[k])
                dev_cu_host_unregister(p + (size_t)k * size);
        munmap(p, bytes);
        return err_set(-ENOMEM, "device: pinning %.1f MiB of host memory (%d of %d pieces failed): %s",
                       bytes / 1048576.0, bad, n, why);
    }
    *out = p;
    return 0;
}
#endif

int dev_host_alloc(const struct sl_device *dev, size_t bytes, int how, size_t unit, void **out)
{
    *out = NULL;
    if (bytes == 0)
        bytes = 1;
    ON_GPU(dev, how == DEV_PIN_ALLOC ? dev_cu_host_alloc(bytes, out)
                                     : host_register_alloc(dev, bytes, how == DEV_PIN_PIECES, unit, out));
    (void)how;
    (void)unit;
    *out = malloc(bytes);
    if (!*out)
        return err_set(-ENOMEM, "device: cannot allocate %zu bytes of host memory", bytes);
    return 0;
}

void dev_host_free(const struct sl_device *dev, void *p, size_t bytes, int how, size_t unit)
{
    if (!p)
        return;
#ifdef SEISLIVE_CUDA
    if (dev_is_gpu(dev)) {
        /* the engine may be destroyed by a thread other than the one that pinned: make
         * the store's device current (pinned memory is portable under UVA, but the
         * unregister should not open a context on device 0) */
        (void)backend_bind(dev);
        if (how == DEV_PIN_ALLOC) {
            dev_cu_host_free(p);
            return;
        }
        if (bytes == 0)
            bytes = 1;
        int n = 1;
        size_t size = bytes;
        if (how == DEV_PIN_PIECES)
            pieces_of(bytes, unit, &n, &size);
        for (int k = 0; k < n; k++)
            dev_cu_host_unregister((char *)p + (size_t)k * size);
        munmap(p, bytes);
        return;
    }
#endif
    (void)dev;
    (void)bytes;
    (void)how;
    (void)unit;
    free(p);
}

/* The first number on the line of FILE that starts with KEY (KEY "" : the first line);
 * -1 if missing or not a number ("max": no limit). */
static double read_number(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[256];
    double v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0)
            continue;
        char *end;
        double x = strtod(line + kl, &end);
        if (end != line + kl && x >= 0)
            v = x;
        break;
    }
    fclose(f);
    return v;
}

size_t dev_host_available(void)
{
    double kb = read_number("/proc/meminfo", "MemAvailable:");
    double avail = kb >= 0 ? kb * 1024.0 : -1;
    if (avail < 0) {
        long page = sysconf(_SC_PAGESIZE), av = sysconf(_SC_AVPHYS_PAGES);
        if (page > 0 && av > 0)
            avail = (double)av * (double)page;
    }
    double lim = read_number("/sys/fs/cgroup/memory.max", ""), use = read_number("/sys/fs/cgroup/memory.current", "");
    if (lim < 0) { /* cgroup v1 (an unlimited one reports a huge number: harmless) */
        lim = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", "");
        use = read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", "");
    }
    if (lim >= 0 && use >= 0) {
        double left = lim > use ? lim - use : 0;
        if (avail < 0 || left < avail)
            avail = left;
    }
    return avail > 0 ? (size_t)avail : 0;
}

int dev_mem(const struct sl_device *dev, size_t *free_b, size_t *total_b)
{
    ON_GPU(dev, dev_cu_mem(free_b, total_b));
    long page = sysconf(_SC_PAGESIZE), all = sysconf(_SC_PHYS_PAGES);
    size_t av = dev_host_available();
    if (page <= 0 || av == 0 || all <= 0)
        return err_set(-EIO, "device: cannot query host memory");
    *free_b = av;
    *total_b = (size_t)all * (size_t)page;
    return 0;
}

int dev_uuid(const struct sl_device *dev, unsigned char out[16])
{
    ON_GPU(dev, dev_cu_uuid(dev->index, out));
    memset(out, 0, 16);
    return err_set(-ENODEV, "device: the CPU has no GPU UUID");
}

int dev_sync(const struct sl_device *dev)
{
    ON_GPU(dev, dev_cu_sync());
    return 0;
}

int dev_stream_create(const struct sl_device *dev, void **s)
{
    *s = NULL;
    ON_GPU(dev, dev_cu_stream_create(s));
    return 0;
}

void dev_stream_destroy(const struct sl_device *dev, void *s)
{
#ifdef SEISLIVE_CUDA
    if (dev_is_gpu(dev))
        dev_cu_stream_destroy(s);
#endif
    (void)dev;
    (void)s;
}

int dev_stream_sync(const struct sl_device *dev, void *s)
{
    ON_GPU(dev, dev_cu_stream_sync(s));
    (void)s;
    return 0;
}

int dev_stream_wait(const struct sl_device *dev, void *s, void *event)
{
    ON_GPU(dev, dev_cu_stream_wait(s, event));
    (void)s;
    (void)event;
    return 0;
}

int dev_event_create(const struct sl_device *dev, void **e, bool timing)
{
    *e = NULL;
    ON_GPU(dev, dev_cu_event_create(e, timing));
    (void)timing;
    return 0;
}

void dev_event_destroy(const struct sl_device *dev, void *e)
{
#ifdef SEISLIVE_CUDA
    if (dev_is_gpu(dev))
        dev_cu_event_destroy(e);
#endif
    (void)dev;
    (void)e;
}

int dev_event_record(const struct sl_device *dev, void *e, void *stream)
{
    ON_GPU(dev, dev_cu_event_record(e, stream));
    (void)e;
    (void)stream;
    return 0;
}

int dev_event_query(const struct sl_device *dev, void *e)
{
    ON_GPU(dev, dev_cu_event_query(e));
    (void)e;
    return 1;
}

int dev_event_sync(const struct sl_device *dev, void *e)
{
    ON_GPU(dev, dev_cu_event_sync(e));
    (void)e;
    return 0;
}

int dev_event_elapsed_ms(const struct sl_device *dev, void *start, void *end, float *ms)
{
    ON_GPU(dev, dev_cu_event_elapsed_ms(start, end, ms));
    (void)start;
    (void)end;
    *ms = 0.0f;
    return -ENOTSUP;
}
