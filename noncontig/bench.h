/*
 * What every benchmark here does the same way: keep this VM's noise out of
 * the figures (warm memory, slowest-process times, medians of repeats) and
 * write one CSV row per measurement.
 */
#ifndef NONCONTIG_BENCH_H
#define NONCONTIG_BENCH_H

#include <mpi.h>
#include <stdio.h>

/* Median, min and max of n seconds (n >= 1); median < 0 if any run failed. */
struct bench_stat {
    double median, min, max;
    int n;
};

struct bench_stat bench_stat(const double *t, int n);

/* (max - min) / median in percent: the spread printed next to a median. */
double bench_spread(const struct bench_stat *s);

/* This VM hands freed memory back to its host, and the first large write
 * after a large free runs at page-fault speed.  Each process writes and
 * deletes its share of mib MiB in dir, so the pages a timed phase is about
 * to use are the guest's again.  Collective. */
void bench_warm(const char *dir, double mib, MPI_Comm comm);

/* The slowest process's seconds since t0.  Collective. */
double bench_slowest(double t0, MPI_Comm comm);

/* Distinct host names among the processes of comm (emulated nodes have
 * their own).  Collective. */
int bench_nodes(MPI_Comm comm);

/* Opens path for appending rows (rank 0 only; NULL elsewhere and when path
 * is NULL) and writes header when the file is new or empty.  Exits with a
 * message when it cannot. */
FILE *bench_csv_open(const char *path, const char *header);

/* Parses "a,b,c" sizes with k/m/g suffixes into v (at most max); returns
 * how many, or -1 on a bad one. */
int bench_parse_sizes(const char *s, long long *v, int max);

/* Exits every process with prog's name, what was being done and MPI's
 * message when err is not MPI_SUCCESS (a failed open must not read as
 * wrong data or as a time). */
void bench_check(int err, const char *prog, const char *what);

/* Marks in chosen[] the names a comma list gives (list NULL: all n of
 * them).  @return how many, or -1 when it names something else. */
int bench_choose(const char *list, const char *const *names, int n, int *chosen);

/* A NAME VALUE option of a benchmark's command line. */
struct bench_opt {
    const char *name;           /* "-dir" */
    char kind;                  /* 's' (const char *), 'i' (int), 'l' (long) */
    void *to;                   /* where the value goes */
};

/* Parses argv[1..] as NAME VALUE pairs into the n options of o.  @return 0,
 * or -1 for a name not among them, a name without a value, or a number
 * that is not one (the caller prints its usage). */
int bench_options(int argc, char **argv, const struct bench_opt *o, int n);

#endif
