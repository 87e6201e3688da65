/*!
 * \file minrpc_copy.c
 * \brief kCopyToRemote and kCopyFromRemote (spec section 5.5) without a packet-sized buffer.
 *
 * CPU memory is read into / written from in place, after checking that the range lies in an
 * allocation this server made. Other devices go through a staging piece of at most
 * MINRPC_STAGE_BYTES in the arena and TVMDeviceCopyDataFromTo + TVMSynchronize per piece.
 */
#include <string.h>

#include "minrpc_internal.h"
#include "pytvm_crt/crt.h"

/*! \brief A 1-d uint8 view of n bytes at data + byte_offset on dev. */
static void ByteView(DLTensor* t, int64_t* shape, void* data, DLDevice dev, uint64_t byte_offset,
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
static MinRPCStep DeviceCopy(MinRPCServer* s, const DLTensor* dev_tensor, uint64_t offset,
                             uint8_t* host, uint64_t n, int32_t to_device) {
  static const DLDevice kCpu = {1, 0};
  DLTensor dev_view;
  DLTensor host_view;
  int64_t dev_shape[1];
  int64_t host_shape[1];
  int32_t rc;
  ByteView(&dev_view, dev_shape, dev_tensor->data, dev_tensor->device, offset, n);
  ByteView(&host_view, host_shape, host, kCpu, 0u, n);
  rc = (to_device != 0) ? TVMDeviceCopyDataFromTo(&host_view, &dev_view, NULL)
                        : TVMDeviceCopyDataFromTo(&dev_view, &host_view, NULL);
  if (rc == 0) {
    rc = TVMSynchronize(dev_tensor->device.device_type, dev_tensor->device.device_id, NULL);
  }
  if (rc != 0) {
    return MinRPCFailText(s, TVMGetLastError());
  }
  return MINRPC_OK;
}

/*! \brief Read the descriptor and nbytes of a kCopyToRemote (the payload stays unread). */
static MinRPCStep ReadCopyHead(MinRPCServer* s, DLTensor** t, uint64_t* nbytes) {
  uint8_t head[MINRPC_DESC_FIXED_BYTES + 8u * MINRPC_MAX_NDIM + 8u];
  MinRPCReader r;
  int32_t ndim;
  size_t rest;
  uint64_t tensor_bytes = 0u;
  if (s->packet_left < (uint64_t)MINRPC_DESC_HEAD_BYTES) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyToRemote is shorter than its descriptor");
  }
  if (MinRPCReadBody(s, head, MINRPC_DESC_HEAD_BYTES) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  ndim = (int32_t)MinRPCGetU32(head + 16);
  if ((ndim < 0) || (ndim > MINRPC_MAX_NDIM)) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyToRemote descriptor ndim %ld outside 0..%d",
                      (long)ndim, (int)MINRPC_MAX_NDIM);
  }
  rest = 8u * (size_t)ndim + 16u; /* shape, byte_offset, nbytes */
  if (s->packet_left < (uint64_t)rest) {
    return MinRPCFail(s, kMinRPCCheckError, "kCopyToRemote is shorter than its descriptor");
  }
  if (MinRPCReadBody(s, head + MINRPC_DESC_HEAD_BYTES, rest) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  r.server = s;
  r.p = head;
  r.left = MINRPC_DESC_HEAD_BYTES + rest;
  if ((MinRPCReadTensor(&r, t, &tensor_bytes, "kCopyToRemote descriptor") != MINRPC_OK) ||
      (MinRPCReadU64(&r, nbytes, "kCopyToRemote nbytes") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (*nbytes != s->packet_left) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "kCopyToRemote nbytes %llu disagrees with the %llu bytes left in the packet",
                      (unsigned long long)*nbytes, (unsigned long long)s->packet_left);
  }
  return MINRPC_OK;
}

/*! \brief Stream the payload into a non-CPU tensor piece by piece through a staging buffer. */
static MinRPCStep StreamToDevice(MinRPCServer* s, const DLTensor* t, uint64_t nbytes) {
  uint64_t piece_max = (nbytes < (uint64_t)MINRPC_STAGE_BYTES) ? nbytes : MINRPC_STAGE_BYTES;
  uint64_t done = 0u;
  MinRPCStep step = MINRPC_OK;
  uint8_t* stage = MinRPCStageOpen(s, (size_t)piece_max + 1u);
  if (stage == NULL) {
    return MINRPC_ERROR;
  }
  while ((step == MINRPC_OK) && (done < nbytes)) {
    uint64_t piece = ((nbytes - done) < piece_max) ? (nbytes - done) : piece_max;
    step = MinRPCReadBody(s, stage, (size_t)piece);
    if (step == MINRPC_OK) {
      step = DeviceCopy(s, t, t->byte_offset + done, stage, piece, 1);
    }
    done += piece;
  }
  MinRPCStageClose(s, stage);
  return step;
}

MinRPCStep MinRPCHandleCopyToRemote(MinRPCServer* s) {
  DLTensor* t = NULL;
  uint64_t nbytes = 0u;
  TVMValue none;
  MinRPCStep step = ReadCopyHead(s, &t, &nbytes);
  if (step == MINRPC_OK) {
    step = MinRPCCheckTensor(s, t, nbytes, "kCopyToRemote");
  }
  if (step == MINRPC_OK) {
    if (t->device.device_type == (int32_t)kDLCPU) {
      step = MinRPCReadBody(s, (uint8_t*)t->data + t->byte_offset, (size_t)nbytes);
    } else {
      step = StreamToDevice(s, t, nbytes);
    }
  }
  if (step != MINRPC_OK) {
    return step; /* the caller drains what is left of the payload */
  }
  none.v_handle = NULL;
  return MinRPCSendReturn(s, 0, (int32_t)kTVMNullptr, none);
}

/*! \brief Send a kCopyAck whose data comes from a non-CPU tensor through a staging buffer.
 *  The first piece is fetched before the header, so a failing device is still answered with
 *  kException; a failure after the header ends the session (the reply cannot change). */
static MinRPCStep StreamFromDevice(MinRPCServer* s, const DLTensor* t, uint64_t nbytes,
                                   const uint8_t* head, size_t head_len) {
  uint64_t piece_max = (nbytes < (uint64_t)MINRPC_STAGE_BYTES) ? nbytes : MINRPC_STAGE_BYTES;
  uint64_t done = 0u;
  MinRPCStep step = MINRPC_OK;
  uint8_t* stage = MinRPCStageOpen(s, (size_t)piece_max + 1u);
  if (stage == NULL) {
    return MINRPC_ERROR;
  }
  if (nbytes == 0u) {
    step = MinRPCWrite(s, head, head_len);
  }
  while ((step == MINRPC_OK) && (done < nbytes)) {
    uint64_t piece = ((nbytes - done) < piece_max) ? (nbytes - done) : piece_max;
    step = DeviceCopy(s, t, t->byte_offset + done, stage, piece, 0);
    if ((step != MINRPC_OK) && (done != 0u)) {
      step = MinRPCFatal(s, kMinRPCCheckError);
    }
    if ((step == MINRPC_OK) && (done == 0u)) {
      step = MinRPCWrite(s, head, head_len);
    }
    if (step == MINRPC_OK) {
      step = MinRPCWrite(s, stage, (size_t)piece);
    }
    done += piece;
  }
  MinRPCStageClose(s, stage);
  return step;
}

MinRPCStep MinRPCHandleCopyFromRemote(MinRPCServer* s, MinRPCReader* r) {
  DLTensor* t = NULL;
  uint64_t tensor_bytes = 0u;
  uint64_t nbytes = 0u;
  uint8_t head[12];
  if ((MinRPCReadTensor(r, &t, &tensor_bytes, "kCopyFromRemote descriptor") != MINRPC_OK) ||
      (MinRPCReadU64(r, &nbytes, "kCopyFromRemote nbytes") != MINRPC_OK) ||
      (MinRPCReadEnd(r, "kCopyFromRemote") != MINRPC_OK)) {
    return MINRPC_ERROR;
  }
  if (nbytes > ((uint64_t)MINRPC_MAX_PACKET - 4u)) {
    return MinRPCFail(s, kMinRPCCheckError,
                      "kCopyFromRemote of %llu bytes exceeds the %lu-byte packet limit; ask "
                      "%s and split the copy",
                      (unsigned long long)nbytes, (unsigned long)MINRPC_MAX_PACKET,
                      MINRPC_MAX_PACKET_FUNC);
  }
  if (MinRPCCheckTensor(s, t, nbytes, "kCopyFromRemote") != MINRPC_OK) {
    return MINRPC_ERROR;
  }
  MinRPCPutU64(head, 4u + nbytes);
  MinRPCPutU32(head + 8, (uint32_t)MINRPC_CODE_COPY_ACK);
  if (t->device.device_type != (int32_t)kDLCPU) {
    return StreamFromDevice(s, t, nbytes, head, sizeof(head));
  }
  if (MinRPCWrite(s, head, sizeof(head)) != MINRPC_OK) {
    return MINRPC_FATAL;
  }
  return MinRPCWrite(s, (const uint8_t*)t->data + t->byte_offset, (size_t)nbytes);
}
