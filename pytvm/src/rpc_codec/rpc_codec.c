/*!
 * \file rpc_codec.c
 * \brief Optional CPython extension: RPC packed sequences and call packets encoded and decoded
 *        in C (spec/rpc-protocol.md sections 3-5, TVM 0.27's wire bytes).
 *
 * The pure-Python codec (pytvm/rpc/wire/values.py, protocol.py) is the reference. This module
 * handles the common kinds itself -- None, bool, int, float, str, bytes (exact types) -- and
 * hands every other value to the Python codec through the hooks installed with configure():
 *
 *   encode_value(v) -> bytes           one PSEQ entry of a value C does not encode;
 *   decode_value(buf, pos, end, field, limits) -> (value, new_pos): one entry C does not decode,
 *                                      or one C found malformed (the Python decoder then raises
 *                                      the ProtocolError that names the field);
 *   ProtocolError                      the class raised for a bad count.
 *
 * So the bytes produced and the errors raised are the Python codec's; only the speed differs.
 * Decoding never reads outside the buffer: every field is checked against the bytes left
 * before it is read, and a length field is checked before anything is allocated.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
  kNone = 0,
  kInt = 1,
  kBool = 2,
  kFloat = 3,
  kRawStr = 8,
  kByteArrayPtr = 9,
  kCallFunc = 3,
  kReturn = 4,
};

static PyObject* g_encode_value = NULL; /* v -> bytes */
static PyObject* g_decode_value = NULL; /* (buf, pos, end, field, limits) -> (value, pos) */
static PyObject* g_protocol_error = NULL;

/* ------------------------------------------------------------------ little-endian helpers */

static void put_u32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

static uint64_t get_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* ------------------------------------------------------------------ growable output buffer */

typedef struct {
  unsigned char* data;
  size_t len;
  size_t cap;
  unsigned char small[512];
} Out;

static void out_init(Out* o) {
  o->data = o->small;
  o->len = 0;
  o->cap = sizeof(o->small);
}

static void out_free(Out* o) {
  if (o->data != o->small) PyMem_Free(o->data);
}

/* Room for n more bytes; a pointer to them, or NULL with MemoryError set. */
static unsigned char* out_grow(Out* o, size_t n) {
  if (n > (size_t)PY_SSIZE_T_MAX - o->len) {
    PyErr_NoMemory();
    return NULL;
  }
  if (o->len + n > o->cap) {
    size_t cap = o->cap;
    while (cap < o->len + n) cap = cap > (size_t)PY_SSIZE_T_MAX / 2 ? o->len + n : cap * 2;
    unsigned char* data = (unsigned char*)PyMem_Malloc(cap);
    if (data == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    memcpy(data, o->data, o->len);
    out_free(o);
    o->data = data;
    o->cap = cap;
  }
  unsigned char* at = o->data + o->len;
  o->len += n;
  return at;
}

static int out_tag_u64(Out* o, int32_t tag, uint64_t payload) {
  unsigned char* p = out_grow(o, 12);
  if (p == NULL) return -1;
  put_u32(p, (uint32_t)tag);
  put_u64(p + 4, payload);
  return 0;
}

static int out_tag_blob(Out* o, int32_t tag, const char* data, Py_ssize_t n) {
  unsigned char* p = out_grow(o, 12 + (size_t)n);
  if (p == NULL) return -1;
  put_u32(p, (uint32_t)tag);
  put_u64(p + 4, (uint64_t)n);
  if (n) memcpy(p + 12, data, (size_t)n);
  return 0;
}

/* The Python codec's entry for v (it raises the ProtocolError for a value it cannot encode). */
static int encode_by_python(Out* o, PyObject* v) {
  PyObject* b = PyObject_CallOneArg(g_encode_value, v);
  if (b == NULL) return -1;
  if (!PyBytes_Check(b)) {
    Py_DECREF(b);
    PyErr_SetString(PyExc_TypeError, "rpc codec: encode_value hook must return bytes");
    return -1;
  }
  Py_ssize_t n = PyBytes_GET_SIZE(b);
  unsigned char* p = out_grow(o, (size_t)n);
  if (p != NULL && n) memcpy(p, PyBytes_AS_STRING(b), (size_t)n);
  Py_DECREF(b);
  return p == NULL ? -1 : 0;
}

static int encode_one(Out* o, PyObject* v) {
  PyTypeObject* t = Py_TYPE(v);
  if (t == &PyLong_Type) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) return encode_by_python(o, v); /* its error names the value */
    if (x == -1 && PyErr_Occurred()) return -1;
    return out_tag_u64(o, kInt, (uint64_t)x);
  }
  if (t == &PyFloat_Type) {
    double d = PyFloat_AS_DOUBLE(v);
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    return out_tag_u64(o, kFloat, bits);
  }
  if (v == Py_None) {
    unsigned char* p = out_grow(o, 4);
    if (p == NULL) return -1;
    put_u32(p, kNone);
    return 0;
  }
  if (t == &PyBool_Type) return out_tag_u64(o, kBool, v == Py_True ? 1u : 0u);
  if (t == &PyUnicode_Type) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(v, &n);
    if (s == NULL) { /* e.g. a lone surrogate: the Python codec words the error */
      PyErr_Clear();
      return encode_by_python(o, v);
    }
    return out_tag_blob(o, kRawStr, s, n);
  }
  if (t == &PyBytes_Type) {
    return out_tag_blob(o, kByteArrayPtr, PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v));
  }
  return encode_by_python(o, v);
}

/* i32 count (the values' number plus `extra`), then each value of `values` (a list or tuple);
 * `tag`, when not NULL, is written first as an Int (the type index of a call's result).
 */
static int encode_values(Out* o, PyObject* values, PyObject* tag) {
  PyObject* seq = PySequence_Fast(values, "rpc codec: values must be a list or tuple");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int extra = tag != NULL;
  int rc = -1;
  if (n > INT32_MAX - extra) {
    PyErr_Format(g_protocol_error, "%zd values do not fit a packed sequence's int32 count", n);
    goto done;
  }
  unsigned char* p = out_grow(o, 4);
  if (p == NULL) goto done;
  put_u32(p, (uint32_t)(n + extra));
  if (tag != NULL) {
    long long t = PyLong_AsLongLong(tag); /* an int or IntEnum type index */
    if (t == -1 && PyErr_Occurred()) goto done;
    if (out_tag_u64(o, kInt, (uint64_t)t) != 0) goto done;
  }
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (encode_one(o, items[i]) != 0) goto done;
  }
  rc = 0;
done:
  Py_DECREF(seq);
  return rc;
}

/* The packet `o` holds (its first 8 bytes reserved for the length) as bytes. */
static PyObject* finish_packet(Out* o) {
  put_u64(o->data, (uint64_t)(o->len - 8));
  PyObject* r = PyBytes_FromStringAndSize((const char*)o->data, (Py_ssize_t)o->len);
  out_free(o);
  return r;
}

static int begin_packet(Out* o, int32_t code) {
  unsigned char* p = out_grow(o, 12);
  if (p == NULL) return -1;
  put_u32(p + 8, (uint32_t)code);
  return 0;
}

static PyObject* py_encode_pseq(PyObject* self, PyObject* values) {
  (void)self;
  Out o;
  out_init(&o);
  if (encode_values(&o, values, NULL) != 0) {
    out_free(&o);
    return NULL;
  }
  PyObject* r = PyBytes_FromStringAndSize((const char*)o.data, (Py_ssize_t)o.len);
  out_free(&o);
  return r;
}

static PyObject* py_encode_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "encode_call(handle, values)");
    return NULL;
  }
  unsigned long long handle = PyLong_AsUnsignedLongLong(args[0]);
  if (handle == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(g_protocol_error, "function handle %R does not fit the wire's uint64", args[0]);
    return NULL;
  }
  Out o;
  out_init(&o);
  unsigned char* p;
  if (begin_packet(&o, kCallFunc) != 0 || (p = out_grow(&o, 8)) == NULL) goto fail;
  put_u64(p, handle);
  if (encode_values(&o, args[1], NULL) != 0) goto fail;
  return finish_packet(&o);
fail:
  out_free(&o);
  return NULL;
}

/* kReturn with the values as they are (code 4), or of a call: the type tag as an Int first. */
static PyObject* py_encode_return(PyObject* self, PyObject* values) {
  (void)self;
  Out o;
  out_init(&o);
  if (begin_packet(&o, kReturn) != 0 || encode_values(&o, values, NULL) != 0) {
    out_free(&o);
    return NULL;
  }
  return finish_packet(&o);
}

static PyObject* py_encode_call_return(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "encode_call_return(type_tag, values)");
    return NULL;
  }
  Out o;
  out_init(&o);
  if (begin_packet(&o, kReturn) != 0 || encode_values(&o, args[1], args[0]) != 0) {
    out_free(&o);
    return NULL;
  }
  return finish_packet(&o);
}

/* ------------------------------------------------------------------ decoding */

/* Arguments of a decode: the buffer, the body's end, the bounds, names for the hook. */
typedef struct {
  PyObject* buf_obj;
  const unsigned char* buf;
  Py_ssize_t end;
  long long max_args;
  unsigned long long max_bytes;
  PyObject* what;
  PyObject* limits;
} Decode;

/* One entry by the Python decoder at pos (it raises for a malformed one); 0 or -1. */
static int decode_by_python(const Decode* d, Py_ssize_t i, Py_ssize_t* pos, PyObject* out_list) {
  PyObject* field = PyUnicode_FromFormat("%U[%zd]", d->what, i);
  if (field == NULL) return -1;
  PyObject* r = PyObject_CallFunction(g_decode_value, "OnnOO", d->buf_obj, *pos, d->end, field,
                                      d->limits);
  Py_DECREF(field);
  if (r == NULL) return -1;
  if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_TypeError, "rpc codec: decode_value hook must return (value, pos)");
    return -1;
  }
  Py_ssize_t np = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
  if (np == -1 && PyErr_Occurred()) {
    Py_DECREF(r);
    return -1;
  }
  if (np <= *pos || np > d->end) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_RuntimeError, "rpc codec: decode_value hook moved outside the body");
    return -1;
  }
  *pos = np;
  int rc = PyList_Append(out_list, PyTuple_GET_ITEM(r, 0));
  Py_DECREF(r);
  return rc;
}

/* One entry of a common kind decoded here; NULL without an error set: not handled (unknown
 * kind, short or malformed field), for the Python decoder to decode or to word the error.
 */
static PyObject* decode_fast(const unsigned char* buf, Py_ssize_t len, Py_ssize_t* pos,
                             unsigned long long max_bytes) {
  Py_ssize_t at = *pos;
  Py_ssize_t left = len - at;
  if (left < 4) return NULL;
  int32_t tag = (int32_t)get_u32(buf + at);
  if (tag == kNone) {
    *pos = at + 4;
    Py_RETURN_NONE;
  }
  if (left < 12) return NULL;
  uint64_t payload = get_u64(buf + at + 4);
  switch (tag) {
    case kInt:
      *pos = at + 12;
      return PyLong_FromLongLong((long long)payload);
    case kFloat: {
      double d;
      memcpy(&d, &payload, sizeof(d));
      *pos = at + 12;
      return PyFloat_FromDouble(d);
    }
    case kBool:
      *pos = at + 12;
      return PyBool_FromLong(payload != 0);
    case kRawStr:
    case kByteArrayPtr: {
      if (payload > max_bytes || payload > (uint64_t)(left - 12)) return NULL;
      const char* s = (const char*)buf + at + 12;
      Py_ssize_t n = (Py_ssize_t)payload;
      PyObject* v;
      if (tag == kRawStr) {
        v = PyUnicode_DecodeUTF8(s, n, "strict");
        if (v == NULL) { /* the Python decoder words the error */
          PyErr_Clear();
          return NULL;
        }
      } else {
        v = PyBytes_FromStringAndSize(s, n);
        if (v == NULL) return NULL; /* MemoryError stays set */
      }
      *pos = at + 12 + n;
      return v;
    }
    default:
      return NULL;
  }
}

/* The packed sequence at *pos of d's body: a new list, *pos moved past it; NULL with an error. */
static PyObject* decode_values(const Decode* d, Py_ssize_t* pos) {
  const unsigned char* buf = d->buf;
  Py_ssize_t end = d->end;
  Py_ssize_t at = *pos;
  if (end - at < 4) {
    PyErr_Format(g_protocol_error, "%U count: needs 4 bytes but the packet has %zd left",
                 d->what, end - at);
    return NULL;
  }
  int32_t n = (int32_t)get_u32(buf + at);
  at += 4;
  /* Every value takes at least its 4-byte type index: n is bounded by the packet too. */
  if (n < 0 || (long long)n > d->max_args || 4 * (long long)n > (long long)(end - at)) {
    PyErr_Format(g_protocol_error, "%U count %d impossible (limit %lld, %zd bytes left)",
                 d->what, (int)n, d->max_args, end - at);
    return NULL;
  }
  PyObject* list = PyList_New(n);
  if (list == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = decode_fast(buf, end, &at, d->max_bytes);
    if (v == NULL) {
      if (PyErr_Occurred()) goto fail;
      /* the Python decoder appends to a scratch list; moved into slot i */
      PyObject* one = PyList_New(0);
      if (one == NULL) goto fail;
      if (decode_by_python(d, i, &at, one) != 0) {
        Py_DECREF(one);
        goto fail;
      }
      v = Py_NewRef(PyList_GET_ITEM(one, 0));
      Py_DECREF(one);
    }
    PyList_SET_ITEM(list, i, v);
  }
  *pos = at;
  return list;
fail:
  Py_DECREF(list); /* unset slots are NULL: list dealloc skips them */
  return NULL;
}

/* Fill d from the call's buffer object and bounds; 0, or -1 with an error (view released). */
static int decode_begin(Decode* d, Py_buffer* view, PyObject* buf, Py_ssize_t pos,
                        Py_ssize_t end, PyObject* max_args, PyObject* max_bytes, PyObject* what,
                        PyObject* limits) {
  if (!PyUnicode_Check(what)) {
    PyErr_SetString(PyExc_TypeError, "rpc codec: what must be a str");
    return -1;
  }
  d->max_args = PyLong_AsLongLong(max_args);
  if (d->max_args == -1 && PyErr_Occurred()) return -1;
  d->max_bytes = PyLong_AsUnsignedLongLong(max_bytes);
  if (d->max_bytes == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  if (PyObject_GetBuffer(buf, view, PyBUF_SIMPLE) != 0) return -1;
  if (end < 0) end = view->len;
  if (pos < 0 || end > view->len || pos > end) {
    PyErr_Format(PyExc_ValueError, "rpc codec: range %zd..%zd outside the %zd-byte buffer", pos,
                 end, view->len);
    PyBuffer_Release(view);
    return -1;
  }
  d->buf_obj = buf;
  d->buf = (const unsigned char*)view->buf;
  d->end = end;
  d->what = what;
  d->limits = limits;
  return 0;
}

/* decode_pseq(buf, pos, end, max_args, max_bytes, what, limits) -> (list, new_pos); end -1:
 * the buffer's end.
 */
static PyObject* py_decode_pseq(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError,
                    "decode_pseq(buf, pos, end, max_args, max_bytes, what, limits)");
    return NULL;
  }
  Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
  if (pos == -1 && PyErr_Occurred()) return NULL;
  Py_ssize_t end = PyLong_AsSsize_t(args[2]);
  if (end == -1 && PyErr_Occurred()) return NULL;
  Decode d;
  Py_buffer view;
  if (decode_begin(&d, &view, args[0], pos, end, args[3], args[4], args[5], args[6]) != 0) {
    return NULL;
  }
  PyObject* list = decode_values(&d, &pos);
  PyBuffer_Release(&view);
  if (list == NULL) return NULL;
  return Py_BuildValue("(Nn)", list, pos);
}

/* packet_at(buf, pos, max_packet) -> (code, body_start, body_end) of the complete, non-empty
 * packet at pos with a length in 4..max_packet; None otherwise (too few bytes yet, padding, a
 * bad length: the caller's general path reads, skips or refuses it).
 */
static int packet_at(const unsigned char* buf, Py_ssize_t len, Py_ssize_t pos,
                     unsigned long long max_packet, int32_t* code, Py_ssize_t* start,
                     Py_ssize_t* end) {
  if (pos < 0 || pos > len || len - pos < 12) return 0;
  uint64_t size = get_u64(buf + pos);
  if (size < 4 || size > max_packet || size > (uint64_t)(len - pos - 8)) return 0;
  *code = (int32_t)get_u32(buf + pos + 8);
  *start = pos + 12;
  *end = pos + 8 + (Py_ssize_t)size;
  return 1;
}

static PyObject* py_packet_at(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "packet_at(buf, pos, max_packet)");
    return NULL;
  }
  Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
  if (pos == -1 && PyErr_Occurred()) return NULL;
  unsigned long long max_packet = PyLong_AsUnsignedLongLong(args[2]);
  if (max_packet == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) != 0) return NULL;
  int32_t code = 0;
  Py_ssize_t start = 0, end = 0;
  int found = packet_at((const unsigned char*)view.buf, view.len, pos, max_packet, &code,
                        &start, &end);
  PyBuffer_Release(&view);
  if (!found) Py_RETURN_NONE;
  return Py_BuildValue("(inn)", (int)code, start, end);
}

/* take_return(buf, pos, max_packet, max_args, max_bytes, limits) -> (values, new_pos) of the
 * complete kReturn packet at pos; None when the packet there is not one (or not whole yet).
 * A malformed kReturn raises ProtocolError (the packet is consumed: new_pos is not returned).
 */
static PyObject* py_take_return(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError,
                    "take_return(buf, pos, max_packet, max_args, max_bytes, limits)");
    return NULL;
  }
  Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
  if (pos == -1 && PyErr_Occurred()) return NULL;
  unsigned long long max_packet = PyLong_AsUnsignedLongLong(args[2]);
  if (max_packet == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  static PyObject* what = NULL;
  if (what == NULL && (what = PyUnicode_InternFromString("return values")) == NULL) return NULL;
  Decode d;
  Py_buffer view;
  if (decode_begin(&d, &view, args[0], 0, -1, args[3], args[4], what, args[5]) != 0) {
    return NULL;
  }
  int32_t code = 0;
  Py_ssize_t start = 0, end = 0;
  if (!packet_at(d.buf, d.end, pos, max_packet, &code, &start, &end) || code != kReturn) {
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
  }
  d.end = end;
  PyObject* list = decode_values(&d, &start);
  PyBuffer_Release(&view);
  if (list == NULL) return NULL;
  if (start != end) {
    Py_DECREF(list);
    PyErr_Format(g_protocol_error, "kReturn: %zd unexpected trailing bytes", end - start);
    return NULL;
  }
  return Py_BuildValue("(Nn)", list, end);
}

static PyObject* py_configure(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "configure(encode_value, decode_value, ProtocolError)");
    return NULL;
  }
  Py_XSETREF(g_encode_value, Py_NewRef(args[0]));
  Py_XSETREF(g_decode_value, Py_NewRef(args[1]));
  Py_XSETREF(g_protocol_error, Py_NewRef(args[2]));
  Py_RETURN_NONE;
}

static PyMethodDef kMethods[] = {
    {"configure", (PyCFunction)(void (*)(void))py_configure, METH_FASTCALL,
     "configure(encode_value, decode_value, ProtocolError): the Python codec's hooks."},
    {"encode_pseq", py_encode_pseq, METH_O, "encode_pseq(values) -> bytes"},
    {"encode_call", (PyCFunction)(void (*)(void))py_encode_call, METH_FASTCALL,
     "encode_call(handle, values) -> the framed kCallFunc packet"},
    {"encode_return", py_encode_return, METH_O,
     "encode_return(values) -> the framed kReturn packet"},
    {"encode_call_return", (PyCFunction)(void (*)(void))py_encode_call_return, METH_FASTCALL,
     "encode_call_return(type_tag, values) -> the framed kReturn packet of a call"},
    {"decode_pseq", (PyCFunction)(void (*)(void))py_decode_pseq, METH_FASTCALL,
     "decode_pseq(buf, pos, end, max_args, max_bytes, what, limits) -> (list, new_pos)"},
    {"packet_at", (PyCFunction)(void (*)(void))py_packet_at, METH_FASTCALL,
     "packet_at(buf, pos, max_packet) -> (code, body_start, body_end) or None"},
    {"take_return", (PyCFunction)(void (*)(void))py_take_return, METH_FASTCALL,
     "take_return(buf, pos, max_packet, max_args, max_bytes, limits) -> (values, pos) or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_pytvm_rpc_codec",
    "RPC packed sequences and call packets encoded and decoded in C.", -1, kMethods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pytvm_rpc_codec(void) { return PyModule_Create(&kModule); }
