/*
 * bbserver's client side (bbserver/ucx.c, client.c) as built into the
 * driver: every UCX call goes through the table bbserver/ucx_dl.c fills
 * with dlopen, so libmpi needs no UCX at link time and a program loads it
 * only when a file uses a server.
 */
#define BBS_UCX_DLOPEN 1
#include "../../bbserver/ucx.c"
#include "../../bbserver/client.c"
