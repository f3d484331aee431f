# Debian's parallel HDF5 (libhdf5-mpich) on the bbfs MPICH, unmodified: an
# example built with h5pcc.mpich, run through tools/bbfs-run, checked with
# h5dump and h5diff against ufs: (docs/hdf5-pnetcdf.md).
TESTS += %reldir%/debian-hdf5.sh
EXTRA_DIST += %reldir%/debian-hdf5.sh %reldir%/h5_checkpoint.c tools/bbfs-run
