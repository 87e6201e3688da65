/*!
 * \file pytvm_crt/aot_executor.h
 * \brief The AOT executor on the device: one ahead-of-time compiled model (its static input and
 *        output buffers and its `tvmgen_<mod>_run`) served as a CRT module through MinRPC.
 *
 * The integrator (a generated project's app_init.c) describes the model in a
 * `pytvm_aot_model` and calls pytvm_aot_executor_register after TVMInitializeRuntime. That
 * registers the global `tvm.aot_executor.create`; calling it (TVM v0.18's arguments
 * `(module, device, mod_name)`, or `(mod_name)`, or none) returns the executor module, whose
 * functions are:
 *
 *   get_num_inputs() / get_num_outputs()      -> int
 *   get_input_index(name)                     -> int, -1 when no input has that name
 *   get_input_name(i)                         -> str
 *   get_input_info(i) / get_output_info(i)    -> str "name|dtype|d0,d1,..." ("float32", "int8")
 *   set_input(index_or_name, tensor)          copies the tensor into the input buffer
 *   get_input(index_or_name, out)             copies the input buffer into out
 *   get_output(index, out)                    copies the output buffer into out
 *   run()                                     calls the model's run function
 *
 * Tensors must be CPU, compact, of the model's dtype and shape; anything else is refused with
 * a "ValueError"/"TypeError"/"IndexError" last error naming the function and the tensor. The
 * module lives in the module table, so `runtime.RPCTimeEvaluator` times its `run`.
 * No allocation: one model per program, its buffers owned by the integrator.
 */
#ifndef PYTVM_CRT_AOT_EXECUTOR_H_
#define PYTVM_CRT_AOT_EXECUTOR_H_

#include <stdint.h>

#include "pytvm_crt/tvm_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Most inputs plus outputs a model may have (the run call's pointer arrays). */
#ifndef PYTVM_AOT_MAX_TENSORS
#define PYTVM_AOT_MAX_TENSORS 32
#endif

/*! \brief One input or output: its name, dtype, shape and static buffer (compact, row-major). */
typedef struct {
  const char* name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t* shape;
  void* data;
} pytvm_aot_tensor;

/*!
 * \brief The model's run: inputs[i] / outputs[i] are the data pointers of the model's tensors,
 *        in order. Returns 0, or the generated code's nonzero error code.
 */
typedef int32_t (*pytvm_aot_run_fn)(void* const* inputs, void* const* outputs);

/*! \brief An ahead-of-time compiled model as the executor serves it. */
typedef struct {
  const char* mod_name;
  int32_t num_inputs;
  const pytvm_aot_tensor* inputs;
  int32_t num_outputs;
  const pytvm_aot_tensor* outputs;
  pytvm_aot_run_fn run;
} pytvm_aot_model;

/*!
 * \brief Serve `model` (borrowed; it must outlive the runtime) and register the global
 *        `tvm.aot_executor.create`. Call after TVMInitializeRuntime (which forgets it).
 * \return 0, or -1 after TVMAPISetLastError (a malformed model: NULL members, more than
 *         PYTVM_AOT_MAX_TENSORS tensors, a tensor without a buffer; a full global registry).
 */
int pytvm_aot_executor_register(const pytvm_aot_model* model);

#ifdef __cplusplus
}
#endif
#endif /* PYTVM_CRT_AOT_EXECUTOR_H_ */
