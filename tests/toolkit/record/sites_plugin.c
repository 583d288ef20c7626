/* record_sites_plugin: a library sites_program loads with dlopen, calls and unloads
   (record_sites_test): plugin_alloc mallocs 5 x 777 bytes on the line marked "site:". */
#include <stdlib.h>

static void* volatile gSink;

__attribute__((noinline)) void plugin_alloc(void) {
  for (int i = 0; i < 5; ++i) {
    void* p = malloc(777); /* site: plugin_alloc */
    gSink = p;
    free(p);
  }
}
