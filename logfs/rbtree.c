/*
 * Red-black balancing after CLRS, with NULL leaves (a deleted black node's
 * replacement may be NULL, so the fix-up carries its parent explicitly).
 */
#include "rbtree.h"

#define BLACK ((uintptr_t)1)

static inline int is_red(const struct logfs_rb_node *n)
{
    return n && !(n->parent_color & BLACK);
}

static inline void set_black(struct logfs_rb_node *n)
{
    n->parent_color |= BLACK;
}

static inline void set_red(struct logfs_rb_node *n)
{
    n->parent_color &= ~BLACK;
}

static inline void set_parent(struct logfs_rb_node *n, struct logfs_rb_node *p)
{
    n->parent_color = (uintptr_t)p | (n->parent_color & BLACK);
}

static inline void copy_color(struct logfs_rb_node *to, const struct logfs_rb_node *from)
{
    to->parent_color = (to->parent_color & ~BLACK) | (from->parent_color & BLACK);
}

/* Put @p v where @p u hangs (v may be NULL). */
static void replace_child(struct logfs_rb_tree *t, struct logfs_rb_node *u, struct logfs_rb_node *v)
{
    struct logfs_rb_node *p = logfs_rb_parent(u);
    if (!p)
        t->root = v;
    else
        p->child[p->child[1] == u] = v;
    if (v)
        set_parent(v, p);
}

/* Move @p x down to side @p dir; its child on the other side comes up. */
static void rotate(struct logfs_rb_tree *t, struct logfs_rb_node *x, int dir)
{
    struct logfs_rb_node *y = x->child[!dir];
    x->child[!dir] = y->child[dir];
    if (y->child[dir])
        set_parent(y->child[dir], x);
    replace_child(t, x, y);
    y->child[dir] = x;
    set_parent(x, y);
}

static void insert_fixup(struct logfs_rb_tree *t, struct logfs_rb_node *n)
{
    struct logfs_rb_node *p;
    while ((p = logfs_rb_parent(n)) && is_red(p)) {
        struct logfs_rb_node *g = logfs_rb_parent(p); /* exists: the root is black */
        int pd = g->child[1] == p;
        struct logfs_rb_node *u = g->child[!pd];
        if (is_red(u)) {
            set_black(p);
            set_black(u);
            set_red(g);
            n = g;
            continue;
        }
        if (p->child[!pd] == n) {
            rotate(t, p, pd);
            n = p;
            p = logfs_rb_parent(n);
        }
        rotate(t, g, !pd);
        set_black(p);
        set_red(g);
        break;
    }
    set_black(t->root);
}

void logfs_rb_link(struct logfs_rb_tree *t, struct logfs_rb_node *parent, int dir,
                   struct logfs_rb_node *node)
{
    node->parent_color = (uintptr_t)parent; /* red */
    node->child[0] = node->child[1] = NULL;
    if (parent)
        parent->child[dir] = node;
    else
        t->root = node;
    insert_fixup(t, node);
}

void logfs_rb_link_after(struct logfs_rb_tree *t, struct logfs_rb_node *at,
                         struct logfs_rb_node *node)
{
    if (!at->child[1]) {
        logfs_rb_link(t, at, 1, node);
        return;
    }
    at = at->child[1];
    while (at->child[0])
        at = at->child[0];
    logfs_rb_link(t, at, 0, node);
}

void logfs_rb_link_before(struct logfs_rb_tree *t, struct logfs_rb_node *at,
                          struct logfs_rb_node *node)
{
    if (!at->child[0]) {
        logfs_rb_link(t, at, 0, node);
        return;
    }
    at = at->child[0];
    while (at->child[1])
        at = at->child[1];
    logfs_rb_link(t, at, 1, node);
}

static void erase_fixup(struct logfs_rb_tree *t, struct logfs_rb_node *x, struct logfs_rb_node *xp)
{
    while (x != t->root && !is_red(x)) {
        int dir = xp->child[1] == x;
        struct logfs_rb_node *w = xp->child[!dir]; /* non-NULL: x's side is one black short */
        if (is_red(w)) {
            set_black(w);
            set_red(xp);
            rotate(t, xp, dir);
            w = xp->child[!dir];
        }
        if (!is_red(w->child[0]) && !is_red(w->child[1])) {
            set_red(w);
            x = xp;
            xp = logfs_rb_parent(x);
            continue;
        }
        if (!is_red(w->child[!dir])) {
            set_black(w->child[dir]);
            set_red(w);
            rotate(t, w, !dir);
            w = xp->child[!dir];
        }
        copy_color(w, xp);
        set_black(xp);
        set_black(w->child[!dir]);
        rotate(t, xp, dir);
        x = t->root;
        break;
    }
    if (x)
        set_black(x);
}

void logfs_rb_erase(struct logfs_rb_tree *t, struct logfs_rb_node *z)
{
    struct logfs_rb_node *x, *xp;
    int removed_black;

    if (!z->child[0] || !z->child[1]) {
        x = z->child[0] ? z->child[0] : z->child[1];
        xp = logfs_rb_parent(z);
        removed_black = !is_red(z);
        replace_child(t, z, x);
    } else {
        struct logfs_rb_node *y = z->child[1];
        while (y->child[0])
            y = y->child[0];
        removed_black = !is_red(y);
        x = y->child[1];
        if (logfs_rb_parent(y) == z) {
            xp = y;
        } else {
            xp = logfs_rb_parent(y);
            replace_child(t, y, x);
            y->child[1] = z->child[1];
            set_parent(y->child[1], y);
        }
        replace_child(t, z, y);
        y->child[0] = z->child[0];
        set_parent(y->child[0], y);
        copy_color(y, z);
    }
    if (removed_black)
        erase_fixup(t, x, xp);
}

static struct logfs_rb_node *extreme(struct logfs_rb_node *n, int dir)
{
    if (n)
        while (n->child[dir])
            n = n->child[dir];
    return n;
}

struct logfs_rb_node *logfs_rb_first(const struct logfs_rb_tree *t)
{
    return extreme(t->root, 0);
}

struct logfs_rb_node *logfs_rb_last(const struct logfs_rb_tree *t)
{
    return extreme(t->root, 1);
}

static struct logfs_rb_node *step(const struct logfs_rb_node *n, int dir)
{
    struct logfs_rb_node *p;
    if (n->child[dir])
        return extreme(n->child[dir], !dir);
    while ((p = logfs_rb_parent(n)) && p->child[dir] == n)
        n = p;
    return p;
}

struct logfs_rb_node *logfs_rb_next(const struct logfs_rb_node *n)
{
    return step(n, 1);
}

struct logfs_rb_node *logfs_rb_prev(const struct logfs_rb_node *n)
{
    return step(n, 0);
}

static int check(const struct logfs_rb_node *n, const struct logfs_rb_node *parent)
{
    int l, r;
    if (!n)
        return 1;
    if (logfs_rb_parent(n) != parent)
        return -1;
    if (is_red(n) && (is_red(n->child[0]) || is_red(n->child[1])))
        return -1;
    l = check(n->child[0], n);
    r = check(n->child[1], n);
    if (l < 0 || r < 0 || l != r)
        return -1;
    return l + !is_red(n);
}

int logfs_rb_check(const struct logfs_rb_tree *t)
{
    if (is_red(t->root))
        return -1;
    return check(t->root, NULL);
}
