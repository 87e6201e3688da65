/*!
 * \file time_evaluator.c
 * \brief `runtime.RPCTimeEvaluator`, the timing loop TVM and pytvm clients call for
 *        `module.time_evaluator(name, dev, ...)`, run inside the C runtime with the platform
 *        timer (TVMPlatformTimerStart / TVMPlatformTimerStop).
 *
 * `runtime.RPCTimeEvaluator(module, name, device_type, device_id, number, repeat, min_repeat_ms,
 * limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes,
 * f_preproc_name)` returns the function `runtime.RPCTimeEvaluator.evaluate`; calling that with a
 * kernel's arguments calls the kernel once (warm-up), then for each of `repeat` repeats calls
 * it `number` times between two timer reads (growing `number` until a repeat lasts
 * `min_repeat_ms`, as TVM's evaluator) and synchronises the device, and returns the mean
 * seconds per call of each repeat as `repeat` doubles (bytes).
 *
 * One evaluator at a time (no heap): creating another replaces the settings of the first.
 * There is no sleep, cache flush or preprocessing function here, so `cooldown_interval_ms`,
 * `cache_flush_bytes` and `f_preproc_name` must be 0 / empty (the clients' defaults).
 * Registered by pytvm_crt_register_time_evaluator (a program that has a timer calls it).
 */
#include "crt_internal.h"
#include "pytvm_crt/crt.h"

/*! \brief Names of the two global functions. */
#define TIME_EVALUATOR_NAME "runtime.RPCTimeEvaluator"
#define TIME_EVALUATOR_RUN_NAME "runtime.RPCTimeEvaluator.evaluate"
/*! \brief Arguments of runtime.RPCTimeEvaluator. */
#define TIME_EVALUATOR_NUM_ARGS 12
/*! \brief Most calls in one timed batch (number grows towards min_repeat_ms up to this). */
#define TIME_EVALUATOR_MAX_NUMBER ((int64_t)1 << 40)

typedef struct {
  TVMFunctionHandle func;
  int device_type;
  int device_id;
  int64_t number;
  int64_t repeat;
  int64_t min_repeat_ms;
  int64_t limit_zero_time_iterations;
} time_evaluator_t;

static time_evaluator_t g_evaluator;
static double g_results[TVM_CRT_MAX_TIME_EVALUATOR_REPEAT];
static TVMByteArray g_result_bytes;

static int setup_error(const char* what) {
  pytvm_crt_text* msg =
      pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", TIME_EVALUATOR_NAME));
  PYTVM_CRT_MSG_STR(msg, ": ");
  PYTVM_CRT_MSG_STR(msg, what);
  return -1;
}

static int timer_error(tvm_crt_error_t err) {
  pytvm_crt_text* msg =
      pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("RuntimeError", TIME_EVALUATOR_RUN_NAME));
  PYTVM_CRT_MSG_STR(msg, ": the platform timer failed: ");
  PYTVM_CRT_MSG_STR(msg, pytvm_crt_error_string((int)err));
  return -1;
}

static int create_evaluator(TVMValue* args, int* type_codes, int num_args, TVMValue* ret_value,
                            int* ret_type_code, void* resource_handle) {
  static const int kExpected[TIME_EVALUATOR_NUM_ARGS] = {
      kTVMModuleHandle, kTVMStr,    kTVMArgInt, kTVMArgInt, kTVMArgInt, kTVMArgInt,
      kTVMArgInt,       kTVMArgInt, kTVMArgInt, kTVMArgInt, kTVMArgInt, kTVMStr};
  TVMFunctionHandle func = NULL;
  TVMFunctionHandle run = NULL;
  int i;
  (void)resource_handle;
  if (num_args != TIME_EVALUATOR_NUM_ARGS) {
    return setup_error(
        "expected (module, name, device_type, device_id, number, repeat, min_repeat_ms, "
        "limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown, "
        "cache_flush_bytes, f_preproc_name)");
  }
  for (i = 0; i < TIME_EVALUATOR_NUM_ARGS; ++i) {
    if (type_codes[i] != kExpected[i]) {
      pytvm_crt_text* msg =
          pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("TypeError", TIME_EVALUATOR_NAME));
      PYTVM_CRT_MSG_STR(msg, ": argument ");
      PYTVM_CRT_MSG_I64(msg, i);
      PYTVM_CRT_MSG_STR(msg, " has type code ");
      PYTVM_CRT_MSG_I64(msg, type_codes[i]);
      PYTVM_CRT_MSG_STR(msg, ", expected ");
      PYTVM_CRT_MSG_I64(msg, kExpected[i]);
      return -1;
    }
  }
  if ((args[4].v_int64 <= 0) || (args[5].v_int64 <= 0)) {
    return setup_error("number and repeat must be > 0");
  }
  if (args[5].v_int64 > TVM_CRT_MAX_TIME_EVALUATOR_REPEAT) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("ValueError", TIME_EVALUATOR_NAME));
    PYTVM_CRT_MSG_STR(msg, ": repeat is ");
    PYTVM_CRT_MSG_I64(msg, args[5].v_int64);
    PYTVM_CRT_MSG_STR(msg, ", this runtime keeps at most ");
    PYTVM_CRT_MSG_I64(msg, TVM_CRT_MAX_TIME_EVALUATOR_REPEAT);
    return -1;
  }
  if ((args[6].v_int64 < 0) || (args[7].v_int64 < 0)) {
    return setup_error("min_repeat_ms and limit_zero_time_iterations must be >= 0");
  }
  if ((args[8].v_int64 != 0) || (args[10].v_int64 != 0) || (args[11].v_str[0] != '\0')) {
    return setup_error(
        "the C runtime cannot sleep, flush caches or call a preprocessing function: pass "
        "cooldown_interval_ms=0, cache_flush_bytes=0 and no f_preproc");
  }
  if (TVMModGetFunction(args[0].v_handle, args[1].v_str, 0, &func) != 0) {
    return -1;
  }
  if (func == NULL) {
    pytvm_crt_text* msg =
        pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD("AttributeError", TIME_EVALUATOR_NAME));
    PYTVM_CRT_MSG_STR(msg, ": the module has no function '");
    PYTVM_CRT_MSG_STRN(msg, args[1].v_str, TVM_CRT_MAX_STRLEN_FUNCTION_NAME);
    PYTVM_CRT_MSG_STR(msg, "'");
    return -1;
  }
  if ((TVMFuncGetGlobal(TIME_EVALUATOR_RUN_NAME, &run) != 0) || (run == NULL)) {
    return setup_error("its evaluate function is not registered");
  }
  g_evaluator.func = func;
  g_evaluator.device_type = (int)args[2].v_int64;
  g_evaluator.device_id = (int)args[3].v_int64;
  g_evaluator.number = args[4].v_int64;
  g_evaluator.repeat = args[5].v_int64;
  g_evaluator.min_repeat_ms = args[6].v_int64;
  g_evaluator.limit_zero_time_iterations = args[7].v_int64;
  ret_value->v_handle = run;
  *ret_type_code = kTVMPackedFuncHandle;
  return 0;
}

/* Seconds for `number` calls of the function, the device synchronised before the timer stops;
 * -1 after the last error is set. */
static int time_batch(TVMValue* args, int* type_codes, int num_args, int64_t number,
                      double* seconds) {
  TVMValue ret;
  int ret_code = kTVMNullptr;
  int64_t k;
  tvm_crt_error_t err = TVMPlatformTimerStart();
  if (err != kTvmErrorNoError) {
    return timer_error(err);
  }
  for (k = 0; k < number; ++k) {
    if (TVMFuncCall(g_evaluator.func, args, type_codes, num_args, &ret, &ret_code) != 0) {
      (void)TVMPlatformTimerStop(seconds);
      return -1;
    }
  }
  if (TVMSynchronize(g_evaluator.device_type, g_evaluator.device_id, NULL) != 0) {
    (void)TVMPlatformTimerStop(seconds);
    return -1;
  }
  err = TVMPlatformTimerStop(seconds);
  return (err != kTvmErrorNoError) ? timer_error(err) : 0;
}

static int run_evaluator(TVMValue* args, int* type_codes, int num_args, TVMValue* ret_value,
                         int* ret_type_code, void* resource_handle) {
  TVMValue ret;
  int ret_code = kTVMNullptr;
  int64_t number = g_evaluator.number;
  double min_seconds = (double)g_evaluator.min_repeat_ms / 1000.0;
  int64_t i;
  (void)resource_handle;
  if (g_evaluator.func == NULL) {
    (void)pytvm_crt_error_begin(PYTVM_CRT_ERROR_HEAD(
        "RuntimeError", TIME_EVALUATOR_RUN_NAME ": call runtime.RPCTimeEvaluator first"));
    return -1;
  }
  /* Warm up, and surface errors before timing. */
  if (TVMFuncCall(g_evaluator.func, args, type_codes, num_args, &ret, &ret_code) != 0) {
    return -1;
  }
  for (i = 0; i < g_evaluator.repeat; ++i) {
    double seconds = 0.0;
    int64_t zero_times = 0;
    for (;;) {
      if (time_batch(args, type_codes, num_args, number, &seconds) != 0) {
        return -1;
      }
      if ((seconds >= min_seconds) || (number >= TIME_EVALUATOR_MAX_NUMBER) ||
          ((seconds <= 0.0) && (zero_times >= g_evaluator.limit_zero_time_iterations))) {
        break;
      }
      if (seconds <= 0.0) {
        zero_times += 1;
        number *= 2;
      } else { /* as TVM: enough calls to fill min_repeat_ms, at least 1.618 times as many */
        double needed = (min_seconds / (seconds / (double)number)) + 1.0;
        double golden = (double)number * 1.618;
        double next = (needed > golden) ? needed : golden;
        number = (next < (double)TIME_EVALUATOR_MAX_NUMBER) ? (int64_t)next
                                                             : TIME_EVALUATOR_MAX_NUMBER;
      }
      if (number > TIME_EVALUATOR_MAX_NUMBER) {
        number = TIME_EVALUATOR_MAX_NUMBER;
      }
    }
    g_results[i] = seconds / (double)number;
  }
  g_result_bytes.data = (const char*)(const void*)g_results;
  g_result_bytes.size = (size_t)g_evaluator.repeat * sizeof(double);
  ret_value->v_handle = &g_result_bytes;
  *ret_type_code = kTVMBytes;
  return 0;
}

int pytvm_crt_register_time_evaluator(void) {
  g_evaluator.func = NULL;
  if (pytvm_crt_func_register_global(TIME_EVALUATOR_RUN_NAME, run_evaluator, 1) != 0) {
    return -1;
  }
  return pytvm_crt_func_register_global(TIME_EVALUATOR_NAME, create_evaluator, 1);
}
