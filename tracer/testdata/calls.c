#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <termios.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/audit.h>
/* Exercises the calls faultline decodes, once each, deterministically. */

/* sync() writes back every file system on the machine, among them the
 * recording disks of crash checks that other packages' tests run at the
 * same time: a gzip whose data reaches the disk before the unlink's
 * commit has no finding left to report. This seccomp filter makes sync()
 * return 0 without running it; ptrace still stops at it (the entry stop
 * comes before seccomp), so strace and faultline both see and decode it. */
static void sync_is_harmless(void) {
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 2), /* another ABI's numbers: allow */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sync, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp");
    exit(1);
  }
}
int main(void) {
  char buf[256]; struct stat st; struct statfs sfs; struct statx sx;
  sync_is_harmless();
  int fd = open("f1", O_RDWR|O_CREAT|O_TRUNC, 0640);
  write(fd, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH\n", 45);
  pwrite(fd, "xy", 2, 3); pread(fd, buf, 10, 0);
  struct iovec iov[2] = {{"ab", 2}, {"cde", 3}}; writev(fd, iov, 2);
  lseek(fd, 0, SEEK_SET); char b1[4], b2[8]; struct iovec riov[2] = {{b1, 4}, {b2, 8}}; readv(fd, riov, 2);
  fstat(fd, &st); stat("f1", &st); lstat("f1", &st); stat("/dev/null", &st);
  statx(AT_FDCWD, "f1", 0, STATX_ALL, &sx);
  fstatfs(fd, &sfs); statfs("/", &sfs);
  access("f1", R_OK|W_OK); faccessat(AT_FDCWD, "f1", X_OK, AT_EACCESS);
  fsync(fd); fdatasync(fd); sync(); syncfs(fd); sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  ftruncate(fd, 10); truncate("f1", 20); fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
  flock(fd, LOCK_EX|LOCK_NB); flock(fd, LOCK_UN);
  fcntl(fd, F_SETFD, FD_CLOEXEC); fcntl(fd, F_GETFD); fcntl(fd, F_GETFL); fcntl(fd, F_SETFL, O_APPEND|O_NONBLOCK);
  int d = dup(fd); dup2(fd, 10); dup3(fd, 11, O_CLOEXEC); fcntl(fd, F_DUPFD_CLOEXEC, 20);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10}; fcntl(fd, F_SETLK, &fl); fcntl(fd, F_GETLK, &fl);
  close(d); close(10); close(11);
  rename("f1", "f2"); renameat(AT_FDCWD, "f2", AT_FDCWD, "f3"); renameat2(AT_FDCWD, "f3", AT_FDCWD, "f1", RENAME_NOREPLACE);
  link("f1", "l1"); linkat(AT_FDCWD, "l1", AT_FDCWD, "l2", 0); symlink("f1", "s1"); symlinkat("f1", AT_FDCWD, "s2");
  readlink("s1", buf, sizeof buf); readlinkat(AT_FDCWD, "s2", buf, sizeof buf);
  unlink("l1"); unlinkat(AT_FDCWD, "l2", 0); unlink("s1"); unlink("s2"); unlink("nonexistent");
  mkdir("dd", 0755); mkdirat(AT_FDCWD, "dd/e", 0700); rmdir("dd/e"); unlinkat(AT_FDCWD, "dd", AT_REMOVEDIR);
  chmod("f1", 0600); fchmod(fd, 0644); fchmodat(AT_FDCWD, "f1", 0640, 0);
  chown("f1", 0, 0); fchown(fd, -1, 0); lchown("f1", 0, -1); fchownat(AT_FDCWD, "f1", 0, 0, AT_SYMLINK_NOFOLLOW);
  struct timespec ts[2] = {{1000000000, 5}, {1000000001, 0}}; utimensat(AT_FDCWD, "f1", ts, 0);
  struct timespec ts2[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}}; utimensat(fd, NULL, ts2, 0);
  setxattr("f1", "user.k", "val", 3, 0); getxattr("f1", "user.k", buf, sizeof buf); listxattr("f1", buf, sizeof buf);
  fsetxattr(fd, "user.j", "v2", 2, XATTR_CREATE); fgetxattr(fd, "user.j", buf, sizeof buf); flistxattr(fd, buf, sizeof buf);
  removexattr("f1", "user.k"); fremovexattr(fd, "user.j"); lgetxattr("f1", "user.none", buf, sizeof buf);
  getcwd(buf, sizeof buf); mkdir("cd", 0755); chdir("cd"); chdir(".."); int dfd = open("cd", O_RDONLY|O_DIRECTORY); fchdir(dfd); fchdir(AT_FDCWD); chdir(".."); chdir(getenv("PWD"));
  syscall(SYS_getdents64, dfd, buf, sizeof buf); close(dfd); rmdir("cd");
  umask(022); umask(077); umask(0);
  mknod("fifo", S_IFIFO|0644, 0); mknodat(AT_FDCWD, "fifo2", S_IFIFO|0600, 0); unlink("fifo"); unlink("fifo2");
  int p[2]; pipe(p); pipe2(p, O_CLOEXEC|O_NONBLOCK);
  int out = open("f2", O_WRONLY|O_CREAT|O_EXCL, 0644); lseek(fd, 0, SEEK_SET); sendfile(out, fd, NULL, 5); loff_t o1 = 0; copy_file_range(fd, &o1, out, NULL, 5, 0);
  ioctl(out, FICLONE, fd); struct termios tio; ioctl(0, TCGETS, &tio); struct winsize ws; ioctl(1, TIOCGWINSZ, &ws); int n; ioctl(fd, FIONREAD, &n);
  int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(1), .sin_addr.s_addr = htonl(0x7f000001)};
  connect(s, (struct sockaddr*)&sin, sizeof sin); close(s);
  int ls = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP); sin.sin_port = 0; bind(ls, (struct sockaddr*)&sin, sizeof sin); listen(ls, 5);
  socklen_t sl = sizeof sin; getsockname(ls, (struct sockaddr*)&sin, &sl);
  int c = socket(AF_INET, SOCK_STREAM, 0); connect(c, (struct sockaddr*)&sin, sizeof sin);
  struct sockaddr_in peer; socklen_t pl = sizeof peer; int a = accept(ls, (struct sockaddr*)&peer, &pl);
  send(c, "ping", 4, 0); recv(a, buf, sizeof buf, 0); sendto(a, "pong", 4, MSG_NOSIGNAL, NULL, 0); recvfrom(c, buf, sizeof buf, 0, NULL, NULL);
  close(a); close(c); c = socket(AF_INET, SOCK_STREAM, 0); connect(c, (struct sockaddr*)&sin, sizeof sin); a = accept4(ls, NULL, NULL, SOCK_NONBLOCK); close(a); close(c); close(ls);
  int us = socket(AF_UNIX, SOCK_DGRAM, 0); struct sockaddr_un sun = {.sun_family = AF_UNIX}; strcpy(sun.sun_path, "/nonexistent/x.sock"); connect(us, (struct sockaddr*)&sun, sizeof sun); close(us);
  struct pollfd pfd[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}}; poll(pfd, 2, 0);
  fd_set rf; FD_ZERO(&rf); FD_SET(p[0], &rf); struct timeval tv = {0, 0}; select(p[0]+1, &rf, NULL, NULL, &tv);
  void *m = mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); mprotect(m, 4096, PROT_READ); munmap(m, 8192); sbrk(0);
  getrandom(buf, 16, 0);
  struct timespec now; clock_gettime(CLOCK_MONOTONIC, &now); struct timeval tv2; gettimeofday(&tv2, NULL); syscall(SYS_time, NULL);
  struct timespec sl2 = {0, 1000}; nanosleep(&sl2, NULL); clock_nanosleep(CLOCK_REALTIME, 0, &sl2, NULL);
  pid_t ch = fork(); if (ch == 0) { _exit(7); } int wst; wait4(ch, &wst, 0, NULL);
  ch = vfork(); if (ch == 0) { execl("/bin/true", "true", NULL); _exit(1); } waitpid(ch, &wst, 0);
  kill(getpid(), 0); syscall(SYS_tgkill, getpid(), getpid(), 0);
  signal(SIGUSR1, SIG_IGN); raise(SIGUSR1); sigset_t ss; sigemptyset(&ss); sigaddset(&ss, SIGUSR2); sigprocmask(SIG_BLOCK, &ss, NULL);
  close(fd); close(out); unlink("f1"); unlink("f2");
  syscall(0x1b6, 1, 2); syscall(SYS_getppid);
  return 0;
}
