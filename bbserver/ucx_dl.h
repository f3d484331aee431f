/*
 * UCX through dlopen, for the client inside libmpi (the driver): an MPI
 * program loads UCX only when a bbfs file actually uses a server, and
 * MPICH's build needs no new library.  Defining BBS_UCX_DLOPEN before
 * including ucx.h turns every UCX call of ucx.c and client.c into a call
 * through this table, filled by bbs_ucx_load().  bbserver and bbsctl link
 * UCX as usual.
 */
#ifndef BBSERVER_UCX_DL_H
#define BBSERVER_UCX_DL_H

#include <stddef.h>

#include <ucp/api/ucp.h>

/* X(name): every UCX function the client side calls. */
#define BBS_UCX_FUNCS(X) \
    X(ucp_am_recv_data_nbx) X(ucp_am_send_nbx) X(ucp_cleanup) X(ucp_config_modify) \
    X(ucp_config_read) X(ucp_config_release) X(ucp_ep_close_nbx) X(ucp_ep_create) X(ucp_init_version) \
    X(ucp_request_cancel) X(ucp_request_check_status) X(ucp_request_free) \
    X(ucp_worker_arm) X(ucp_worker_create) X(ucp_worker_destroy) X(ucp_worker_get_efd) \
    X(ucp_worker_progress) X(ucp_worker_set_am_recv_handler) X(ucs_status_string)

struct bbs_ucx_fns {
#define BBS_UCX_FIELD(name) __typeof__(name) *name;
    BBS_UCX_FUNCS(BBS_UCX_FIELD)
#undef BBS_UCX_FIELD
};

extern struct bbs_ucx_fns bbs_ucx_fns;

/* Load libucp and fill the table (once).  @return 0, or -1 with why. */
int bbs_ucx_load(char *err, size_t errlen);

#ifdef BBS_UCX_DLOPEN
#define ucp_am_recv_data_nbx (*bbs_ucx_fns.ucp_am_recv_data_nbx)
#define ucp_am_send_nbx (*bbs_ucx_fns.ucp_am_send_nbx)
#define ucp_cleanup (*bbs_ucx_fns.ucp_cleanup)
#define ucp_config_modify (*bbs_ucx_fns.ucp_config_modify)
#define ucp_config_read (*bbs_ucx_fns.ucp_config_read)
#define ucp_config_release (*bbs_ucx_fns.ucp_config_release)
#define ucp_ep_close_nbx (*bbs_ucx_fns.ucp_ep_close_nbx)
#define ucp_ep_create (*bbs_ucx_fns.ucp_ep_create)
#define ucp_init_version (*bbs_ucx_fns.ucp_init_version)
#define ucp_request_cancel (*bbs_ucx_fns.ucp_request_cancel)
#define ucp_request_check_status (*bbs_ucx_fns.ucp_request_check_status)
#define ucp_request_free (*bbs_ucx_fns.ucp_request_free)
#define ucp_worker_arm (*bbs_ucx_fns.ucp_worker_arm)
#define ucp_worker_create (*bbs_ucx_fns.ucp_worker_create)
#define ucp_worker_destroy (*bbs_ucx_fns.ucp_worker_destroy)
#define ucp_worker_get_efd (*bbs_ucx_fns.ucp_worker_get_efd)
#define ucp_worker_progress (*bbs_ucx_fns.ucp_worker_progress)
#define ucp_worker_set_am_recv_handler (*bbs_ucx_fns.ucp_worker_set_am_recv_handler)
#define ucs_status_string (*bbs_ucx_fns.ucs_status_string)
#endif

#endif
