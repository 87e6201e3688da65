/*!
 * \file minrpc_names.c
 * \brief Names of the wire's RPC codes (spec section 4) and server statuses (section 4.1), as
 *        TVM spells them, for error texts. The lowest MinRPC module: it calls nothing.
 *
 * The code names serve only the details of error texts: without TVM_CRT_ERROR_TEXTS (the
 * minimal configuration) they are compiled out.
 *
 * tests/crt/test_wire_tables.py compares both tables with pytvm's Python enums.
 */
#include "minrpc_internal.h"

const char* pytvm_minrpc_status_name(int32_t status) {
  static const char* const kStatusNames[] = {
      "kSuccess",
      "kInvalidTypeCodeObject",
      "kInvalidTypeCodeTensor",
      "kInvalidDLTensorFieldStride",
      "kInvalidDLTensorFieldByteOffset",
      "kUnknownTypeIndex",
      "kUnknownRPCCode",
      "kRPCCodeNotSupported",
      "kUnknownRPCSyscall",
      "kCheckError",
      "kReadError",
      "kWriteError",
      "kAllocError",
  };
  if ((status < 0) || (status > (int32_t)kMinRPCAllocError)) {
    return "kUnknownStatus";
  }
  return kStatusNames[status];
}

#if TVM_CRT_ERROR_TEXTS
const char* pytvm_minrpc_code_name(int32_t code) {
  static const char* const kCodeNames[] = {
      "kNone",
      "kShutdown",
      "kInitServer",
      "kCallFunc",
      "kReturn",
      "kException",
      "kCopyFromRemote",
      "kCopyToRemote",
      "kCopyAck",
      "kGetGlobalFunc",
      "kFreeHandle",
      "kDevSetDevice",
      "kDevGetAttr",
      "kDevAllocData",
      "kDevFreeData",
      "kDevStreamSync",
      "kCopyAmongRemote",
      "kDevAllocDataWithScope",
      "kDevCreateStream",
      "kDevFreeStream",
      "kDevSetStream",
      "kDevGetCurrentStream",
  };
  if ((code < 0) || (code > MINRPC_CODE_DEV_GET_CURRENT_STREAM)) {
    return "code";
  }
  return kCodeNames[code];
}
#endif /* TVM_CRT_ERROR_TEXTS */
