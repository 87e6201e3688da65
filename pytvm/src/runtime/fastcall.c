/*!
 * \file fastcall.c
 * \brief Optional CPython extension: the Python -> C packed call without ctypes per call.
 *
 * call(faddr, resource, *args) packs common argument types (None, bool, int, float, str, bytes,
 * NDArray) straight into TVMValue slots, calls the packed C function with the GIL released,
 * and decodes common return types. Anything else goes through Python hooks installed with
 * configure(), so behaviour is identical to the ctypes path; only the speed differs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pytvm/c_runtime_api.h"

#define MAX_STACK_ARGS 16

typedef int (*PackedCFunc)(TVMValue*, int*, int, TVMValue*, int*, void*);

static PyObject* g_convert = NULL;     /* arg -> (type_index, int64 payload, keepalive) */
static PyObject* g_decode = NULL;      /* (raw int64, type_index) -> value */
static PyObject* g_raise = NULL;       /* () -> raises the pending error */
static PyObject* g_tensor_type = NULL; /* NDArray: passed as DLTensor* from _dl_address */
static PyObject* g_dl_address = NULL;  /* interned "_dl_address" */

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

static PyObject* fast_call(PyObject* self, PyObject* const* argv, Py_ssize_t nargs) {
  TVMValue stack_values[MAX_STACK_ARGS];
  int stack_codes[MAX_STACK_ARGS];
  TVMByteArray stack_bytes[MAX_STACK_ARGS];
  TVMValue* values = stack_values;
  int* codes = stack_codes;
  TVMByteArray* bytes = stack_bytes;
  PyObject* keep = NULL;
  PyObject* result = NULL;
  PackedCFunc func;
  void* resource;
  PyObject* const* args;
  Py_ssize_t n, i;
  TVMValue ret;
  int ret_code = kTVMNullptr;
  int rc;
  (void)self;
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "call(faddr, resource, *args)");
    return NULL;
  }
  func = (PackedCFunc)PyLong_AsVoidPtr(argv[0]);
  resource = PyLong_AsVoidPtr(argv[1]);
  if (PyErr_Occurred()) return NULL;
  args = argv + 2;
  n = nargs - 2;
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
  }
  ret.v_int64 = 0;
  Py_BEGIN_ALLOW_THREADS;
  rc = func(values, codes, (int)n, &ret, &ret_code, resource);
  Py_END_ALLOW_THREADS;
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
    {"configure", configure, METH_VARARGS,
     "configure(convert, decode, raise_error, tensor_type)"},
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
