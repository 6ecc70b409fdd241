#include "conf/suggest.h"

#include <ctype.h>
#include <string.h>

int suggest_distance(const char *a, const char *b)
{
    /* Damerau-Levenshtein (optimal string alignment), case-insensitive. Keys are short. */
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 1000;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

const char *suggest_closest(const char *word, const void *candidates, size_t n, size_t stride)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    for (size_t k = 0; k < n; k++) {
        const char *c = *(const char *const *)((const char *)candidates + k * stride);
        if (!c)
            break;
        int dist = suggest_distance(word, c);
        if (dist < best_d) {
            best_d = dist;
            best = c;
        }
    }
    int len = (int)strlen(word);
    int limit = len / 3 > 1 ? len / 3 : 1;
    if (len >= 6 && limit < 2)
        limit = 2;
    return best_d <= limit ? best : NULL;
}
