/*
 * Loading UCX at run time (see ucx_dl.h).  Built into the driver only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#undef BBS_UCX_DLOPEN          /* the table itself, not calls through it */
#include "ucx_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct bbs_ucx_fns bbs_ucx_fns;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void)
{
    /* libucp pulls in libucs; both are Debian's libucx0 */
    void *ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_GLOBAL);
    void *ucs = ucp ? dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!ucp || !ucs) {
        snprintf(load_error, sizeof(load_error), "cannot load UCX (%s): bbfs needs it to "
                 "talk to bbserver across nodes (Debian: libucx0)", dlerror());
        return;
    }
#define BBS_UCX_LOAD(name)                                                      \
    if (!load_error[0]) {                                                       \
        *(void **) &bbs_ucx_fns.name = dlsym(ucp, #name);                       \
        if (!bbs_ucx_fns.name)                                                  \
            *(void **) &bbs_ucx_fns.name = dlsym(ucs, #name);                   \
        if (!bbs_ucx_fns.name)                                                  \
            snprintf(load_error, sizeof(load_error), "UCX lacks %s: bbfs needs "   \
                     "UCX 1.13 or later", #name);                               \
    }
    BBS_UCX_FUNCS(BBS_UCX_LOAD)
#undef BBS_UCX_LOAD
}

int bbs_ucx_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (load_error[0]) {
        snprintf(err, errlen, "%s", load_error);
        return -1;
    }
    return 0;
}
