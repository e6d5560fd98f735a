# scripts/starpu/disk_errors.pl — StarPU 1.3.10's unistd disk node (out of core) asserts or
# aborts on a failed read or write of its files (a full disk: "aio_error returned 28"), and
# loops for ever when its folder is removed under it. This patch, applied by scripts/setup
# with `perl -0pi` to src/core/disk_ops/unistd/disk_unistd_global.c, adds
#   void (*starpu_disk_fatal_error_hook)(const char *what, const char *path, int err);
# called, when set, with what failed ("writing", "reading", "creating", "reopening"), the
# file or folder, and errno (-1: fewer bytes than asked) before StarPU gives up, so the
# application can end the run in one line of its own (docs/design.md §9).
use strict;
use warnings;

my $n = 0;
sub count { my ($k) = @_; $n += $k; }

# The hook, after the file's constants.
count(s{(#define MAX_OPEN_FILES 64\n)}{$1
/* starwave (scripts/starpu/disk_errors.pl): called, when set, before StarPU gives up on a file of a disk node. */
void (*starpu_disk_fatal_error_hook)(const char *what, const char *path, int err) = NULL;
static void _starwave_disk_failed(const char *what, const char *path, int err)
{
	if (starpu_disk_fatal_error_hook)
		starpu_disk_fatal_error_hook(what, path, err);
}
});

# A file that cannot be opened again.
count(s{(\tint id = open\(obj->path, obj->flags\);\n)}{$1\tif (id < 0) _starwave_disk_failed("reopening", obj->path, errno);\n});

# Synchronous reads and writes (lseek, read, write).
count(s{(\n(\t+)STARPU_ASSERT_MSG\((\w+) >= 0, "Starpu Disk unistd (?:lseek for )?(read|write) failed)}
       {"\n$2if ($3 < 0) _starwave_disk_failed(\"" . ($4 eq "read" ? "reading" : "writing") . "\", tmp->path, errno);$1"}ge);
count(s{(\n\tSTARPU_ASSERT_MSG\(res >= 0, "Starpu Disk unistd write failed[^\n]*\n)}
       {$1\tif ((size_t) res < size) _starwave_disk_failed("writing", tmp->path, -1);\n});

# A file that cannot be made (mkostemp, its folders) or sized.
count(s{(\tchar \*baseCpy = _starpu_mktemp_many\(fileBase->path, TEMP_HIERARCHY_DEPTH, obj->flags, &id\);\n\n\t/\* fail \*/\n\tif \(!baseCpy\)\n\t\{\n)}
       {$1\t\t_starwave_disk_failed("creating a file in", fileBase->path, errno);\n});
count(s{(\tint val = _starpu_ftruncate\(id,size\);\n\t/\* fail \*/\n\tif \(val < 0\)\n\t\{\n)}
       {$1\t\t_starwave_disk_failed("sizing", baseCpy, errno);\n});
count(s{(\t\tint val = _starpu_ftruncate\(fd,size\);\n)}{$1\t\tif (val != 0) _starwave_disk_failed("sizing", tmp->path, errno);\n});

# Asynchronous requests (POSIX aio): an error, or fewer bytes than asked.
count(s{(\t\t\tret = aio_error\(aiocb\);\n)(\t\t\tSTARPU_ASSERT_MSG\(!ret, "aio_error returned %d", ret\);\n\t\t\tsize = aio_return\(aiocb\);\n)}
       {$1\t\t\tif (ret) _starwave_disk_failed("accessing", starpu_aiocb->obj->path, ret);\n$2\t\t\tif (size != (starpu_ssize_t) aiocb->aio_nbytes) _starwave_disk_failed("accessing", starpu_aiocb->obj->path, -1);\n});
count(s{(\t\t\t\tsize = aio_return\(aiocb\);\n)(\t\t\t\tSTARPU_ASSERT\(size == \(starpu_ssize_t\) aiocb->aio_nbytes\);\n\t\t\t\treturn 1;)}
       {$1\t\t\t\tif (size != (starpu_ssize_t) aiocb->aio_nbytes) _starwave_disk_failed("accessing", starpu_aiocb->obj->path, -1);\n$2});
count(s{(\t\t\t/\* an error occured \*/\n)}{$1\t\t\t_starwave_disk_failed("accessing", starpu_aiocb->obj->path, ret);\n});

die "disk_errors.pl: $n of 13 places patched (StarPU's disk_unistd_global.c is not 1.3.10's)\n" unless $n == 13;
