/*!
 * \file posix_fd_channel.h
 * \brief A MinRPC channel over two POSIX file descriptors (rpc.PopenSession's convention: the
 *        server reads requests from one and writes replies to the other), and the parser of
 *        their decimal command-line arguments. Defined in platform/posix_platform.c.
 */
#ifndef PYTVM_CRT_POSIX_FD_CHANNEL_H_
#define PYTVM_CRT_POSIX_FD_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The two descriptors; the channel's context. */
typedef struct {
  int read_fd;
  int write_fd;
} pytvm_fd_pair_t;

/*! \brief Read up to n bytes (retrying on EINTR): the count, 0 at end of file, -1 on error. */
int64_t pytvm_fd_pair_read(void* ctx, uint8_t* buf, size_t n);

/*! \brief Write all n bytes (retrying on EINTR and short writes): 0, or -1 on error. */
int32_t pytvm_fd_pair_write(void* ctx, const uint8_t* buf, size_t n);

/*! \brief A non-negative decimal file descriptor (at most 65535), or -1. */
int pytvm_parse_fd(const char* text);

#ifdef __cplusplus
}
#endif

#endif /* PYTVM_CRT_POSIX_FD_CHANNEL_H_ */
