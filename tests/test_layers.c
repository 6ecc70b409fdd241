/* The structural check itself (tests/layers.sh, run by `make test` on the repository):
 * on a scratch tree with planted includes it names every forbidden one with its file
 * and line and fails, lets the allowed ones pass, and succeeds on a clean tree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support.h"

static void put(const char *root, const char *name, const char *text)
{
    free(test_write_file(root, name, text));
}

static struct run_result run_layers(const char *root)
{
    const char *argv[] = {"/bin/bash", "tests/layers.sh", root, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0, "cannot run tests/layers.sh (from the repository's top folder)");
    return r;
}

Test(layers, forbidden_includes_are_named_with_file_and_line)
{
    char *root = test_tmpdir();
    char sub[3][512];
    const char *dirs[3] = {"kernels", "conf", "io"};
    for (int i = 0; i < 3; i++) {
        snprintf(sub[i], sizeof sub[i], "%s/%s", root, dirs[i]);
        cr_assert_eq(mkdir(sub[i], 0777), 0);
    }
    put(root, "kernels/k.c",
        "#include \"kernels/k.h\"\n"
        "#include \"stream/error.h\"\n"
        "#include \"conf/config.h\"\n"
        "  #  include \"stream/log.h\"\n"
        "#include <stdio.h>\n"
        "#include \"io/shot.h\"\n"
        "#include <stream/signals.h>\n");
    put(root, "kernels/k.h", "#include \"stream/signals.h\"\n");
    put(root, "kernels/k.cu", "#include \"kernels/cuda_check.h\"\n#include \"stream/pipeline.h\"\n");
    put(root, "conf/c.c", "#include \"conf/config.h\"\n#include \"io/wire.h\"\n#include \"kernels/backend.h\"\n");
    put(root, "io/s.c", "#include \"io/source.h\"\n#include \"stream/log.h\"\n#include \"stream/slots.h\"\n"
                        "#include \"kernels/locate_engine.h\"\n#include \"conf/config.h\"\n");
    struct run_result r = run_layers(root);
    cr_log_info("%s", r.out);
    cr_expect_eq(r.status, 1, "violations must fail the check (status %d)", r.status);
    const char *want[] = {"kernels/k.c:3: includes \"conf/config.h\"", "kernels/k.c:6: includes \"io/shot.h\"",
                          "kernels/k.c:7: includes \"stream/signals.h\"",
                          "kernels/k.h:1: includes \"stream/signals.h\"",
                          "kernels/k.cu:2: includes \"stream/pipeline.h\"",
                          "conf/c.c:3: includes \"kernels/backend.h\"", "io/s.c:3: includes \"stream/slots.h\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect_not_null(strstr(r.out, want[i]), "missing: %s\n%s", want[i], r.out);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 7, "exactly the seven violations, nothing allowed:\n%s", r.out);
    test_run_free(&r);

    /* the same tree with the violations taken out passes */
    put(root, "kernels/k.c", "#include \"kernels/k.h\"\n#include \"stream/error.h\"\n#include \"stream/log.h\"\n");
    put(root, "kernels/k.h", "#include <stddef.h>\n");
    put(root, "kernels/k.cu", "#include \"kernels/cuda_check.h\"\n");
    put(root, "conf/c.c", "#include \"conf/config.h\"\n#include \"io/wire.h\"\n");
    put(root, "io/s.c", "#include \"io/source.h\"\n#include \"stream/error.h\"\n#include \"kernels/stack.h\"\n");
    r = run_layers(root);
    cr_expect_eq(r.status, 0, "a clean tree must pass:\n%s%s", r.out, r.err);
    test_run_free(&r);
    test_rmtree(root);
    free(root);
}
