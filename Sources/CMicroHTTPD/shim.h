#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic; this fixes the options credemu uses: an internal thread pool bound to one
/// address, a completion callback, per-connection memory and idle limits, and the percent-decoding of URLs.
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, uint16_t port, const struct sockaddr *addr,
                                            unsigned int threads, size_t memory_limit, unsigned int timeout_seconds,
                                            MHD_AccessHandlerCallback handler, void *cls,
                                            MHD_RequestCompletedCallback completed,
                                            size_t (*unescape)(void *cls, struct MHD_Connection *connection, char *text)) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, cls,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                            MHD_OPTION_END);
}

/// The socket of a connection, or -1.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// Whether the peer closed or reset a connected socket: a read that does not block and takes nothing off the
/// socket sees end of file or an error (bytes waiting, or none yet, mean the peer is there).
static inline int cmhd_peer_gone(int fd) {
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0) return n == 0;
    return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

/// The port the daemon bound (for --port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
