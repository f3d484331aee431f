/* Fault points (fault.h).  The one piece of mutable global state in logfs,
 * and only for tests: the armed point and its pass count. */
#define _GNU_SOURCE
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { UNREAD, OFF, ARMED, SPENT };
/* Short-write actions and the pause, below any errno. */
enum { PAUSE = -5, SHORT_HALF, SHORT_ONE, SHORT_ALL_BUT_ONE };

static struct {
    int state;
    char point[64];
    long nth, passes;
    int action; /* 0: kill, SHORT_*, else errno */
    int once;
    int said; /* a short write was announced */
} armed;

static const struct {
    const char *name;
    int err;
} actions[] = {{"kill", 0},         {"ENOSPC", ENOSPC},       {"EIO", EIO},
               {"ENOMEM", ENOMEM},  {"short", SHORT_HALF},    {"short1", SHORT_ONE},
               {"short-1", SHORT_ALL_BUT_ONE}, {"pause", PAUSE}};

static void arm(void)
{
    const char *spec = getenv("BBFS_FAULT"), *rank = getenv("BBFS_FAULT_RANK");
    /* (the process's rank as its launcher tells it: MPICH's hydra sets
     * PMI_RANK, Open MPI's PRRTE PMIX_RANK) */
    const char *me = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("PMIX_RANK");
    char s[128], *point, *action, *when, *hash;
    armed.state = OFF;
    if (!spec || !*spec)
        return;
    if (rank && *rank && (!me || strcmp(rank, me) != 0))
        return;
    snprintf(s, sizeof s, "%s", spec);
    point = strtok(s, ":");
    action = strtok(NULL, ":");
    when = strtok(NULL, ":");
    if (point && (hash = strchr(point, '#'))) {
        *hash = '\0';
        armed.nth = strtol(hash + 1, NULL, 10);
    }
    if (armed.nth < 1)
        armed.nth = 1;
    int known = 0;
    for (size_t i = 0; action && i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(action, actions[i].name)) {
            armed.action = actions[i].err;
            known = 1;
        }
    armed.once = when && !strcmp(when, "once");
    if (!point || !*point || strlen(point) >= sizeof armed.point || !known ||
        (when && !armed.once)) {
        fprintf(stderr, "bbfs: BBFS_FAULT=%s: expected "
                "POINT[#N]:kill|ENOSPC|EIO|ENOMEM|short|short1|short-1|pause[:once]; ignored\n", spec);
        return;
    }
    strcpy(armed.point, point);
    armed.state = ARMED;
}

/* @return whether @p point fires at this pass. */
static int fires(const char *point)
{
    if (armed.state == OFF || armed.state == SPENT)
        return 0;
    if (armed.state == UNREAD) {
        arm();
        if (armed.state == OFF)
            return 0;
    }
    return strcmp(point, armed.point) == 0 && ++armed.passes >= armed.nth;
}

static int is_short(int action)
{
    return action == SHORT_HALF || action == SHORT_ONE || action == SHORT_ALL_BUT_ONE;
}

/* Carry out the action of @p point, which fired: @return the errno, or 0
 * (a short action, or none); does not return on kill. */
static int fired(const char *point)
{
    if (armed.once)
        armed.state = SPENT;
    if (armed.action == PAUSE) { /* (this process late: the others run ahead) */
        struct timespec ts = {0, 500 * 1000 * 1000};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        return 0;
    }
    if (armed.action)
        return is_short(armed.action) ? 0 : armed.action;
    /* One write(2), so the line survives the kill whole. */
    char line[160];
    int k = snprintf(line, sizeof line, "bbfs fault: %s pass %ld: SIGKILL (pid %d)\n", point,
                     armed.passes, (int)getpid());
    if (k > 0 && write(2, line, (size_t)k) < 0) {
        /* nowhere to say it: die anyway */
    }
    kill(getpid(), SIGKILL);
    pause();
    return 0;
}

void logfs_fault_rearm(void)
{
    memset(&armed, 0, sizeof armed);
    armed.state = UNREAD;
}

int logfs_fault(const char *point)
{
    return fires(point) ? fired(point) : 0;
}

int logfs_fault_write(const char *point, size_t n, size_t *first)
{
    *first = n;
    if (!fires(point))
        return 0;
    if (is_short(armed.action) && n > 1) {
        *first = armed.action == SHORT_ONE ? 1 : armed.action == SHORT_HALF ? n / 2 : n - 1;
        if (!armed.said) { /* once: tests look for it, to know the point was reached */
            fprintf(stderr, "bbfs fault: %s pass %ld: short write (%zu of %zu bytes)\n", point,
                    armed.passes, *first, n);
            armed.said = 1;
        }
    }
    return fired(point);
}

uint64_t logfs_fault_clock(void)
{
    static int known;
    static long long skew;
    struct timespec ts;

    if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
        const char *s = getenv("BBFS_CLOCK_SKEW_NS");
        skew = s ? strtoll(s, NULL, 10) : 0;
        __atomic_store_n(&known, 1, __ATOMIC_RELEASE);
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec + (uint64_t) skew;
}
