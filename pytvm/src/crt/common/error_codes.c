/*! \file error_codes.c \brief Descriptions of tvm_crt_error_t codes. */
#include "pytvm_crt/error_codes.h"

const char* pytvm_crt_error_string(int code) {
  const char* text;
  switch (code) {
    case kTvmErrorNoError: text = "no error"; break;
    case kTvmErrorFunctionNameNotFound: text = "function name not found"; break;
    case kTvmErrorFunctionIndexInvalid: text = "function index invalid"; break;
    case kTvmErrorFunctionRegistryFull: text = "function registry full"; break;
    case kTvmErrorFunctionAlreadyDefined: text = "function already defined"; break;
    case kTvmErrorBufferTooSmall: text = "buffer too small"; break;
    case kTvmErrorFunctionNameTooLong: text = "function name too long"; break;
    case kTvmErrorFunctionNameEmpty: text = "function name empty"; break;
    case kTvmErrorPlatformCheckFailure: text = "check failure"; break;
    case kTvmErrorPlatformMemoryManagerInitialized: text = "memory manager initialized"; break;
    case kTvmErrorPlatformShutdown: text = "platform shut down"; break;
    case kTvmErrorPlatformNoMemory: text = "out of memory"; break;
    case kTvmErrorPlatformTimerBadState: text = "timer in wrong state"; break;
    case kTvmErrorPlatformStackAllocBadFree: text = "workspace freed out of LIFO order"; break;
    case kTvmErrorPlatformBadFree: text = "free of a pointer that is not allocated"; break;
    case kTvmErrorPlatformWorkspaceFull: text = "workspace full"; break;
    case kTvmErrorPlatformNotInitialized: text = "runtime not initialized"; break;
    case kTvmErrorFunctionCallInvalidHandle: text = "invalid function handle"; break;
    case kTvmErrorFunctionCallNumArguments: text = "wrong number of arguments"; break;
    case kTvmErrorFunctionCallWrongArgType: text = "wrong argument type"; break;
    case kTvmErrorModuleTableFull: text = "module table full"; break;
    case kTvmErrorModuleInvalidHandle: text = "invalid module handle"; break;
    case kTvmErrorModuleInvalid: text = "invalid module"; break;
    case kTvmErrorDeviceApiNotRegistered: text = "no device API registered"; break;
    case kTvmErrorDeviceApiTableFull: text = "device API table full"; break;
    case kTvmErrorDeviceApiIncomplete: text = "device API has a NULL function"; break;
    case kTvmErrorDeviceUnsupported: text = "unsupported device"; break;
    case kTvmErrorDeviceCopySizeMismatch: text = "copy sizes differ"; break;
    case kTvmErrorDeviceTensorNotCompact: text = "tensor not compact"; break;
    case kTvmErrorDeviceAlignment: text = "unsupported alignment"; break;
    case kTvmErrorArgumentNull: text = "NULL argument"; break;
    case kTvmErrorArgumentOutOfRange: text = "argument out of range"; break;
    case kTvmErrorArgumentOverflow: text = "size overflow"; break;
    default: text = "unknown error"; break;
  }
  return text;
}
