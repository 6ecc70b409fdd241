/* The pipeline benchmark's burn kernel (tools/burn.cu), compiled into gpu-tests: the
 * runtime's GPU test computes with it.  One kernel text, included, not copied. */
#include "tools/burn.cu"
