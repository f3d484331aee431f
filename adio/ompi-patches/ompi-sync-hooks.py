#!/usr/bin/env python3
"""Open MPI's counterpart of mpich-sync-hooks.patch: storage synchronization
hooks in Open MPI 5.0's C bindings (ompi/mpi/c), so that bbfs, inside the
romio341 component, learns of the order MPI itself imposes between processes.

usage: ompi-sync-hooks.py OPEN_MPI_SOURCE_TREE

MPICH generates its bindings, so its patch changes the generator.  Open MPI
5.0 writes each binding by hand (one file a function, ompi/mpi/c/NAME.c, built
once as PMPI_NAME with MPI_NAME a weak alias), so this script does to each
file what the generator does: the function becomes a static body, and a
wrapper of the same name runs the release before it and the acquire after it.
Which function runs which hook follows the MPICH patch, function for function
(see its comment in binding_c.py, and ompi_sync_hooks.h that this adds).
The hooks' state (ompi_sync_hooks.h) is defined in ompi/runtime/ompi_mpi_init.c
(ompi-sync-hooks.patch), so no Makefile.am changes.

A file already rewritten is left alone: running this twice changes nothing.
"""
import os
import re
import sys

COLLECTIVES = ['allgather', 'allgatherv', 'allreduce', 'alltoall', 'alltoallv', 'alltoallw',
               'barrier', 'bcast', 'exscan', 'gather', 'gatherv', 'reduce',
               'reduce_scatter', 'reduce_scatter_block', 'scan', 'scatter', 'scatterv',
               'neighbor_allgather', 'neighbor_allgatherv', 'neighbor_alltoall',
               'neighbor_alltoallv', 'neighbor_alltoallw']
SENDS = ['send', 'bsend', 'ssend', 'rsend', 'isend', 'ibsend', 'issend', 'irsend',
         'sendrecv', 'sendrecv_replace', 'isendrecv', 'isendrecv_replace']
RECEIVES = ['recv', 'mrecv', 'sendrecv', 'sendrecv_replace']
COMPLETIONS = ['wait', 'waitall', 'waitany', 'waitsome', 'test', 'testall', 'testany', 'testsome']
CREATES = ['comm_create', 'comm_create_group', 'comm_create_from_group', 'comm_dup',
           'comm_dup_with_info', 'comm_split', 'comm_split_type', 'intercomm_create',
           'intercomm_create_from_groups', 'intercomm_merge', 'cart_create', 'cart_sub',
           'graph_create', 'dist_graph_create', 'dist_graph_create_adjacent',
           'win_create', 'win_allocate', 'win_allocate_shared', 'win_create_dynamic', 'win_free']
CREATES_NONBLOCKING = ['comm_idup', 'comm_idup_with_info']
RMA_MOVES = ['put', 'rput', 'accumulate', 'raccumulate', 'get_accumulate', 'rget_accumulate',
             'fetch_and_op', 'compare_and_swap']
RMA_SYNCS = ['win_fence', 'win_post', 'win_start', 'win_complete', 'win_wait', 'win_test',
             'win_lock', 'win_lock_all', 'win_unlock', 'win_unlock_all', 'win_flush',
             'win_flush_all', 'win_flush_local', 'win_flush_local_all', 'win_sync']


# A collective on a communicator of one process orders nothing between
# processes: MPICH returns from it before its hooks, and so do these.
ONE_PROCESS_SKIPS = set(COLLECTIVES) | set('i' + c for c in COLLECTIVES) | {'ibarrier'}


def hooks_by_file():
    hooks = {}
    def add(names, *kinds):
        for n in names:
            hooks.setdefault(n, set()).update(kinds)
    add(COLLECTIVES, 'release', 'acquire')
    add(['i' + c for c in COLLECTIVES] + ['ibarrier'], 'release')
    add(SENDS + ['start', 'startall'] + CREATES_NONBLOCKING + RMA_MOVES, 'release')
    add(RECEIVES + COMPLETIONS, 'acquire')
    add(CREATES + RMA_SYNCS, 'release', 'acquire')
    return hooks


def arg_names(params):
    """The names of a C parameter list's parameters ('void' has none)."""
    names, depth, cur = [], 0, ''
    for ch in params + ',':
        if ch == ',' and depth == 0:
            p = cur.strip()
            cur = ''
            if p and p != 'void':
                m = re.search(r'([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])*\s*$', p)
                if not m:
                    raise ValueError('cannot name parameter: ' + p)
                names.append(m.group(1))
            continue
        depth += ch in '(['
        depth -= ch in ')]'
        cur += ch
    return names


def rewrite(path, name, kinds):
    text = open(path).read()
    if 'ompi_sync_hooked_body' in text:
        return False
    fn = 'MPI_' + name[0].upper() + name[1:]
    m = re.search(r'^int\s+' + re.escape(fn) + r'\s*\(([^)]*)\)\s*\{', text, re.M | re.I)
    if not m:
        raise ValueError('%s: no definition of %s' % (path, fn))
    params = ' '.join(m.group(1).split())
    call = 'ompi_sync_hooked_body(%s)' % ', '.join(arg_names(params))
    wrapper = ['static int ompi_sync_hooked_body(%s);' % params, '',
               '/* Storage synchronization hooks (ompi/runtime/ompi_sync_hooks.h). */',
               text[m.start():m.end()].split('(')[0] + '(' + params + ')', '{']
    cond = '1'
    if name in ONE_PROCESS_SKIPS:
        if 'comm' not in arg_names(params):
            raise ValueError('%s: a collective without a comm parameter' % path)
        cond = 'OMPI_SYNC_COMM_ORDERS(comm)'
    if 'release' in kinds:
        wrapper.append('    OMPI_SYNC_RELEASE_IF(%s);' % cond)
    if 'acquire' in kinds:
        wrapper += ['    int ret = %s;' % call, '    OMPI_SYNC_ACQUIRE_IF(%s);' % cond,
                    '    return ret;']
    else:
        wrapper.append('    return %s;' % call)
    wrapper += ['}', '', 'static int ompi_sync_hooked_body(%s)' % params, '{']
    text = text[:m.start()] + '\n'.join(wrapper) + text[m.end():]
    with open(path, 'w') as f:
        f.write(text)
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: ompi-sync-hooks.py OPEN_MPI_SOURCE_TREE')
    cdir = os.path.join(sys.argv[1], 'ompi', 'mpi', 'c')
    count = 0
    for name, kinds in sorted(hooks_by_file().items()):
        path = os.path.join(cdir, name + '.c')
        if not os.path.exists(path):
            sys.exit('ompi-sync-hooks.py: %s is missing: not an Open MPI 5.0 tree?' % path)
        count += rewrite(path, name, kinds)
    print('ompi-sync-hooks.py: %d bindings hooked' % count)


if __name__ == '__main__':
    main()
