/* libfuzzer_main — the libFuzzer entry point of one target, chosen at compile time
 * (-DFUZZ_FN=fuzz_wire); only `make fuzz` (clang -fsanitize=fuzzer) builds it. */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)FUZZ_FN(data, size); /* rejecting an input is a normal outcome */
    return 0;
}
