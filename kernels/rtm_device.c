/* rtm_device — see rtm_device.h; CPU side here, CUDA side in rtm_device.cu. */
#include "kernels/rtm_device.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/error.h"

static bool gpu(const struct sl_device *dev) { return dev->kind == SL_DEVICE_CUDA; }

int rtm_dev_alloc(const struct sl_device *dev, size_t bytes, void **out)
{
    *out = NULL;
    if (bytes == 0)
        bytes = 1;
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_alloc(bytes, out);
#endif
    if (gpu(dev))
        return err_set(-ENODEV, "rtm: CUDA device in a build without CUDA");
    *out = malloc(bytes);
    if (!*out)
        return err_set(-ENOMEM, "rtm: %zu bytes of host memory", bytes);
    return 0;
}

void rtm_dev_free(const struct sl_device *dev, void *p)
{
    if (!p)
        return;
#ifdef SEISLIVE_CUDA
    if (gpu(dev)) {
        rtm_cu_free(p);
        return;
    }
#endif
    (void)dev;
    free(p);
}

int rtm_dev_zero(const struct sl_device *dev, void *p, size_t bytes)
{
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_zero(p, bytes);
#endif
    (void)dev;
    memset(p, 0, bytes);
    return 0;
}

int rtm_dev_put(const struct sl_device *dev, void *dst, const void *host, size_t bytes)
{
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_put(dst, host, bytes);
#endif
    (void)dev;
    memcpy(dst, host, bytes);
    return 0;
}

int rtm_dev_get(const struct sl_device *dev, void *host, const void *src, size_t bytes)
{
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_get(host, src, bytes);
#endif
    (void)dev;
    memcpy(host, src, bytes);
    return 0;
}

int rtm_dev_sync(const struct sl_device *dev)
{
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_sync();
#endif
    (void)dev;
    return 0;
}

int rtm_dev_mem(const struct sl_device *dev, size_t *free_b, size_t *total_b)
{
#ifdef SEISLIVE_CUDA
    if (gpu(dev))
        return rtm_cu_mem(free_b, total_b);
#endif
    (void)dev;
    long page = sysconf(_SC_PAGESIZE), av = sysconf(_SC_AVPHYS_PAGES), all = sysconf(_SC_PHYS_PAGES);
    if (page <= 0 || av < 0 || all <= 0)
        return err_set(-EIO, "rtm: cannot query host memory");
    *free_b = (size_t)av * (size_t)page;
    *total_b = (size_t)all * (size_t)page;
    return 0;
}
