#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
/* One file open at a time, so every thread's descriptors are the same
   from run to run whatever the scheduling. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg) {
  char name[64]; snprintf(name, sizeof name, "t%ld.txt", (long)arg);
  for (int i = 0; i < 20; i++) {
    pthread_mutex_lock(&mu);
    int fd = open(name, O_WRONLY|O_CREAT|O_TRUNC, 0644);
    write(fd, "hello thread\n", 13);
    fsync(fd);
    close(fd);
    pthread_mutex_unlock(&mu);
    struct stat st; stat(name, &st);
  }
  return NULL;
}
int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, (void*)i);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  pid_t p = fork();
  if (p == 0) { int fd = open("child.txt", O_WRONLY|O_CREAT, 0600); write(fd, "x", 1); close(fd); _exit(3); }
  int st; waitpid(p, &st, 0);
  rename("t0.txt", "t0.done"); unlink("t1.txt"); mkdir("d", 0755); rmdir("d");
  int pf[2]; pipe(pf); write(pf[1], "ab", 2); char b[2]; read(pf[0], b, 2);
  return 0;
}
