/*
 * An intrusive red-black tree: the balancing only.  Users embed a struct
 * logfs_rb_node in their own node, do their own key search, and link the new
 * node where the search ended.  The colour lives in the low bit of the parent
 * pointer so a node costs three words; the range map depends on that to stay
 * under 64 bytes per extent.
 */
#ifndef LOGFS_RBTREE_H
#define LOGFS_RBTREE_H

#include <stddef.h>
#include <stdint.h>

struct logfs_rb_node {
    uintptr_t parent_color;         /* parent pointer | 1 if black */
    struct logfs_rb_node *child[2]; /* [0] = left (smaller), [1] = right */
};

struct logfs_rb_tree {
    struct logfs_rb_node *root;
};

static inline struct logfs_rb_node *logfs_rb_parent(const struct logfs_rb_node *n)
{
    return (struct logfs_rb_node *)(n->parent_color & ~(uintptr_t)1);
}

/*
 * Link @p node as child @p dir (0 left, 1 right) of @p parent, which must
 * have no such child (parent NULL: the tree must be empty), then rebalance.
 */
void logfs_rb_link(struct logfs_rb_tree *t, struct logfs_rb_node *parent, int dir,
                   struct logfs_rb_node *node);

/* Link @p node immediately after @p at in order, then rebalance. */
void logfs_rb_link_after(struct logfs_rb_tree *t, struct logfs_rb_node *at,
                         struct logfs_rb_node *node);

/* Link @p node immediately before @p at in order, then rebalance. */
void logfs_rb_link_before(struct logfs_rb_tree *t, struct logfs_rb_node *at,
                          struct logfs_rb_node *node);

/* Unlink @p node and rebalance; the node's memory is the caller's. */
void logfs_rb_erase(struct logfs_rb_tree *t, struct logfs_rb_node *node);

/* In-order navigation; NULL past either end. */
struct logfs_rb_node *logfs_rb_first(const struct logfs_rb_tree *t);
struct logfs_rb_node *logfs_rb_last(const struct logfs_rb_tree *t);
struct logfs_rb_node *logfs_rb_next(const struct logfs_rb_node *n);
struct logfs_rb_node *logfs_rb_prev(const struct logfs_rb_node *n);

/* Check the red-black invariants; @return black height, or -1 if broken. */
int logfs_rb_check(const struct logfs_rb_tree *t);

#endif
