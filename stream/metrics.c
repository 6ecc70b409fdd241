#include "stream/metrics.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void metrics_init(struct metrics *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->current = -1;
    m->gpu_free_mib = -1;
    m->gpu_total_mib = -1;
    m->units_total = -1;
    m->t_start = now_s();
}

void metrics_destroy(struct metrics *m)
{
    pthread_mutex_destroy(&m->mu);
}

void metrics_add(struct metrics *m, enum metric_stage s, double seconds)
{
    pthread_mutex_lock(&m->mu);
    struct stage_stats *st = &m->st[s];
    st->window[st->n % METRICS_WINDOW] = (float)seconds;
    st->n++;
    st->sum += seconds;
    st->last = seconds;
    if (seconds > st->max)
        st->max = seconds;
    pthread_mutex_unlock(&m->mu);
}

void metrics_get(struct metrics *m, struct metrics *out)
{
    pthread_mutex_lock(&m->mu);
    memcpy(out, m, sizeof *out);
    pthread_mutex_unlock(&m->mu);
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double metrics_percentile(const struct metrics *m, enum metric_stage s, double p)
{
    const struct stage_stats *st = &m->st[s];
    size_t n = st->n < METRICS_WINDOW ? (size_t)st->n : METRICS_WINDOW;
    if (!n)
        return 0;
    float tmp[METRICS_WINDOW];
    memcpy(tmp, st->window, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_f);
    size_t k = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return tmp[k < n ? k : n - 1];
}

void metrics_print(struct metrics *mm, FILE *out)
{
    struct metrics m;
    metrics_get(mm, &m);
    fprintf(out, "| stage | units | mean ms | p50 ms | p95 ms | max ms |\n"
                 "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int s = 0; s < ST_N; s++) {
        const struct stage_stats *st = &m.st[s];
        if (!st->n)
            continue;
        fprintf(out, "| %s | %llu | %.3f | %.3f | %.3f | %.3f |\n", metric_stage_name(s),
                (unsigned long long)st->n, 1e3 * st->sum / (double)st->n,
                1e3 * metrics_percentile(&m, s, 50), 1e3 * metrics_percentile(&m, s, 95),
                1e3 * st->max);
    }
    fprintf(out, "\nunits %llu, skipped %llu, received %llu, rejected %llu, published %llu, "
                 "dropped %llu (queue full %llu, refused %llu, send failed %llu), %.1f s\n",
            (unsigned long long)m.units, (unsigned long long)m.skipped,
            (unsigned long long)m.received, (unsigned long long)m.rejected,
            (unsigned long long)m.published,
            (unsigned long long)(m.pub_dropped + m.pub_refused + m.pub_send_failed),
            (unsigned long long)m.pub_dropped, (unsigned long long)m.pub_refused,
            (unsigned long long)m.pub_send_failed, now_s() - m.t_start);
}
