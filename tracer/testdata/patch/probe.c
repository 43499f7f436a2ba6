/* probe makes each call whose out-parameters tracer.Stop.Patch knows,
 * once, by raw syscall (so the name in the trace is exactly the call
 * made, whatever glibc prefers), and prints what it got, one line per
 * call: "name key=value ...". Run as: probe DIR, where DIR holds "file"
 * (some bytes), "link" -> "file" and "sub/" with a few entries. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void bytes(const char *key, const unsigned char *b, long n) {
  printf(" %s=", key);
  for (long i = 0; i < n; i++) printf("%02x", b[i]);
}

static void st(const char *name, long r, struct stat *s) {
  printf("%s ret=%ld", name, r);
  if (r == 0)
    printf(" mode=%o ino=%lu nlink=%lu uid=%u gid=%u size=%ld rdev=%lx blocks=%ld blksize=%ld"
           " atime=%ld.%09ld mtime=%ld.%09ld ctime=%ld.%09ld",
           s->st_mode, (unsigned long)s->st_ino, (unsigned long)s->st_nlink, s->st_uid, s->st_gid,
           (long)s->st_size, (unsigned long)s->st_rdev, (long)s->st_blocks, (long)s->st_blksize,
           s->st_atim.tv_sec, s->st_atim.tv_nsec, s->st_mtim.tv_sec, s->st_mtim.tv_nsec,
           s->st_ctim.tv_sec, s->st_ctim.tv_nsec);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc != 2 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: probe DIR\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  struct stat s;
  long r;

  memset(&s, 0, sizeof s);
  r = syscall(SYS_stat, "file", &s);
  st("stat", r, &s);
  memset(&s, 0, sizeof s);
  r = syscall(SYS_lstat, "link", &s);
  st("lstat", r, &s);
  memset(&s, 0, sizeof s);
  r = syscall(SYS_stat, "missing", &s);
  st("stat-missing", r, &s);
  int fd = open("file", O_RDONLY);
  memset(&s, 0, sizeof s);
  r = syscall(SYS_fstat, fd, &s);
  st("fstat", r, &s);
  memset(&s, 0, sizeof s);
  r = syscall(SYS_newfstatat, AT_FDCWD, "file", &s, 0);
  st("newfstatat", r, &s);

  struct statx x;
  memset(&x, 0, sizeof x);
  r = syscall(SYS_statx, AT_FDCWD, "file", 0, STATX_BASIC_STATS | STATX_BTIME, &x);
  printf("statx ret=%ld mask=%x mode=%o ino=%llu nlink=%u size=%llu uid=%u gid=%u blocks=%llu"
         " mtime=%lld.%09u rdev=%u:%u\n",
         r, x.stx_mask, x.stx_mode, (unsigned long long)x.stx_ino, x.stx_nlink,
         (unsigned long long)x.stx_size, x.stx_uid, x.stx_gid, (unsigned long long)x.stx_blocks,
         (long long)x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec, x.stx_rdev_major, x.stx_rdev_minor);

  unsigned char buf[64], b1[4], b2[64];
  memset(buf, 0, sizeof buf);
  r = syscall(SYS_read, fd, buf, sizeof buf);
  printf("read ret=%ld", r);
  if (r > 0) bytes("data", buf, r);
  printf("\n");
  /* What follows the first read: the rest of the file after a short one. */
  memset(buf, 0, sizeof buf);
  r = syscall(SYS_read, fd, buf, sizeof buf);
  printf("read2 ret=%ld", r);
  if (r > 0) bytes("data", buf, r);
  printf("\n");

  memset(buf, 0, sizeof buf);
  r = syscall(SYS_pread64, fd, buf, 16, 2);
  printf("pread64 ret=%ld", r);
  if (r > 0) bytes("data", buf, r);
  printf("\n");

  lseek(fd, 0, SEEK_SET);
  struct iovec iov[2] = {{b1, sizeof b1}, {b2, sizeof b2}};
  memset(b1, 0, sizeof b1);
  memset(b2, 0, sizeof b2);
  r = syscall(SYS_readv, fd, iov, 2);
  printf("readv ret=%ld", r);
  if (r > 0) {
    bytes("v0", b1, r < 4 ? r : 4);
    if (r > 4) bytes("v1", b2, r - 4);
  }
  printf(" pos=%ld\n", (long)lseek(fd, 0, SEEK_CUR));

  memset(b1, 0, sizeof b1);
  memset(b2, 0, sizeof b2);
  r = syscall(SYS_preadv, fd, iov, 2, 1L, 0L);
  printf("preadv ret=%ld", r);
  if (r > 0) {
    bytes("v0", b1, r < 4 ? r : 4);
    if (r > 4) bytes("v1", b2, r - 4);
  }
  printf("\n");
  close(fd);

  int dfd = open("sub", O_RDONLY | O_DIRECTORY);
  char dbuf[4096];
  for (;;) {
    r = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf);
    printf("getdents64 ret=%ld", r);
    for (long off = 0; off < r;) {
      unsigned long long ino;
      unsigned short reclen;
      memcpy(&ino, dbuf + off, 8);
      memcpy(&reclen, dbuf + off + 16, 2);
      printf(" %s/%d/%llu", dbuf + off + 19, dbuf[off + 18], ino);
      off += reclen;
    }
    printf("\n");
    if (r <= 0) break;
  }
  close(dfd);

  char lb[256];
  memset(lb, 0, sizeof lb);
  r = syscall(SYS_readlink, "link", lb, sizeof lb);
  printf("readlink ret=%ld target=%.*s\n", r, r > 0 ? (int)r : 0, lb);
  memset(lb, 0, sizeof lb);
  r = syscall(SYS_readlinkat, AT_FDCWD, "link", lb, sizeof lb);
  printf("readlinkat ret=%ld target=%.*s\n", r, r > 0 ? (int)r : 0, lb);

  struct timespec ts;
  r = syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  printf("clock_gettime ret=%ld sec=%ld nsec=%ld\n", r, ts.tv_sec, ts.tv_nsec);
  struct timeval tv;
  r = syscall(SYS_gettimeofday, &tv, NULL);
  printf("gettimeofday ret=%ld sec=%ld usec=%ld\n", r, tv.tv_sec, tv.tv_usec);
  time_t t = 0;
  r = syscall(SYS_time, &t);
  printf("time ret=%ld tloc=%ld\n", r, (long)t);

  /* A write, retried as a careful program does until all is written. */
  const char *msg = "0123456789abcdefghij";
  int wfd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  long done = 0;
  int tries = 0;
  while (done < 20 && tries < 10) {
    r = syscall(SYS_write, wfd, msg + done, 20 - done);
    if (tries++ == 0) printf("write ret=%ld\n", r);
    if (r <= 0) break;
    done += r;
  }
  syscall(SYS_pwrite64, wfd, msg, 2L, 0L); /* the same bytes again */
  close(wfd);
  char back[64];
  memset(back, 0, sizeof back);
  wfd = open("out", O_RDONLY);
  long n = pread(wfd, back, sizeof back - 1, 0);
  close(wfd);
  printf("written tries=%d size=%ld content=%s\n", tries, n, back);

  /* A pipe, read while its writer is closed: a short read loses
   * nothing only if the kernel read no more than the line says. */
  int pfd[2];
  if (pipe(pfd) != 0) return 1;
  syscall(SYS_write, pfd[1], "PIPEDATA12", 10);
  close(pfd[1]);
  memset(buf, 0, sizeof buf);
  r = syscall(SYS_read, pfd[0], buf, 10);
  printf("piperead ret=%ld", r);
  if (r > 0) bytes("data", buf, r);
  printf("\n");
  memset(buf, 0, sizeof buf);
  r = syscall(SYS_read, pfd[0], buf, 10);
  printf("piperead2 ret=%ld", r);
  if (r > 0) bytes("data", buf, r);
  printf("\n");
  close(pfd[0]);

  errno = 0;
  r = syscall(SYS_unlink, "no-such-file");
  printf("unlink ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
  errno = 0;
  r = syscall(SYS_access, "file", R_OK);
  printf("access ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
  fflush(stdout);
  return 0;
}
