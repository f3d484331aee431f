/* Fault points (fault.h).  The one piece of mutable global state in logfs,
 * and only for tests: the armed point and its pass count. */
#define _GNU_SOURCE
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { UNREAD, OFF, ARMED, SPENT };

static struct {
    int state;
    char point[64];
    long nth, passes;
    int action; /* 0: kill, else errno */
    int once;
} armed;

static const struct {
    const char *name;
    int err;
} actions[] = {{"kill", 0}, {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"ENOMEM", ENOMEM}};

static void arm(void)
{
    const char *spec = getenv("BBFS_FAULT"), *rank = getenv("BBFS_FAULT_RANK");
    const char *me = getenv("PMI_RANK");
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
    armed.action = -1;
    for (size_t i = 0; action && i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(action, actions[i].name))
            armed.action = actions[i].err;
    armed.once = when && !strcmp(when, "once");
    if (!point || !*point || strlen(point) >= sizeof armed.point || armed.action < 0 ||
        (when && !armed.once)) {
        fprintf(stderr, "bbfs: BBFS_FAULT=%s: expected POINT[#N]:kill|ENOSPC|EIO|ENOMEM[:once]; "
                "ignored\n", spec);
        return;
    }
    strcpy(armed.point, point);
    armed.state = ARMED;
}

int logfs_fault(const char *point)
{
    if (armed.state == OFF || armed.state == SPENT)
        return 0;
    if (armed.state == UNREAD) {
        arm();
        if (armed.state == OFF)
            return 0;
    }
    if (strcmp(point, armed.point) != 0 || ++armed.passes < armed.nth)
        return 0;
    if (armed.action) {
        if (armed.once)
            armed.state = SPENT;
        return armed.action;
    }
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
