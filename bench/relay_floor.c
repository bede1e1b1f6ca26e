/*
 * The floor of a relayed ceremony: a DevTools peer that answers the shim's channel with no ceremony at all.
 *
 *     relay_floor WS_URL BINDING RECEIVER PATH=BODY_FILE [PATH=BODY_FILE ...]
 *
 * It connects to one Chromium page target (ws://127.0.0.1:PORT/devtools/page/ID) and adds the binding BINDING on
 * its own session (Runtime.enable, then Runtime.addBinding). It prints "ready". From then on it answers each
 * Runtime.bindingCalled of that binding as `credemu serve`'s channel does: a Runtime.evaluate of
 * RECEIVER({"id", "status": 200, "body"}) in the calling context. The body is the file given for the message's path
 * (a real answer the caller recorded once); any other path gets a 404.
 *
 * It reads the shim's message only as far as its "id" and "path". Nothing is parsed as JSON and nothing is checked,
 * so a ceremony costs Chromium's transport and the shim, plus a few microseconds of its own. That is
 * bench/relay_anatomy.py's "replayed" figure: the ceiling a server could reach (docs/benchmarks.md, "How much of the
 * relayed get the server can still take back").
 *
 * A bench tool for a page the bench controls, not a server: it trusts its peer and stops at the first surprise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PATHS 8

struct canned {
    const char *path;
    char *escaped; /* the body, escaped for a JSON string */
};

static int fd = -1;
static unsigned char *inbox;
static size_t inbox_used, inbox_size = 1 << 20;
static unsigned char *outbox;
static size_t outbox_size = 1 << 20;

static void die(const char *what) {
    fprintf(stderr, "relay_floor: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static void write_all(const unsigned char *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = send(fd, bytes, count, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("send");
        bytes += n;
        count -= (size_t)n;
    }
}

/* One masked text frame (RFC 6455 §5.3), written whole. */
static void send_text(const char *text, size_t length) {
    static const unsigned char mask[4] = {0x5a, 0x17, 0xc3, 0x8e};
    size_t header = 2;
    if (length + 14 > outbox_size) die("message too large");
    outbox[0] = 0x81;
    if (length < 126) {
        outbox[1] = 0x80 | (unsigned char)length;
    } else if (length < 65536) {
        outbox[1] = 0x80 | 126;
        outbox[2] = (unsigned char)(length >> 8);
        outbox[3] = (unsigned char)length;
        header = 4;
    } else {
        outbox[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) outbox[2 + i] = (unsigned char)((unsigned long long)length >> (56 - 8 * i));
        header = 10;
    }
    memcpy(outbox + header, mask, 4);
    header += 4;
    for (size_t i = 0; i < length; i++) outbox[header + i] = (unsigned char)text[i] ^ mask[i & 3];
    write_all(outbox, header + length);
}

/* The next text message, copied out NUL-terminated (its length in *length); other frames skipped, a close ends. */
static char *next_text(size_t *length) {
    static char *message;
    if (!message) message = malloc(inbox_size);
    for (;;) {
        size_t header = 2, size = 0;
        int whole = 0;
        if (inbox_used >= 2) {
            size = inbox[1] & 0x7f;
            if (size == 126) {
                header = 4;
                size = inbox_used >= 4 ? (size_t)inbox[2] << 8 | inbox[3] : 0;
            } else if (size == 127) {
                header = 10;
                size = 0;
                if (inbox_used >= 10) for (int i = 0; i < 8; i++) size = size << 8 | inbox[2 + i];
            }
            if (header + size + 1 > inbox_size) die("message too large");
            whole = inbox_used >= header && inbox_used >= header + size;
        }
        if (whole) {
            unsigned opcode = inbox[0] & 0x0f;
            if (opcode == 0x8) exit(0);
            int text = opcode == 0x1;
            if (text) {
                memcpy(message, inbox + header, size);
                message[size] = 0;
            }
            memmove(inbox, inbox + header + size, inbox_used - header - size);
            inbox_used -= header + size;
            if (text) {
                *length = size;
                return message;
            }
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);   /* as credemu serve's reader does */
        ssize_t n = recv(fd, inbox + inbox_used, inbox_size - inbox_used, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) exit(0);
        inbox_used += (size_t)n;
    }
}

/* The JSON string value after `key` (`"name":"`) in `text`, unescaped into `out`; its length, or -1. */
static long string_after(const char *text, const char *key, char *out, size_t capacity) {
    const char *at = strstr(text, key);
    if (!at) return -1;
    at += strlen(key);
    size_t n = 0;
    while (*at && *at != '"') {
        char c = *at++;
        if (c == '\\') {
            if (!*at) return -1;
            c = *at++;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'u') return -1; /* the shim's messages are ASCII JSON: never met */
        }
        if (n + 1 >= capacity) return -1;
        out[n++] = c;
    }
    out[n] = 0;
    return (long)n;
}

static char *read_file(const char *name, size_t *length) {
    FILE *file = fopen(name, "rb");
    if (!file) die(name);
    char *bytes = malloc(1 << 20);
    *length = fread(bytes, 1, (1 << 20) - 1, file);
    fclose(file);
    bytes[*length] = 0;
    return bytes;
}

/* `body` escaped as the inside of a JSON string. */
static char *escaped(const char *body, size_t length) {
    char *out = malloc(length * 2 + 1);
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        if (body[i] == '"' || body[i] == '\\') out[n++] = '\\';
        out[n++] = body[i];
    }
    out[n] = 0;
    return out;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: relay_floor WS_URL BINDING RECEIVER PATH=BODY_FILE...\n");
        return 2;
    }
    const char *url = argv[1], *binding = argv[2], *receiver = argv[3];
    struct canned canned[MAX_PATHS];
    int paths = 0;
    for (int i = 4; i < argc && paths < MAX_PATHS; i++) {
        char *equals = strchr(argv[i], '=');
        if (!equals) die("PATH=BODY_FILE expected");
        *equals = 0;
        size_t length;
        char *body = read_file(equals + 1, &length);
        canned[paths].path = argv[i];
        canned[paths].escaped = escaped(body, length);
        free(body);
        paths++;
    }
    int port;
    char target[256];
    if (sscanf(url, "ws://127.0.0.1:%d/devtools/page/%255s", &port, target) != 2) die("a ws://127.0.0.1:PORT/devtools/page/ID URL expected");
    inbox = malloc(inbox_size);
    outbox = malloc(outbox_size);

    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char request[512];
    int length = snprintf(request, sizeof request,
                          "GET /devtools/page/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: cmVsYXlfZmxvb3Jfa2V5IQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", target, port);
    write_all((unsigned char *)request, (size_t)length);
    for (;;) {   /* the handshake's answer, up to its blank line; any bytes after it are the first frames */
        ssize_t n = recv(fd, inbox + inbox_used, inbox_size - inbox_used - 1, 0);
        if (n <= 0) die("handshake");
        inbox_used += (size_t)n;
        inbox[inbox_used] = 0;
        char *end = strstr((char *)inbox, "\r\n\r\n");
        if (!end) continue;
        if (strncmp((char *)inbox, "HTTP/1.1 101", 12) != 0) die("the page target refused the websocket");
        size_t head = (size_t)(end + 4 - (char *)inbox);
        memmove(inbox, inbox + head, inbox_used - head);
        inbox_used -= head;
        break;
    }
    /* Chromium installs a session's bindings in new documents only while its Runtime domain is on. */
    char command[512];
    length = snprintf(command, sizeof command, "{\"id\":1,\"method\":\"Runtime.enable\",\"params\":{}}");
    send_text(command, (size_t)length);
    length = snprintf(command, sizeof command, "{\"id\":2,\"method\":\"Runtime.addBinding\",\"params\":{\"name\":\"%s\"}}", binding);
    send_text(command, (size_t)length);
    for (;;) {   /* the binding's answer */
        size_t size;
        char *text = next_text(&size);
        if (strncmp(text, "{\"id\":2,", 8) == 0) break;
    }
    printf("ready\n");
    fflush(stdout);

    char event_prefix[256];
    snprintf(event_prefix, sizeof event_prefix, "{\"method\":\"Runtime.bindingCalled\",\"params\":{\"name\":\"%s\"", binding);
    size_t prefix_length = strlen(event_prefix);
    static char payload[1 << 16], id[128], path[600], reply[1 << 20];
    long next_id = 100;
    for (;;) {
        size_t size;
        char *text = next_text(&size);
        if (strncmp(text, event_prefix, prefix_length) != 0) continue;   /* answers, other events */
        if (string_after(text, "\"payload\":\"", payload, sizeof payload) < 0) continue;
        const char *context_at = strstr(text, "\"executionContextId\":");
        if (!context_at) continue;
        long context = strtol(context_at + strlen("\"executionContextId\":"), NULL, 10);
        if (string_after(payload, "\"id\":\"", id, sizeof id) < 0 || string_after(payload, "\"path\":\"", path, sizeof path) < 0) continue;
        const struct canned *hit = NULL;
        for (int i = 0; i < paths; i++) {
            if (strcmp(path, canned[i].path) == 0) hit = &canned[i];
        }
        int n = snprintf(reply, sizeof reply,
                         "{\"id\":%ld,\"method\":\"Runtime.evaluate\",\"params\":{\"contextId\":%ld,\"expression\":\"%s({\\\"id\\\":\\\"%s\\\",\\\"status\\\":%d,\\\"body\\\":%s})\"}}",
                         next_id++, context, receiver, id, hit ? 200 : 404,
                         hit ? hit->escaped : "{\\\"error\\\":\\\"NotFound\\\",\\\"message\\\":\\\"relay_floor has no answer for this path\\\"}");
        if (n < 0 || (size_t)n >= sizeof reply) die("reply too large");
        send_text(reply, (size_t)n);
    }
}
