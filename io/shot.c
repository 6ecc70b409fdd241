/* shot — the content digest of a shot (see shot.h). */
#include "io/shot.h"

#include <string.h>

/* One 64-bit word into the running hash: multiply-xorshift rounds (the mixing of
 * splitmix64). */
static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

/* Four independent lanes over 32-byte blocks (the multiplies of one lane do not wait
 * on another's), folded together at the end; the tail word by word. */
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t l[4] = {h, h ^ 0x2545f4914f6cdd1dULL, h ^ 0x9e3779b97f4a7c15ULL,
                     h ^ 0xd6e8feb86659fd93ULL};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, c + i + 8 * (size_t)k, 8);
            l[k] = (l[k] ^ w) * 0xbf58476d1ce4e5b9ULL;
            l[k] ^= l[k] >> 29;
        }
    h = mix(mix(mix(mix(h, l[0]), l[1]), l[2]), l[3]);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = mix(h, w);
    }
    uint64_t w = 0;
    if (i < n) {
        memcpy(&w, c + i, n - i);
        h = mix(h, w ^ ((uint64_t)(n - i) << 56));
    }
    return mix(h, (uint64_t)n);
}

uint64_t shot_digest(const struct shot *s)
{
    uint64_t h = mix(0x5eed5eed5eed5eedULL, (uint64_t)s->id);
    uint64_t dt;
    memcpy(&dt, &s->dt, 8);
    h = mix(h, (uint64_t)(uint32_t)s->ns << 32 | (uint32_t)s->ntr);
    h = mix(h, dt);
    h = mix_bytes(h, s->src, sizeof s->src);
    if (s->ntr > 0 && s->rec)
        h = mix_bytes(h, s->rec, (size_t)s->ntr * 3 * sizeof(float));
    if (s->ntr > 0 && s->ns > 0 && s->data)
        h = mix_bytes(h, s->data, (size_t)s->ntr * (size_t)s->ns * sizeof(float));
    return h ? h : 1; /* 0 stands for "unknown" in the ledger */
}
