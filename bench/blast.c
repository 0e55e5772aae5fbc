/* Loopback TCP blaster for the relay rows of `make bench`: a sink that counts
 * bytes (or echoes one byte per connection), and senders that time a bulk
 * transfer (MB/s) or connection setup (us per connect + 1-byte round trip). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int listen_on(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
		perror("blast: listen");
		exit(1);
	}
	/* The readiness line bench/relay.sh waits for before it starts the
	 * client: printed only once listen() has returned. */
	printf("listening %d\n", port);
	fflush(stdout);
	return fd;
}

/* Connects, retrying for up to 10 s while the far side comes up. */
static int dial(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	for (int i = 0; i < 1000; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		usleep(10000);
	}
	fprintf(stderr, "blast: cannot connect to port %d\n", port);
	exit(1);
}

static void sink(int lfd, int conns)
{
	for (int i = 0; i < conns; i++) {
		int c = accept(lfd, NULL, NULL);
		unsigned long long n = 0;
		ssize_t r;
		while ((r = read(c, buf, sizeof(buf))) > 0)
			n += (unsigned long long)r;
		dprintf(c, "%llu\n", n);
		close(c);
	}
}

static void echo(int lfd, int conns)
{
	for (int i = 0; i < conns; i++) {
		int c = accept(lfd, NULL, NULL);
		char b;
		if (read(c, &b, 1) == 1 && write(c, &b, 1) != 1)
			perror("blast: echo");
		close(c);
	}
}

/* Sends bytes, half-closes, waits for the sink's count; prints MB/s. */
static int send_bulk(int port, unsigned long long bytes)
{
	int fd = dial(port);
	unsigned long long left = bytes, got = 0;
	double t0 = now();
	char reply[64] = {0};

	while (left > 0) {
		ssize_t w = write(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (w <= 0) {
			perror("blast: write");
			return 1;
		}
		left -= (unsigned long long)w;
	}
	shutdown(fd, SHUT_WR);
	if (read(fd, reply, sizeof(reply) - 1) <= 0 || (got = strtoull(reply, NULL, 10)) != bytes) {
		fprintf(stderr, "blast: sink got %llu of %llu bytes\n", got, bytes);
		return 1;
	}
	printf("%.1f\n", (double)bytes / 1e6 / (now() - t0));
	return 0;
}

static int conn_latency(int port, int n)
{
	double t0;
	char b = 'x';

	/* Wait for the server with round trips: through --publish the host
	 * side accepts before the server inside listens, and such an early
	 * connection is closed without reaching it (it counts only the ones
	 * that do: 1 probe + n). */
	for (;;) {
		int fd = dial(port);
		int ok = write(fd, &b, 1) == 1 && read(fd, &b, 1) == 1;
		close(fd);
		if (ok)
			break;
		usleep(10000);
	}
	t0 = now();
	for (int i = 0; i < n; i++) {
		int fd = dial(port);
		if (write(fd, &b, 1) != 1 || read(fd, &b, 1) != 1)
			return 1;
		close(fd);
	}
	printf("%.1f\n", (now() - t0) / n * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "sink")) {
		sink(listen_on(atoi(argv[2])), atoi(argv[3]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "echo")) {
		echo(listen_on(atoi(argv[2])), atoi(argv[3]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "send"))
		return send_bulk(atoi(argv[2]), strtoull(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "connlat"))
		return conn_latency(atoi(argv[2]), atoi(argv[3]));
	fputs("usage: blast sink|echo PORT CONNS | send PORT BYTES | connlat PORT N\n", stderr);
	return 2;
}
