/*!
 * \file fastcall.c
 * \brief Optional CPython extension: the Python -> C packed call without ctypes per call.
 *
 * invoke((faddr, resource, name), *args) packs common argument types (None, bool, int, float,
 * str, bytes, NDArray) straight into TVMValue slots, calls the packed C function with the GIL
 * released, and decodes common return types. Anything else goes through Python hooks installed
 * with configure(), so behaviour is identical to the ctypes path; only the speed differs.
 * call(faddr, resource, *args) is the same without a name.
 *
 * Hooks installed with configure_call(): a DLTensor* on an RPC device (type >= 128, memory of
 * another process) is refused before the call (one compare per tensor argument), and while
 * tracing is on (set_tracing(), kept in step with pytvm.ffi.trace.ON) the call is a span.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pytvm/c_runtime_api.h"

#define MAX_STACK_ARGS 16
#define RPC_SESS_MASK 128

typedef int (*PackedCFunc)(TVMValue*, int*, int, TVMValue*, int*, void*);

static PyObject* g_convert = NULL;     /* arg -> (type_index, int64 payload, keepalive) */
static PyObject* g_decode = NULL;      /* (raw int64, type_index) -> value */
static PyObject* g_raise = NULL;       /* () -> raises the pending error */
static PyObject* g_tensor_type = NULL; /* NDArray: passed as DLTensor* from _dl_address */
static PyObject* g_dl_address = NULL;  /* interned "_dl_address" */
static PyObject* g_foreign = NULL;     /* (name, index, arg, address) -> raises */
static int g_tracing = 0;              /* a copy of pytvm.ffi.trace.ON */
static PyObject* g_trace_begin = NULL; /* (name, nargs) -> span */
static PyObject* g_trace_end = NULL;   /* (span, rc) -> None */

static int pack_one(PyObject* arg, TVMValue* value, int* code, TVMByteArray* bytes,
                    PyObject** keep) {
  PyTypeObject* type = Py_TYPE(arg);
  if (type == &PyLong_Type) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (overflow == 0) {
      value->v_int64 = v;
      *code = kTVMArgInt;
      return 0;
    }
    /* Out of int64 range: the converter below raises the ctypes path's error. */
  }
  if (type == &PyFloat_Type) {
    value->v_float64 = PyFloat_AS_DOUBLE(arg);
    *code = kTVMArgFloat;
    return 0;
  }
  if ((PyObject*)type == g_tensor_type) {
    PyObject* address = PyObject_GetAttr(arg, g_dl_address);
    if (address == NULL) return -1;
    value->v_handle = PyLong_AsVoidPtr(address);
    Py_DECREF(address);
    *code = kTVMDLTensorHandle;
    return PyErr_Occurred() ? -1 : 0;
  }
  if (arg == Py_None) {
    value->v_handle = NULL;
    *code = kTVMNullptr;
    return 0;
  }
  if (type == &PyBool_Type) {
    value->v_int64 = arg == Py_True;
    *code = kTVMArgBool;
    return 0;
  }
  if (type == &PyUnicode_Type) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(arg, &size); /* cached in the str */
    if (text != NULL && (Py_ssize_t)strlen(text) == size) {
      value->v_str = text;
      *code = kTVMStr;
      return 0;
    }
    /* Not encodable (lone surrogate) or holding a NUL: the converter raises the ctypes error. */
    PyErr_Clear();
  }
  if (type == &PyBytes_Type) {
    bytes->data = PyBytes_AS_STRING(arg);
    bytes->size = (size_t)PyBytes_GET_SIZE(arg);
    value->v_handle = bytes;
    *code = kTVMBytes;
    return 0;
  }
  {
    /* Everything else: the Python converter decides (same code as the ctypes path). */
    PyObject* result = PyObject_CallOneArg(g_convert, arg);
    long long payload;
    if (result == NULL) return -1;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 3) {
      Py_DECREF(result);
      PyErr_SetString(PyExc_SystemError, "fastcall converter must return a 3-tuple");
      return -1;
    }
    *code = (int)PyLong_AsLong(PyTuple_GET_ITEM(result, 0));
    payload = PyLong_AsLongLong(PyTuple_GET_ITEM(result, 1));
    if (payload == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      payload = (long long)PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(result, 1));
    }
    value->v_int64 = payload;
    if (*keep == NULL && (*keep = PyList_New(0)) == NULL) {
      Py_DECREF(result);
      return -1;
    }
    if (PyList_Append(*keep, result) != 0) {
      Py_DECREF(result);
      return -1;
    }
    Py_DECREF(result);
    return PyErr_Occurred() ? -1 : 0;
  }
}

static PyObject* decode(TVMValue ret, int code) {
  switch (code) {
    case kTVMNullptr:
      Py_RETURN_NONE;
    case kTVMArgInt:
      return PyLong_FromLongLong(ret.v_int64);
    case kTVMArgBool:
      return PyBool_FromLong(ret.v_int64 != 0);
    case kTVMArgFloat:
      return PyFloat_FromDouble(ret.v_float64);
    case kTVMStr:
      return ret.v_str != NULL ? PyUnicode_FromString(ret.v_str) : PyUnicode_FromString("");
    default:
      return PyObject_CallFunction(g_decode, "Li", (long long)ret.v_int64, code);
  }
}

/* Refuse a DLTensor* whose memory lives in another process (an RPC device). */
static int check_tensor(PyObject* name, Py_ssize_t index, PyObject* arg, const TVMValue* value) {
  PyObject* raised;
  const DLTensor* tensor = (const DLTensor*)value->v_handle;
  if (tensor == NULL || (int)tensor->device.device_type < RPC_SESS_MASK) return 0;
  if (g_foreign == NULL) {
    PyErr_SetString(PyExc_ValueError, "a tensor of another process cannot be passed to C");
    return -1;
  }
  raised = PyObject_CallFunction(g_foreign, "OnOK", name, index, arg,
                                 (unsigned long long)(uintptr_t)tensor);
  if (raised != NULL) { /* the hook must raise */
    Py_DECREF(raised);
    PyErr_SetString(PyExc_SystemError, "fastcall: the foreign-tensor hook did not raise");
  }
  return -1;
}

static PyObject* packed_call(PackedCFunc func, void* resource, PyObject* name,
                             PyObject* const* args, Py_ssize_t n) {
  TVMValue stack_values[MAX_STACK_ARGS];
  int stack_codes[MAX_STACK_ARGS];
  TVMByteArray stack_bytes[MAX_STACK_ARGS];
  TVMValue* values = stack_values;
  int* codes = stack_codes;
  TVMByteArray* bytes = stack_bytes;
  PyObject* keep = NULL;
  PyObject* result = NULL;
  PyObject* span = NULL;
  Py_ssize_t i;
  TVMValue ret;
  int ret_code = kTVMNullptr;
  int rc;
  if (n > MAX_STACK_ARGS) {
    values = (TVMValue*)PyMem_Malloc(sizeof(TVMValue) * (size_t)n);
    codes = (int*)PyMem_Malloc(sizeof(int) * (size_t)n);
    bytes = (TVMByteArray*)PyMem_Malloc(sizeof(TVMByteArray) * (size_t)n);
    if (values == NULL || codes == NULL || bytes == NULL) {
      PyErr_NoMemory();
      goto done;
    }
  }
  for (i = 0; i < n; ++i) {
    if (pack_one(args[i], &values[i], &codes[i], &bytes[i], &keep) != 0) {
      goto done;
    }
    if (codes[i] == kTVMDLTensorHandle && check_tensor(name, i, args[i], &values[i]) != 0) {
      goto done;
    }
  }
  if (g_tracing && g_trace_begin != NULL) {
    span = PyObject_CallFunction(g_trace_begin, "On", name, n);
    if (span == NULL) goto done;
  }
  ret.v_int64 = 0;
  Py_BEGIN_ALLOW_THREADS;
  rc = func(values, codes, (int)n, &ret, &ret_code, resource);
  Py_END_ALLOW_THREADS;
  if (span != NULL) {
    PyObject* ended = PyObject_CallFunction(g_trace_end, "Oi", span, rc);
    Py_DECREF(span);
    if (ended == NULL) goto done; /* the C call ran; a failing recorder still surfaces */
    Py_DECREF(ended);
  }
  if (rc != 0) {
    result = PyObject_CallNoArgs(g_raise); /* raises; returns NULL */
    if (result != NULL) {
      Py_DECREF(result);
      result = NULL;
      PyErr_SetString(PyExc_SystemError, "packed call failed without an error");
    }
    goto done;
  }
  result = decode(ret, ret_code);
done:
  Py_XDECREF(keep);
  if (values != stack_values) {
    PyMem_Free(values);
    PyMem_Free(codes);
    PyMem_Free(bytes);
  }
  return result;
}

static PyObject* fast_call(PyObject* self, PyObject* const* argv, Py_ssize_t nargs) {
  PackedCFunc func;
  void* resource;
  (void)self;
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "call(faddr, resource, *args)");
    return NULL;
  }
  func = (PackedCFunc)PyLong_AsVoidPtr(argv[0]);
  resource = PyLong_AsVoidPtr(argv[1]);
  if (PyErr_Occurred()) return NULL;
  return packed_call(func, resource, Py_None, argv + 2, nargs - 2);
}

/* invoke((faddr, resource, name), *args): the record is built once per function. */
static PyObject* fast_invoke(PyObject* self, PyObject* const* argv, Py_ssize_t nargs) {
  PyObject* record;
  PackedCFunc func;
  void* resource;
  (void)self;
  if (nargs < 1 || !PyTuple_Check(argv[0]) || PyTuple_GET_SIZE(argv[0]) != 3) {
    PyErr_SetString(PyExc_TypeError, "invoke((faddr, resource, name), *args)");
    return NULL;
  }
  record = argv[0];
  func = (PackedCFunc)PyLong_AsVoidPtr(PyTuple_GET_ITEM(record, 0));
  resource = PyLong_AsVoidPtr(PyTuple_GET_ITEM(record, 1));
  if (PyErr_Occurred()) return NULL;
  return packed_call(func, resource, PyTuple_GET_ITEM(record, 2), argv + 1, nargs - 1);
}

static PyObject* configure_call(PyObject* self, PyObject* args) {
  PyObject *foreign, *begin, *end;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOO", &foreign, &begin, &end)) return NULL;
  Py_XSETREF(g_foreign, Py_NewRef(foreign));
  Py_XSETREF(g_trace_begin, Py_NewRef(begin));
  Py_XSETREF(g_trace_end, Py_NewRef(end));
  Py_RETURN_NONE;
}

static PyObject* set_tracing(PyObject* self, PyObject* on) {
  int flag = PyObject_IsTrue(on);
  (void)self;
  if (flag < 0) return NULL;
  g_tracing = flag;
  Py_RETURN_NONE;
}

static PyObject* configure(PyObject* self, PyObject* args) {
  PyObject *convert, *decoder, *raiser, *tensor_type;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOOO", &convert, &decoder, &raiser, &tensor_type)) return NULL;
  Py_XSETREF(g_convert, Py_NewRef(convert));
  Py_XSETREF(g_decode, Py_NewRef(decoder));
  Py_XSETREF(g_raise, Py_NewRef(raiser));
  Py_XSETREF(g_tensor_type, Py_NewRef(tensor_type));
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"call", (PyCFunction)(void (*)(void))fast_call, METH_FASTCALL,
     "call(faddr, resource, *args) -> result of the packed C function"},
    {"invoke", (PyCFunction)(void (*)(void))fast_invoke, METH_FASTCALL,
     "invoke((faddr, resource, name), *args) -> result of the packed C function"},
    {"configure", configure, METH_VARARGS,
     "configure(convert, decode, raise_error, tensor_type)"},
    {"configure_call", configure_call, METH_VARARGS,
     "configure_call(foreign_tensor, trace_begin, trace_end)"},
    {"set_tracing", set_tracing, METH_O, "set_tracing(on): record calls as trace spans"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pytvm_fastcall",
                                    "Fast Python -> C packed calls.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pytvm_fastcall(void) {
  g_dl_address = PyUnicode_InternFromString("_dl_address");
  if (g_dl_address == NULL) return NULL;
  g_tensor_type = Py_NewRef(Py_None);
  return PyModule_Create(&module);
}
