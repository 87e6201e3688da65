/*!
 * \file serial_vectors.c
 * \brief Test harness: runs the C serial framing and session layer on commands read from stdin,
 *        so tests can compare it byte for byte with the Python implementation.
 *
 * One command per line; each answer is zero or more lines followed by a line ".". Byte strings
 * are lowercase hex, "-" (or nothing) for an empty one. Numbers are decimal.
 *
 *   crc <hex>                        -> crc <4 hex digits>
 *   encode <hex>                     -> frame <hex>
 *   message <type> <id> <hex>        -> frame <hex>          (a session message, framed)
 *   decode <max> <hex>               -> payload <hex> per frame, then
 *                                       stats frames=<n> errors=<n> skipped=<n>
 *                                       (a fresh decoder accepting up to <max> bytes)
 *   session <rx_max> <tx_max> <hex>  -> ok                   (a fresh session; <hex> lists the
 *                                       nonces its callback returns, then 0 forever)
 *   start | send <hex> | log <hex>   -> rc <status>, then tx <hex> if it wrote anything
 *   rx <hex>                         -> started <id> | data <hex> | log <hex> per event, in order,
 *                                       then tx <hex> if it wrote anything
 *   state                            -> state <s> id <n> nonce <n> dropped <n> errors <n>
 *                                       limit <n> (the tx limit: see serial_session.h)
 *
 * The write callback accepts at most 5 bytes per call, to exercise partial writes.
 *
 * With --echo (or --echo-initiator) it is instead a board on a serial link: stdin and stdout
 * carry frames (serial_stream.h), every byte received in the session is sent back, and a
 * restart by the peer is answered with the LOG message "echo: session restarted". It exits 0
 * at the end of input. --echo-initiator starts the session itself on first use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytvm_crt/serial_framing.h"
#include "pytvm_crt/serial_session.h"
#include "pytvm_crt/serial_stream.h"

#define MAX_LINE (1u << 22)
#define MAX_BYTES (1u << 21)
#define MAX_RX (1u << 16)

static char g_line[MAX_LINE];
static uint8_t g_bytes[MAX_BYTES];
static uint8_t g_tx[MAX_BYTES * 2 + 64];
static size_t g_tx_len;
static uint8_t g_rx[MAX_RX];
static uint8_t g_nonces[256];
static size_t g_nonce_count, g_nonce_next;
static pytvm_serial_session g_session;
static int g_have_session;

static void print_hex(const char* tag, const uint8_t* data, size_t n) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  fputs(tag, stdout);
  fputc(' ', stdout);
  if (n == 0) fputc('-', stdout);
  for (i = 0; i < n; ++i) {
    fputc(digits[data[i] >> 4], stdout);
    fputc(digits[data[i] & 0x0F], stdout);
  }
  fputc('\n', stdout);
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Parse a hex token (NULL or "-" is empty) into out; -1 on a malformed or too long token. */
static long parse_hex(const char* text, uint8_t* out, size_t capacity) {
  size_t n = 0;
  if (text == NULL || strcmp(text, "-") == 0) return 0;
  while (text[0] != '\0') {
    int hi = hex_value(text[0]), lo;
    if (hi < 0 || text[1] == '\0') return -1;
    lo = hex_value(text[1]);
    if (lo < 0 || n >= capacity) return -1;
    out[n++] = (uint8_t)(hi << 4 | lo);
    text += 2;
  }
  return (long)n;
}

static int capture_write(void* ctx, const uint8_t* data, size_t n) {
  size_t take = n < 5 ? n : 5;
  (void)ctx;
  if (g_tx_len + take > sizeof(g_tx)) return -100;
  memcpy(g_tx + g_tx_len, data, take);
  g_tx_len += take;
  return (int)take;
}

static void flush_tx(void) {
  if (g_tx_len > 0) print_hex("tx", g_tx, g_tx_len);
  g_tx_len = 0;
}

static uint8_t scripted_nonce(void* ctx) {
  (void)ctx;
  return g_nonce_next < g_nonce_count ? g_nonces[g_nonce_next++] : 0;
}

static void on_event(void* ctx, int event, const uint8_t* body, size_t n) {
  (void)ctx;
  if (event == PYTVM_SERIAL_EVENT_STARTED) {
    printf("started %u\n", (unsigned)g_session.session_id);
  } else {
    print_hex(event == PYTVM_SERIAL_EVENT_DATA ? "data" : "log", body, n);
  }
}

static void on_frame(void* ctx, const uint8_t* payload, size_t n) {
  (void)ctx;
  print_hex("payload", payload, n);
}

/* Read one line into g_line; 0 at end of input. */
static int read_line(void) {
  size_t n = 0;
  int c;
  while ((c = getchar()) != EOF && c != '\n') {
    if (n + 1 >= sizeof(g_line)) {
      fprintf(stderr, "serial_vectors: line longer than %u bytes\n", MAX_LINE);
      exit(2);
    }
    g_line[n++] = (char)c;
  }
  g_line[n] = '\0';
  return c != EOF || n > 0;
}

static unsigned long parse_number(const char* text) {
  return text == NULL ? 0 : strtoul(text, NULL, 10);
}

static void run(char* command) {
  char* words[5] = {NULL, NULL, NULL, NULL, NULL};
  int count = 0;
  char* tok = strtok(command, " \t\r");
  long n;
  while (tok != NULL && count < 5) {
    words[count++] = tok;
    tok = strtok(NULL, " \t\r");
  }
  if (count == 0) return;
  if (strcmp(words[0], "crc") == 0 || strcmp(words[0], "encode") == 0) {
    pytvm_serial_encoder enc;
    n = parse_hex(words[1], g_bytes, sizeof(g_bytes));
    if (n < 0) {
      puts("error bad hex");
    } else if (words[0][0] == 'c') {
      printf("crc %04x\n", pytvm_serial_crc16(PYTVM_SERIAL_CRC_INIT, g_bytes, (size_t)n));
    } else {
      pytvm_serial_encoder_init(&enc, capture_write, NULL);
      if (pytvm_serial_encoder_write_frame(&enc, g_bytes, (size_t)n) != PYTVM_SERIAL_OK) {
        puts("error encode failed");
      }
      print_hex("frame", g_tx, g_tx_len);
      g_tx_len = 0;
    }
  } else if (strcmp(words[0], "message") == 0) {
    pytvm_serial_encoder enc;
    n = parse_hex(words[3], g_bytes, sizeof(g_bytes));
    if (n < 0) {
      puts("error bad hex");
    } else {
      pytvm_serial_encoder_init(&enc, capture_write, NULL);
      if (pytvm_serial_write_message(&enc, (uint8_t)parse_number(words[1]),
                                     (uint16_t)parse_number(words[2]), g_bytes,
                                     (size_t)n) != PYTVM_SERIAL_OK) {
        puts("error encode failed");
      }
      print_hex("frame", g_tx, g_tx_len);
      g_tx_len = 0;
    }
  } else if (strcmp(words[0], "decode") == 0) {
    pytvm_serial_decoder dec;
    unsigned long max = parse_number(words[1]);
    n = parse_hex(words[2], g_bytes, sizeof(g_bytes));
    if (n < 0 || max > sizeof(g_rx)) {
      puts("error bad arguments");
    } else {
      size_t i;
      pytvm_serial_decoder_init(&dec, g_rx, (size_t)max, on_frame, NULL);
      for (i = 0; i < (size_t)n; ++i) pytvm_serial_decoder_feed_byte(&dec, g_bytes[i]);
      printf("stats frames=%lu errors=%lu skipped=%lu\n", (unsigned long)dec.frames,
             (unsigned long)dec.errors, (unsigned long)dec.skipped);
    }
  } else if (strcmp(words[0], "session") == 0) {
    pytvm_serial_session_config config;
    unsigned long rx_max = parse_number(words[1]);
    n = parse_hex(words[3], g_nonces, sizeof(g_nonces));
    if (n < 0 || rx_max > sizeof(g_rx)) {
      puts("error bad arguments");
      return;
    }
    g_nonce_count = (size_t)n;
    g_nonce_next = 0;
    memset(&config, 0, sizeof(config));
    config.rx_buffer = g_rx;
    config.rx_capacity = (size_t)rx_max;
    config.write = capture_write;
    config.nonce = scripted_nonce;
    config.on_event = on_event;
    config.tx_max_payload = (uint32_t)parse_number(words[2]);
    g_have_session = pytvm_serial_session_init(&g_session, &config) == PYTVM_SERIAL_OK;
    puts(g_have_session ? "ok" : "error bad session config");
  } else if (!g_have_session) {
    puts("error no session");
  } else if (strcmp(words[0], "start") == 0) {
    printf("rc %d\n", pytvm_serial_session_start(&g_session));
    flush_tx();
  } else if (strcmp(words[0], "send") == 0 || strcmp(words[0], "log") == 0) {
    n = parse_hex(words[1], g_bytes, sizeof(g_bytes));
    if (n < 0) {
      puts("error bad hex");
    } else if (words[0][1] == 'e') {
      printf("rc %d\n", pytvm_serial_session_send(&g_session, g_bytes, (size_t)n));
    } else {
      printf("rc %d\n", pytvm_serial_session_send_log(&g_session, g_bytes, (size_t)n));
    }
    flush_tx();
  } else if (strcmp(words[0], "rx") == 0) {
    n = parse_hex(words[1], g_bytes, sizeof(g_bytes));
    if (n < 0) {
      puts("error bad hex");
    } else {
      pytvm_serial_session_receive(&g_session, g_bytes, (size_t)n);
    }
    flush_tx();
  } else if (strcmp(words[0], "state") == 0) {
    printf("state %u id %u nonce %u dropped %lu errors %lu limit %lu\n",
           (unsigned)g_session.state, (unsigned)g_session.session_id,
           (unsigned)g_session.local_nonce, (unsigned long)g_session.dropped,
           (unsigned long)g_session.decoder.errors,
           (unsigned long)pytvm_serial_session_tx_limit(&g_session));
  } else {
    printf("error unknown command %s\n", words[0]);
  }
}

/* ------------------------------------------------------------------ echo board */

static int64_t stdin_read(void* ctx, uint8_t* buf, size_t n) {
  int c = getchar();
  (void)ctx;
  (void)n;
  if (c == EOF) return ferror(stdin) ? -1 : 0;
  buf[0] = (uint8_t)c;
  return 1;
}

static int stdout_write(void* ctx, const uint8_t* data, size_t n) {
  (void)ctx;
  if (n > 4096) n = 4096;
  if (fwrite(data, 1, n, stdout) != n || fflush(stdout) != 0) return -1;
  return (int)n;
}

static uint8_t counter_nonce(void* ctx) {
  static uint8_t state = 0x30;
  (void)ctx;
  state = (uint8_t)(state * 5u + 0x3Bu);
  return state;
}

static int echo_main(uint8_t initiator) {
  static const uint8_t note[] = "echo: session restarted";
  static pytvm_serial_stream stream;
  static uint8_t buf[1000];
  pytvm_serial_stream_config config;
  memset(&config, 0, sizeof(config));
  config.session.rx_buffer = g_rx;
  config.session.rx_capacity = PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD;
  config.session.write = stdout_write;
  config.session.nonce = counter_nonce;
  config.read = stdin_read;
  config.initiator = initiator;
  if (pytvm_serial_stream_init(&stream, &config) != PYTVM_SERIAL_OK) return 2;
  for (;;) {
    int64_t got = pytvm_serial_stream_read(&stream, buf, sizeof(buf));
    if (got < 0) return 3;
    if (got == 0) {
      if (stream.eof) return 0;
      if (pytvm_serial_session_send_log(&stream.session, note, sizeof(note) - 1) != 0) return 4;
      continue;
    }
    if (pytvm_serial_stream_write(&stream, buf, (size_t)got) != PYTVM_SERIAL_OK) return 4;
  }
}

int main(int argc, char** argv) {
  if (argc > 1) {
    if (strcmp(argv[1], "--echo") == 0) return echo_main(0);
    if (strcmp(argv[1], "--echo-initiator") == 0) return echo_main(1);
    fprintf(stderr, "usage: serial_vectors [--echo | --echo-initiator] (commands on stdin)\n");
    return 2;
  }
  while (read_line()) {
    run(g_line);
    puts(".");
    fflush(stdout);
  }
  return 0;
}
