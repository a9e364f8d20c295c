/*
 * syncdelay: an LD_PRELOAD shim that adds a fixed delay to every call that
 * waits for data to reach the disk, so a test can tell whether a broker
 * acknowledges a write before or after such a sync: a broker that syncs on
 * the ack path answers no faster than the delay, one that does not is not
 * slowed at all.
 *
 * Covered calls, and who makes them in the JVMs under test:
 *   fsync           FileChannel.force(true)  (Kafka log segments)
 *   fdatasync       FileChannel.force(false) (BookKeeper journal)
 *   msync(MS_SYNC)  MappedByteBuffer.force() (Kafka offset/time indexes)
 *   sync_file_range with SYNC_FILE_RANGE_WAIT_AFTER (RocksDB, BookKeeper's
 *                   native journal helpers)
 *   syncfs, sync    whole-filesystem syncs
 * msync(MS_ASYNC) and sync_file_range without WAIT_AFTER only start
 * write-back and do not wait for it, so they are passed through undelayed.
 *
 * Environment:
 *   STREAMBENCH_SYNC_DELAY_US  delay in microseconds (0 or unset: none)
 *   STREAMBENCH_SYNC_TRACE     if set, a file to which every covered call
 *                              appends one line
 *                                "<call> <pid> <start> <end> <path>\n"
 *                              (start and end: CLOCK_REALTIME in ns, before
 *                              the real call and after the delay; path: the
 *                              file synced, "-" when the call has no file
 *                              descriptor), so a test can prove the shim was
 *                              loaded, and tell which syncs of which files
 *                              fell between a message's send and its ack.
 *   STREAMBENCH_SYNC_STALL_PATH and STREAMBENCH_SYNC_STALL_FLAG
 *                              while the flag file exists, a covered call
 *                              on a file whose path starts with the stall
 *                              path does not return (it reads the flag
 *                              every millisecond, and returns once the flag
 *                              is gone or names another path): a disk that hung, to the
 *                              process, and a replica that stopped
 *                              answering, to the replicas beside it. Writes
 *                              to such a file (write, pwrite, writev,
 *                              pwritev) are held the same way, before they
 *                              reach it (writes are never delayed or
 *                              traced): a bookie that does not sync its
 *                              journal before it answers
 *                              (journalSyncData=false) still writes it
 *                              first. A flag that is not empty holds the
 *                              path to stall instead (under the stall
 *                              path), so a test can choose at the time of
 *                              the stall. The replica-stall experiment
 *                              stalls one bookie's journal this way: the
 *                              Pulsar standalone runs every bookie in one
 *                              JVM, so a signal cannot stop one alone.
 *
 * Build: cc -shared -fPIC -O2 -o syncdelay.so syncdelay.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long delay_us = -1;
static int trace_fd = -2;
static const char *stall_path;
static const char *stall_flag;
static size_t stall_len;

static void init(void) {
	if (delay_us < 0) {
		const char *d = getenv("STREAMBENCH_SYNC_DELAY_US");
		delay_us = d ? atol(d) : 0;
		if (delay_us < 0)
			delay_us = 0;
	}
	if (trace_fd == -2) {
		const char *t = getenv("STREAMBENCH_SYNC_TRACE");
		trace_fd = t && *t ? open(t, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
		const char *p = getenv("STREAMBENCH_SYNC_STALL_PATH");
		const char *f = getenv("STREAMBENCH_SYNC_STALL_FLAG");
		if (p && *p && f && *f) {
			stall_path = p;
			stall_flag = f;
			stall_len = strlen(p);
		}
	}
}

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* path_of writes the path of the file open as fd into path ("-" when it
 * has none) and says whether it has one. */
static int path_of(int fd, char *path, size_t size) {
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, size - 1);
	if (n <= 0) {
		strcpy(path, "-");
		return 0;
	}
	path[n] = 0;
	return 1;
}


/* stalled says whether a call on the file at path stalls now: the flag
 * exists and path starts with the path the flag holds, or with the stall
 * path when the flag is empty (so one process's bookies can be stalled one
 * at a time, the flag naming which). */
static int stalled(const char *path) {
	int fd = open(stall_flag, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char want[512];
	ssize_t n = read(fd, want, sizeof want - 1);
	close(fd);
	want[n > 0 ? n : 0] = 0;
	while (n > 0 && (want[n - 1] == '\n' || want[n - 1] == ' '))
		want[--n] = 0;
	if (n > 0)
		return strncmp(path, want, (size_t)n) == 0;
	return strncmp(path, stall_path, stall_len) == 0;
}

/* hold returns once a call on the file at path no longer stalls: the flag
 * is gone, or names another path now. It reads the flag every millisecond
 * rather than only testing that it exists, so a call is held only while
 * the flag names its file: a flag read in the moment it was being written
 * (empty, so the whole stall path) had held another bookie's journal until
 * the stall ended, and with it the writes of an ack quorum of two. */
static void hold(const char *path) {
	struct timespec ms = {0, 1000000};
	while (stalled(path))
		nanosleep(&ms, NULL);
}

/* delay sleeps the configured time, stalls a call on a file under the
 * stall path while the stall flag exists, and traces the call that started
 * at start on fd (-1: none); nanosleep is restarted after a signal so the
 * delay is never cut short. errno is kept for the caller. */
static void delay(const char *call, int fd, long long start) {
	int saved = errno;
	init();
	if (delay_us > 0) {
		struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	char path[512] = "-";
	if ((trace_fd >= 0 || stall_path) && fd >= 0)
		path_of(fd, path, sizeof path);
	if (stall_path && stalled(path))
		hold(path);
	if (trace_fd >= 0) {
		/* one line per call: a path with a newline or space would
		 * split it */
		for (char *c = path; *c; c++)
			if (*c == '\n' || *c == ' ')
				*c = '?';
		char line[640];
		int n = snprintf(line, sizeof line, "%s %d %lld %lld %s\n", call, (int)getpid(), start, now_ns(), path);
		if (n > 0)
			(void)!write(trace_fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
	}
	errno = saved;
}

/* stall_write holds a write on fd while the stall flag exists and fd is
 * a file under the stall path. With no stall path (every use but the
 * replica-stall experiment) it costs a pointer test; with one, an access()
 * per write, and a readlink only during a stall. errno is kept. */
static void stall_write(int fd) {
	init();
	if (!stall_path || fd < 0)
		return;
	int saved = errno;
	char path[512];
	if (access(stall_flag, F_OK) == 0 && path_of(fd, path, sizeof path) && stalled(path))
		hold(path);
	errno = saved;
}

/* real resolves the libc function this shim wraps, once. */
#define REAL(name, ret, ...) \
	typedef ret (*name##_fn)(__VA_ARGS__); \
	static name##_fn real_##name; \
	if (!real_##name) \
		real_##name = (name##_fn)dlsym(RTLD_NEXT, #name)

int fsync(int fd) {
	REAL(fsync, int, int);
	long long start = now_ns();
	int r = real_fsync(fd);
	delay("fsync", fd, start);
	return r;
}

int fdatasync(int fd) {
	REAL(fdatasync, int, int);
	long long start = now_ns();
	int r = real_fdatasync(fd);
	delay("fdatasync", fd, start);
	return r;
}

int msync(void *addr, size_t len, int flags) {
	REAL(msync, int, void *, size_t, int);
	long long start = now_ns();
	int r = real_msync(addr, len, flags);
	if (flags & MS_SYNC)
		delay("msync", -1, start);
	return r;
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
	REAL(sync_file_range, int, int, off64_t, off64_t, unsigned int);
	long long start = now_ns();
	int r = real_sync_file_range(fd, off, n, flags);
	if (flags & SYNC_FILE_RANGE_WAIT_AFTER)
		delay("sync_file_range", fd, start);
	return r;
}

int syncfs(int fd) {
	REAL(syncfs, int, int);
	long long start = now_ns();
	int r = real_syncfs(fd);
	delay("syncfs", fd, start);
	return r;
}

void sync(void) {
	REAL(sync, void, void);
	long long start = now_ns();
	real_sync();
	delay("sync", -1, start);
}

/* The writes a JVM makes to a file: FileChannel.write (write, writev), its
 * positional form (pwrite64, pwritev64), and their other names. */
ssize_t write(int fd, const void *buf, size_t n) {
	REAL(write, ssize_t, int, const void *, size_t);
	stall_write(fd);
	return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
	REAL(pwrite, ssize_t, int, const void *, size_t, off_t);
	stall_write(fd);
	return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
	REAL(pwrite64, ssize_t, int, const void *, size_t, off64_t);
	stall_write(fd);
	return real_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
	REAL(writev, ssize_t, int, const struct iovec *, int);
	stall_write(fd);
	return real_writev(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
	REAL(pwritev, ssize_t, int, const struct iovec *, int, off_t);
	stall_write(fd);
	return real_pwritev(fd, iov, cnt, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off) {
	REAL(pwritev64, ssize_t, int, const struct iovec *, int, off64_t);
	stall_write(fd);
	return real_pwritev64(fd, iov, cnt, off);
}
