/*!
 * \file pytvm_crt/error_codes.h
 * \brief tvm_crt_error_t: the C runtime's error codes, (category << 8) | code; 0 is success.
 */
#ifndef PYTVM_CRT_ERROR_CODES_H_
#define PYTVM_CRT_ERROR_CODES_H_

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Build an error code from a category and a code within it (both < 256). */
#define TVM_CRT_ERROR(category, code) (((category) << 8) | (code))

/*! \brief Error categories; other CRT components define their codes with TVM_CRT_ERROR. */
typedef enum {
  kTvmErrorCategoryFunctionRegistry = 1,
  kTvmErrorCategoryFraming = 2,
  kTvmErrorCategoryWriteStream = 3,
  kTvmErrorCategorySession = 4,
  kTvmErrorCategoryPlatform = 5,
  kTvmErrorCategoryGenerated = 6,
  kTvmErrorCategoryGraphExecutor = 7,
  kTvmErrorCategoryFunctionCall = 8,
  kTvmErrorCategoryTimeEvaluator = 9,
  kTvmErrorCategoryModule = 10,
  kTvmErrorCategoryDevice = 11,
  kTvmErrorCategoryArgument = 12,
  kTvmErrorCategoryMinRpc = 13
} tvm_crt_error_category_t;

typedef enum {
  kTvmErrorNoError = 0,

  /* Function registry. */
  kTvmErrorFunctionNameNotFound = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x00),
  kTvmErrorFunctionIndexInvalid = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x01),
  kTvmErrorFunctionRegistryFull = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x02),
  kTvmErrorFunctionAlreadyDefined = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x03),
  kTvmErrorBufferTooSmall = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x04),
  kTvmErrorFunctionNameTooLong = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x05),
  kTvmErrorFunctionNameEmpty = TVM_CRT_ERROR(kTvmErrorCategoryFunctionRegistry, 0x06),

  /* Platform: memory, timers, workspace. */
  kTvmErrorPlatformCheckFailure = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x00),
  kTvmErrorPlatformMemoryManagerInitialized = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x01),
  kTvmErrorPlatformShutdown = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x02),
  kTvmErrorPlatformNoMemory = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x03),
  kTvmErrorPlatformTimerBadState = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x04),
  kTvmErrorPlatformStackAllocBadFree = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x05),
  kTvmErrorPlatformBadFree = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x06),
  kTvmErrorPlatformWorkspaceFull = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x07),
  kTvmErrorPlatformNotInitialized = TVM_CRT_ERROR(kTvmErrorCategoryPlatform, 0x08),

  /* Function calls. */
  kTvmErrorFunctionCallInvalidHandle = TVM_CRT_ERROR(kTvmErrorCategoryFunctionCall, 0x00),
  kTvmErrorFunctionCallNumArguments = TVM_CRT_ERROR(kTvmErrorCategoryFunctionCall, 0x01),
  kTvmErrorFunctionCallWrongArgType = TVM_CRT_ERROR(kTvmErrorCategoryFunctionCall, 0x02),

  /* Module table. */
  kTvmErrorModuleTableFull = TVM_CRT_ERROR(kTvmErrorCategoryModule, 0x00),
  kTvmErrorModuleInvalidHandle = TVM_CRT_ERROR(kTvmErrorCategoryModule, 0x01),
  kTvmErrorModuleInvalid = TVM_CRT_ERROR(kTvmErrorCategoryModule, 0x02),

  /* Device API table and data movement. */
  kTvmErrorDeviceApiNotRegistered = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x00),
  kTvmErrorDeviceApiTableFull = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x01),
  kTvmErrorDeviceApiIncomplete = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x02),
  kTvmErrorDeviceUnsupported = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x03),
  kTvmErrorDeviceCopySizeMismatch = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x04),
  kTvmErrorDeviceTensorNotCompact = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x05),
  kTvmErrorDeviceAlignment = TVM_CRT_ERROR(kTvmErrorCategoryDevice, 0x06),

  /* Arguments. */
  kTvmErrorArgumentNull = TVM_CRT_ERROR(kTvmErrorCategoryArgument, 0x00),
  kTvmErrorArgumentOutOfRange = TVM_CRT_ERROR(kTvmErrorCategoryArgument, 0x01),
  kTvmErrorArgumentOverflow = TVM_CRT_ERROR(kTvmErrorCategoryArgument, 0x02)
} tvm_crt_error_t;

/*! \brief A short constant description of an error code ("unknown error" if none). */
const char* pytvm_crt_error_string(int code);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_ERROR_CODES_H_ */
