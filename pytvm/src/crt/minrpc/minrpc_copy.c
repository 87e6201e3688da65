/*!
 * \file minrpc_copy.c
 * \brief kCopyToRemote and kCopyFromRemote (spec section 5.5) without a packet-sized buffer.
 *
 * CPU memory is read into / written from in place, after checking that the range lies in an
 * allocation this server made. Other devices go through a staging piece of at most
 * MINRPC_STAGE_BYTES in the arena and TVMDeviceCopyDataFromTo + TVMSynchronize per piece
 * (compiled in with TVM_CRT_ACCELERATOR).
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

#if TVM_CRT_ACCELERATOR
/*! \brief A 1-d uint8 view of n bytes at data + byte_offset on dev. */
static void byte_view(DLTensor* t, int64_t* shape, void* data, DLDevice dev, uint64_t byte_offset,
                     uint64_t n) {
  shape[0] = (int64_t)n;
  t->data = data;
  t->device = dev;
  t->ndim = 1;
  t->dtype.code = (uint8_t)kDLUInt;
  t->dtype.bits = 8u;
  t->dtype.lanes = 1u;
  t->shape = shape;
  t->strides = NULL;
  t->byte_offset = byte_offset;
}

/*! \brief Copy n bytes between host memory and a device range, then wait for it. */
static pytvm_minrpc_step device_copy(pytvm_minrpc_server* s, const DLTensor* dev_tensor, uint64_t offset,
                             uint8_t* host, uint64_t n, int32_t to_device) {
  static const DLDevice kCpu = {1, 0};
  DLTensor dev_view;
  DLTensor host_view;
  int64_t dev_shape[1];
  int64_t host_shape[1];
  int32_t rc;
  byte_view(&dev_view, dev_shape, dev_tensor->data, dev_tensor->device, offset, n);
  byte_view(&host_view, host_shape, host, kCpu, 0u, n);
  rc = (to_device != 0) ? TVMDeviceCopyDataFromTo(&host_view, &dev_view, NULL)
                        : TVMDeviceCopyDataFromTo(&dev_view, &host_view, NULL);
  if (rc == 0) {
    rc = TVMSynchronize(dev_tensor->device.device_type, dev_tensor->device.device_id, NULL);
  }
  if (rc != 0) {
    return pytvm_minrpc_fail_text(s, TVMGetLastError());
  }
  return MINRPC_OK;
}

#endif /* TVM_CRT_ACCELERATOR */

#if !TVM_CRT_ACCELERATOR
/*! \brief The answer for a non-CPU tensor when accelerator support is compiled out. */
static pytvm_minrpc_step not_cpu(pytvm_minrpc_server* s) {
  pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCRPCCodeNotSupported);
  PYTVM_CRT_MSG_STR(msg, ": copies to or from a non-CPU device (built without TVM_CRT_ACCELERATOR)");
  return MINRPC_ERROR;
}
#endif

/*! \brief Read the descriptor and nbytes of a kCopyToRemote (the payload stays unread). */
static pytvm_minrpc_step read_copy_head(pytvm_minrpc_server* s, DLTensor** t, uint64_t* nbytes) {
  uint8_t head[MINRPC_DESC_FIXED_BYTES + 8u * MINRPC_MAX_NDIM + 8u];
  pytvm_minrpc_reader r;
  int32_t ndim;
  size_t rest;
  uint64_t tensor_bytes = 0u;
  pytvm_minrpc_step step;
  /* read_body refuses a descriptor longer than the packet (MINRPC_ERROR), FATAL: the channel */
  step = pytvm_minrpc_read_body(s, head, MINRPC_DESC_HEAD_BYTES);
  if (step != MINRPC_OK) {
    return step;
  }
  ndim = (int32_t)pytvm_minrpc_get_u32(head + 16);
  if ((ndim < 0) || (ndim > MINRPC_MAX_NDIM)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyToRemote descriptor ndim ");
    PYTVM_CRT_MSG_I64(msg, ndim);
    PYTVM_CRT_MSG_STR(msg, " outside 0..");
    PYTVM_CRT_MSG_I64(msg, MINRPC_MAX_NDIM);
    return MINRPC_ERROR;
  }
  rest = 8u * (size_t)ndim + 16u; /* shape, byte_offset, nbytes */
  step = pytvm_minrpc_read_body(s, head + MINRPC_DESC_HEAD_BYTES, rest);
  if (step != MINRPC_OK) {
    return step;
  }
  r.server = s;
  r.p = head;
  r.left = MINRPC_DESC_HEAD_BYTES + rest;
  if ((pytvm_minrpc_read_tensor(&r, t, &tensor_bytes,
                                MINRPC_NAME("kCopyToRemote descriptor")) != MINRPC_OK) ||
      (pytvm_minrpc_read_u64(&r, nbytes, MINRPC_NAME("kCopyToRemote nbytes")) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (*nbytes != (uint64_t)s->packet_left) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyToRemote nbytes ");
    PYTVM_CRT_MSG_U64(msg, *nbytes);
    PYTVM_CRT_MSG_STR(msg, " disagrees with the ");
    PYTVM_CRT_MSG_U64(msg, s->packet_left);
    PYTVM_CRT_MSG_STR(msg, " bytes left in the packet");
    return MINRPC_ERROR;
  }
  return MINRPC_OK;
}

#if TVM_CRT_ACCELERATOR
/*! \brief A copy of `total` bytes in pieces through one staging buffer. */
typedef struct {
  uint8_t* stage;     /*!< piece_max + 1 bytes, from pytvm_minrpc_stage_open */
  uint64_t total;     /*!< bytes to copy */
  uint64_t piece_max; /*!< the smaller of total and MINRPC_STAGE_BYTES */
  uint64_t done;      /*!< bytes in the pieces before the current one */
  uint64_t piece;     /*!< the current piece's length */
} staged_copy;

/*! \brief Open the staging buffer for copying `nbytes`; MINRPC_ERROR if none could be had. */
static pytvm_minrpc_step staged_open(pytvm_minrpc_server* s, uint64_t nbytes, staged_copy* c) {
  c->total = nbytes;
  c->piece_max = (nbytes < (uint64_t)MINRPC_STAGE_BYTES) ? nbytes : MINRPC_STAGE_BYTES;
  c->done = 0u;
  c->piece = 0u;
  c->stage = pytvm_minrpc_stage_open(s, (size_t)c->piece_max + 1u);
  return (c->stage == NULL) ? MINRPC_ERROR : MINRPC_OK;
}

/*! \brief Move past the current piece: 1 with the next one in c->piece (starting at c->done),
 *  0 when every byte is copied. */
static int staged_next(staged_copy* c) {
  c->done += c->piece;
  if (c->done >= c->total) {
    return 0;
  }
  c->piece = ((c->total - c->done) < c->piece_max) ? (c->total - c->done) : c->piece_max;
  return 1;
}

/*! \brief Stream the payload into a non-CPU tensor piece by piece through a staging buffer. */
static pytvm_minrpc_step stream_to_device(pytvm_minrpc_server* s, const DLTensor* t, uint64_t nbytes) {
  staged_copy c;
  pytvm_minrpc_step step = staged_open(s, nbytes, &c);
  if (step != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  while ((step == MINRPC_OK) && (staged_next(&c) != 0)) {
    step = pytvm_minrpc_read_body(s, c.stage, (size_t)c.piece);
    if (step == MINRPC_OK) {
      step = device_copy(s, t, t->byte_offset + c.done, c.stage, c.piece, 1);
    }
  }
  pytvm_minrpc_stage_close(s, c.stage);
  return step;
}
#endif /* TVM_CRT_ACCELERATOR */

pytvm_minrpc_step pytvm_minrpc_handle_copy_to_remote(pytvm_minrpc_server* s) {
  DLTensor* t = NULL;
  uint64_t nbytes = 0u;
  TVMValue none;
  pytvm_minrpc_step step = read_copy_head(s, &t, &nbytes);
  if (step == MINRPC_OK) {
    step = pytvm_minrpc_check_tensor(s, t, nbytes, MINRPC_NAME("kCopyToRemote"));
  }
  if (step == MINRPC_OK) {
    if (t->device.device_type == (int32_t)kDLCPU) {
      step = pytvm_minrpc_read_body(s, (uint8_t*)t->data + t->byte_offset, (size_t)nbytes);
    } else {
#if TVM_CRT_ACCELERATOR
      step = stream_to_device(s, t, nbytes);
#else
      step = not_cpu(s);
#endif
    }
  }
  if (step != MINRPC_OK) {
    return step; /* the caller drains what is left of the payload */
  }
  none.v_handle = NULL;
  return pytvm_minrpc_send_return(s, 0, (int32_t)kTVMNullptr, none);
}

#if TVM_CRT_ACCELERATOR
/*! \brief Send a kCopyAck whose data comes from a non-CPU tensor through a staging buffer.
 *  The first piece is fetched before the header, so a failing device is still answered with
 *  kException; a failure after the header ends the session (the reply cannot change). */
static pytvm_minrpc_step stream_from_device(pytvm_minrpc_server* s, const DLTensor* t, uint64_t nbytes,
                                   const uint8_t* head, size_t head_len) {
  staged_copy c;
  pytvm_minrpc_step step = staged_open(s, nbytes, &c);
  if (step != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  if (nbytes == 0u) {
    step = pytvm_minrpc_write(s, head, head_len);
  }
  while ((step == MINRPC_OK) && (staged_next(&c) != 0)) {
    step = device_copy(s, t, t->byte_offset + c.done, c.stage, c.piece, 0);
    if ((step != MINRPC_OK) && (c.done != 0u)) {
      step = pytvm_minrpc_fatal(s, kMinRPCCheckError);
    }
    if ((step == MINRPC_OK) && (c.done == 0u)) {
      step = pytvm_minrpc_write(s, head, head_len);
    }
    if (step == MINRPC_OK) {
      step = pytvm_minrpc_write(s, c.stage, (size_t)c.piece);
    }
  }
  pytvm_minrpc_stage_close(s, c.stage);
  return step;
}
#endif /* TVM_CRT_ACCELERATOR */

pytvm_minrpc_step pytvm_minrpc_handle_copy_from_remote(pytvm_minrpc_server* s, pytvm_minrpc_reader* r) {
  DLTensor* t = NULL;
  uint64_t tensor_bytes = 0u;
  uint64_t nbytes = 0u;
  uint8_t head[12];
  if ((pytvm_minrpc_read_tensor(r, &t, &tensor_bytes,
                                MINRPC_NAME("kCopyFromRemote descriptor")) != MINRPC_OK) ||
      (pytvm_minrpc_read_u64(r, &nbytes, MINRPC_NAME("kCopyFromRemote nbytes")) != MINRPC_OK) ||
      (pytvm_minrpc_read_end(r, MINRPC_NAME("kCopyFromRemote")) != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (nbytes > ((uint64_t)MINRPC_MAX_PACKET - 4u)) {
    pytvm_crt_text* msg = pytvm_minrpc_error(s, kMinRPCCheckError);
    PYTVM_CRT_MSG_STR(msg, ": kCopyFromRemote of ");
    PYTVM_CRT_MSG_U64(msg, nbytes);
    PYTVM_CRT_MSG_STR(msg, " bytes exceeds the ");
    PYTVM_CRT_MSG_U64(msg, MINRPC_MAX_PACKET);
    PYTVM_CRT_MSG_STR(msg, "-byte packet limit; ask ");
    PYTVM_CRT_MSG_STR(msg, MINRPC_MAX_PACKET_FUNC);
    PYTVM_CRT_MSG_STR(msg, " and split the copy");
    return MINRPC_ERROR;
  }
  if (pytvm_minrpc_check_tensor(s, t, nbytes, MINRPC_NAME("kCopyFromRemote")) != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  pytvm_minrpc_put_u64(head, 4u + nbytes);
  pytvm_minrpc_put_u32(head + 8, (uint32_t)MINRPC_CODE_COPY_ACK);
  if (t->device.device_type != (int32_t)kDLCPU) {
#if TVM_CRT_ACCELERATOR
    return stream_from_device(s, t, nbytes, head, sizeof(head));
#else
    return not_cpu(s);
#endif
  }
  if (pytvm_minrpc_write(s, head, sizeof(head)) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  return pytvm_minrpc_write(s, (const uint8_t*)t->data + t->byte_offset, (size_t)nbytes);
}
