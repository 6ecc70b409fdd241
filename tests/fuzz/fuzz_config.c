/* fuzz_config — a TOML file through the real loader (conf/config.c config_load: the
 * toml++ bridge, the schema, the cross-key checks, file:line errors), then what the
 * program does with a loaded configuration: print it and fingerprint it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf/config.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

int fuzz_config(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    int rc = fuzz_write("fuzz-input.toml", data, size);
    if (rc)
        return err_set(rc, "fuzz-input.toml: cannot write the input");
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz-input.toml", fuzz_dir());
    struct sl_config cfg;
    rc = config_load(path, &cfg);
    if (!rc) {
        static FILE *null;
        if (!null)
            null = fopen("/dev/null", "w");
        if (null)
            config_print(&cfg, null);
        (void)config_fingerprint(&cfg);
    }
    config_free(&cfg);
    return rc;
}
