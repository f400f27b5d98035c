/* tf_dl_a.so (t850, tf_dlopen): one hot site, `mov $110,%eax; syscall`
 * (getppid). tf_dl_b.S has the same size and layout with another number. */
#define NR 110
#include "tf_dl.inc"
