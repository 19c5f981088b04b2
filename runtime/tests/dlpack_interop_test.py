#!/usr/bin/python3
"""DLPack between Tessera and a real consumer: NumPy or PyTorch, both directions, no copy.

Usage: dlpack_interop_test.py LIBTESSERA {numpy|torch}

Tessera is reached through ctypes on libtessera.so (tsr_tensor_to_dlpack /
tsr_tensor_from_dlpack, the unversioned DLManagedTensor: Debian 12's NumPy 1.24 and PyTorch 1.13
speak only that), and the Python DLPack protocol through the capsule functions of the C API
(PyCapsule_New / GetPointer / SetName via ctypes.pythonapi): a capsule named "dltensor" is
renamed "used_dltensor" by whoever consumes it, and an unconsumed one is deleted by its
destructor. Checked: every dtype the consumer has, the same address on both sides, writes seen
across, strided views and storage offsets, 0-dim and empty tensors, the deleter exactly once,
and refusals that leave the capsule to its producer.

Exits 77 (ctest's SKIP_RETURN_CODE) and says which module is missing when the consumer is not
installed for this Python (Debian: python3-numpy, python3-torch).
"""
import ctypes
import gc
import os
import sys

SKIP = 77

if len(sys.argv) != 3 or sys.argv[2] not in ("numpy", "torch"):
    sys.exit(__doc__)
LIB_PATH, CONSUMER = sys.argv[1], sys.argv[2]

try:
    import numpy as np
except ImportError:
    np = None
if np is None:  # the torch checks read tensors through NumPy too
    print(f"SKIP: the numpy module is not installed for {sys.executable} (Debian: python3-numpy)")
    sys.exit(SKIP)
if CONSUMER == "torch":
    try:
        import torch
        from torch.utils import dlpack as torch_dlpack
    except ImportError:
        print(f"SKIP: the torch module is not installed for {sys.executable} "
              "(Debian: python3-torch)")
        sys.exit(SKIP)

# Views are core ops; no plugin is needed, and none is loaded beside the consumer's libraries.
os.environ["TESSERA_NO_DEFAULT_PLUGINS"] = "1"

c_int32, c_int64 = ctypes.c_int32, ctypes.c_int64
c_void_p, c_size_t = ctypes.c_void_p, ctypes.c_size_t
POINTER, byref = ctypes.POINTER, ctypes.byref


# ---- DLPack's legacy structs (the layout of dlpack.h) ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor)))]

KDLCPU = 1


# ---- Tessera through ctypes ----

class TsrString(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", c_size_t)]


class TsrDevice(ctypes.Structure):
    _fields_ = [("type", c_int32), ("index", c_int32)]


lib = ctypes.CDLL(LIB_PATH)
DELETER = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
for name, restype, argtypes in [
    ("tsr_error_code", ctypes.c_int, [c_void_p]),
    ("tsr_error_message", TsrString, [c_void_p]),
    ("tsr_error_release", None, [c_void_p]),
    ("tsr_tensor_empty", c_void_p, [POINTER(c_int64), c_size_t, c_int32, TsrDevice,
                                    POINTER(c_void_p)]),
    ("tsr_tensor_from_host_memory", c_void_p, [c_void_p, c_size_t, POINTER(c_int64),
                                               POINTER(c_int64), c_size_t, c_int32, DELETER,
                                               c_void_p, POINTER(c_void_p)]),
    ("tsr_tensor_copy_from_host", c_void_p, [c_void_p, c_void_p, c_size_t]),
    ("tsr_tensor_copy_to_host", c_void_p, [c_void_p, c_void_p, c_size_t]),
    ("tsr_tensor_release", None, [c_void_p]),
    ("tsr_tensor_dim", c_int64, [c_void_p]),
    ("tsr_tensor_sizes", POINTER(c_int64), [c_void_p]),
    ("tsr_tensor_strides", POINTER(c_int64), [c_void_p]),
    ("tsr_tensor_storage_offset", c_int64, [c_void_p]),
    ("tsr_tensor_numel", c_int64, [c_void_p]),
    ("tsr_tensor_dtype", c_int32, [c_void_p]),
    ("tsr_tensor_data_ptr", c_void_p, [c_void_p]),
    ("tsr_dtype_size", c_size_t, [c_int32]),
    ("tsr_tensor_to_dlpack", c_void_p, [c_void_p, c_void_p, POINTER(POINTER(DLManagedTensor))]),
    ("tsr_tensor_from_dlpack", c_void_p, [c_void_p, c_void_p, POINTER(c_void_p)]),
    ("tsr_op_find", c_void_p, [TsrString, POINTER(c_void_p)]),
    ("tsr_op_call", c_void_p, [c_void_p, c_void_p]),
    ("tsr_stack_create", c_void_p, [POINTER(c_void_p)]),
    ("tsr_stack_release", None, [c_void_p]),
    ("tsr_stack_push_tensor", c_void_p, [c_void_p, c_void_p]),
    ("tsr_stack_push_int", c_void_p, [c_void_p, c_int64]),
    ("tsr_stack_push_int_list", c_void_p, [c_void_p, POINTER(c_int64), c_size_t]),
    ("tsr_stack_get_tensor", c_void_p, [c_void_p, c_size_t, POINTER(c_void_p)]),
    ("tsr_tensor_retain", None, [c_void_p]),
]:
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = restype, argtypes

# tsr_dtype values and their names in each consumer.
TSR = {"bool": 0, "uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float16": 6,
       "bfloat16": 7, "float32": 8, "float64": 9}


class TesseraError(Exception):
    pass


def check(error):
    """Raises the error a tsr_* call returned (and releases it)."""
    if error:
        message = lib.tsr_error_message(error)
        text = ctypes.string_at(message.data, message.size).decode()
        code = lib.tsr_error_code(error)
        lib.tsr_error_release(error)
        raise TesseraError(f"{code}: {text}")


def int64s(values):
    return (c_int64 * max(len(values), 1))(*values)


def empty(sizes, dtype):
    out = c_void_p()
    check(lib.tsr_tensor_empty(int64s(sizes), len(sizes), TSR[dtype], TsrDevice(0, 0), byref(out)))
    return out.value


def sizes_of(t):
    return [lib.tsr_tensor_sizes(t)[i] for i in range(lib.tsr_tensor_dim(t))]


def strides_of(t):
    return [lib.tsr_tensor_strides(t)[i] for i in range(lib.tsr_tensor_dim(t))]


def nbytes_of(t):
    return lib.tsr_tensor_numel(t) * lib.tsr_dtype_size(lib.tsr_tensor_dtype(t))


def read_bytes(t):
    buf = ctypes.create_string_buffer(max(nbytes_of(t), 1))
    check(lib.tsr_tensor_copy_to_host(t, buf, nbytes_of(t)))
    return buf.raw[:nbytes_of(t)]


def write_bytes(t, data):
    check(lib.tsr_tensor_copy_from_host(t, data, len(data)))


def as_strided(t, sizes, strides, offset):
    """A view of `t` through the as_strided op (a new reference)."""
    op, stack, out = c_void_p(), c_void_p(), c_void_p()
    check(lib.tsr_op_find(TsrString(b"as_strided", 10), byref(op)))
    check(lib.tsr_stack_create(byref(stack)))
    try:
        check(lib.tsr_stack_push_tensor(stack, t))
        check(lib.tsr_stack_push_int_list(stack, int64s(sizes), len(sizes)))
        check(lib.tsr_stack_push_int_list(stack, int64s(strides), len(strides)))
        check(lib.tsr_stack_push_int(stack, offset))
        check(lib.tsr_op_call(op, stack))
        check(lib.tsr_stack_get_tensor(stack, 0, byref(out)))
        lib.tsr_tensor_retain(out)
    finally:
        lib.tsr_stack_release(stack)
    return out.value


# ---- The Python DLPack protocol through the capsule C API ----

_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, ctypes.c_char_p, c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))

# A capsule keeps its name's address: these bytes live as long as the module.
DLTENSOR = ctypes.c_char_p(b"dltensor")
USED_DLTENSOR = ctypes.c_char_p(b"used_dltensor")


class TesseraArray:
    """A Tessera tensor offered to consumers through __dlpack__ / __dlpack_device__.

    The protocol wants a capsule nobody consumed (still named "dltensor") to delete its managed
    tensor. A capsule destructor written with ctypes cannot do that safely: CPython runs it while
    the consumer's exception is being raised, and every Python C API call made through ctypes
    then fails. So the producer keeps its capsules and deletes the unconsumed ones when it goes
    (__del__ runs with any pending exception set aside): the same exactly-once, a little later.
    """

    def __init__(self, tensor):
        lib.tsr_tensor_retain(tensor)
        self.tensor = tensor
        self.capsules = []

    def __dlpack__(self, stream=None):
        managed = POINTER(DLManagedTensor)()
        check(lib.tsr_tensor_to_dlpack(self.tensor, None, byref(managed)))
        capsule = _capsule_new(ctypes.cast(managed, c_void_p), DLTENSOR, None)
        self.capsules.append(capsule)
        return capsule

    def __dlpack_device__(self):
        return (KDLCPU, 0)

    def __del__(self):
        for capsule in self.capsules:
            if _capsule_is_valid(capsule, DLTENSOR):  # not consumed
                managed = ctypes.cast(_capsule_get_pointer(capsule, DLTENSOR),
                                      POINTER(DLManagedTensor))
                managed.contents.deleter(managed)
                _capsule_set_name(capsule, USED_DLTENSOR)
        lib.tsr_tensor_release(self.tensor)


def from_capsule(capsule):
    """Imports a "dltensor" capsule into Tessera (a new reference). On success the capsule is
    renamed "used_dltensor" (Tessera owns the managed tensor); on error it is left as it was,
    for its producer's destructor to delete."""
    managed = _capsule_get_pointer(capsule, DLTENSOR)
    out = c_void_p()
    check(lib.tsr_tensor_from_dlpack(managed, None, byref(out)))
    _capsule_set_name(capsule, USED_DLTENSOR)
    return out.value


class HostBuffer:
    """Host memory handed to Tessera with a deleter that counts its calls."""

    def __init__(self, nbytes):
        self.buf = ctypes.create_string_buffer(nbytes)
        self.deleted = 0

        @DELETER
        def deleter(data, context):
            self.deleted += 1
        self.deleter = deleter

    def tensor(self, sizes, dtype):
        out = c_void_p()
        check(lib.tsr_tensor_from_host_memory(self.buf, len(self.buf), int64s(sizes), None,
                                              len(sizes), TSR[dtype], self.deleter, None,
                                              byref(out)))
        return out.value


# ---- Checks ----

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def expect_error(fn, text, what):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any refusal is checked by its text
        expect(text in str(e), f"{what}: expected an error with {text!r}, got {e!r}")
        return
    expect(False, f"{what}: expected an error with {text!r}, got none")


def run_numpy():
    print(f"numpy {np.__version__}")
    dtypes = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for dt in dtypes:
        # numpy -> Tessera: same memory, strides in elements, writes seen both ways.
        a = np.arange(12).reshape(3, 4).astype(dt)
        refs = sys.getrefcount(a)
        t = from_capsule(a.__dlpack__())
        expect(sys.getrefcount(a) == refs + 1, f"{dt}: the managed tensor holds the array")
        expect(lib.tsr_tensor_data_ptr(t) == a.ctypes.data, f"{dt}: numpy -> tessera, no copy")
        expect(lib.tsr_tensor_dtype(t) == TSR[dt], f"{dt}: dtype")
        expect(sizes_of(t) == [3, 4] and strides_of(t) == [4, 1], f"{dt}: sizes and strides")
        expect(read_bytes(t) == a.tobytes(), f"{dt}: values")
        a[1, 2] = 99
        expect(read_bytes(t) == a.tobytes(), f"{dt}: a numpy write is seen by tessera")
        write_bytes(t, np.full((3, 4), 5, dtype=dt).tobytes())
        expect((a == 5).all(), f"{dt}: a tessera write is seen by numpy")
        # Tessera -> numpy, and back: the round trip numpy -> tessera -> numpy keeps the address.
        n = np.from_dlpack(TesseraArray(t))
        expect(n.ctypes.data == a.ctypes.data, f"{dt}: tessera -> numpy, no copy")
        expect(n.dtype == np.dtype(dt) and n.shape == (3, 4) and n.strides == a.strides,
               f"{dt}: numpy sees the dtype, shape and strides")
        write_bytes(t, np.full((3, 4), 6, dtype=dt).tobytes())
        expect((n == 6).all(), f"{dt}: a tessera write is seen through the exported array")
        lib.tsr_tensor_release(t)
        del n
        gc.collect()
        expect(sys.getrefcount(a) == refs, f"{dt}: the numpy deleter ran exactly once")

    # Non-contiguous numpy views: element 0 and strides carry over.
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for label, view in [("columns", base[:, ::2]), ("transpose", base.T), ("rows", base[1:3]),
                        ("0-dim", np.array(7.0, dtype=np.float32)),
                        ("empty", base[:0])]:
        t = from_capsule(view.__dlpack__())
        expect(sizes_of(t) == list(view.shape), f"{label}: sizes")
        expect(strides_of(t) == [s // view.itemsize for s in view.strides] or view.size == 0,
               f"{label}: strides")
        if view.size:
            expect(lib.tsr_tensor_data_ptr(t) == view.ctypes.data, f"{label}: element 0")
            expect(read_bytes(t) == np.ascontiguousarray(view).tobytes(), f"{label}: values")
        lib.tsr_tensor_release(t)

    # A Tessera view with a storage offset: numpy gets element 0 and the strides.
    host = HostBuffer(12 * 4)
    t = host.tensor([3, 4], "float32")
    write_bytes(t, np.arange(12, dtype=np.float32).tobytes())
    view = as_strided(t, [2, 2], [4, 2], 5)
    lib.tsr_tensor_release(t)
    n = np.from_dlpack(TesseraArray(view))
    expect(n.ctypes.data == lib.tsr_tensor_data_ptr(view), "offset view: element 0")
    expect(n.strides == (16, 8) and n.tolist() == [[5, 7], [9, 11]], "offset view: values")
    lib.tsr_tensor_release(view)
    gc.collect()
    expect(host.deleted == 0, "the exported array keeps tessera's memory alive")
    del n
    gc.collect()
    expect(host.deleted == 1, "tessera's deleter ran once the array went")

    # 0-dim and empty Tessera tensors.
    t = empty([], "int64")
    write_bytes(t, np.int64(42).tobytes())
    n = np.from_dlpack(TesseraArray(t))
    expect(n.shape == () and int(n) == 42 and n.ctypes.data == lib.tsr_tensor_data_ptr(t), "0-dim")
    lib.tsr_tensor_release(t)
    t = empty([0, 3], "float32")
    n = np.from_dlpack(TesseraArray(t))
    expect(n.shape == (0, 3), "empty")
    lib.tsr_tensor_release(t)
    del n

    # Refusals leave the capsule to its producer: numpy's destructor deletes it.
    a = np.arange(6, dtype=np.float32)
    refs = sys.getrefcount(a)
    expect_error(lambda: from_capsule(a[::-1].__dlpack__()), "expected non-negative strides",
                 "negative strides")
    expect_error(lambda: from_capsule(a.astype(np.complex64).__dlpack__()),
                 "found kDLComplex (5) with 64 bits", "complex")
    gc.collect()
    expect(sys.getrefcount(a) == refs, "refused capsules were deleted by numpy, not by tessera")

    # bool and bfloat16: NumPy 1.24 has no kDLBool, and NumPy has no bfloat16. Whether numpy
    # takes them or refuses them, Tessera's export is released exactly once.
    for dt in ["bool", "bfloat16"]:
        host = HostBuffer(4)
        t = host.tensor([4] if dt == "bool" else [2], dt)
        write_bytes(t, bytes([1, 0, 1, 1]))
        try:
            n = np.from_dlpack(TesseraArray(t))
            expect(dt == "bool" and n.tolist() == [True, False, True, True], f"{dt}: values")
            print(f"numpy {np.__version__} imports tessera's {dt}")
            del n
        except (BufferError, TypeError, RuntimeError) as e:
            print(f"numpy {np.__version__} refuses tessera's {dt} ({e}); checked that the "
                  "refused export is released")
        lib.tsr_tensor_release(t)
        gc.collect()
        expect(host.deleted == 1, f"{dt}: tessera's memory released exactly once")


def torch_bytes(x):
    """The bytes of a contiguous torch tensor (NumPy has no bfloat16: read those as int16)."""
    return (x.view(torch.int16) if x.dtype == torch.bfloat16 else x).numpy().tobytes()


def run_torch():
    print(f"torch {torch.__version__}")
    dtypes = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
              "float64", "bool"]
    for dt in dtypes:
        tdt = getattr(torch, dt)
        x = (torch.arange(12) % 2 if dt == "bool" else torch.arange(12)).reshape(3, 4).to(tdt)
        try:
            capsule = torch_dlpack.to_dlpack(x)
        except RuntimeError as e:
            # PyTorch 1.13 has no kDLBool: its own refusal, not Tessera's.
            expect(dt == "bool", f"{dt}: torch refused to export ({e})")
            print(f"torch {torch.__version__} does not export {dt} ({e}); tessera -> torch "
                  "checked below")
            capsule = None
        if capsule is not None:
            t = from_capsule(capsule)
            expect(lib.tsr_tensor_data_ptr(t) == x.data_ptr(), f"{dt}: torch -> tessera, no copy")
            expect(lib.tsr_tensor_dtype(t) == TSR[dt], f"{dt}: dtype")
            expect(sizes_of(t) == [3, 4] and strides_of(t) == [4, 1], f"{dt}: sizes, strides")
            x[1, 2] = 1
            expect(read_bytes(t) == torch_bytes(x), f"{dt}: a torch write is seen by tessera")
            y = torch_dlpack.from_dlpack(TesseraArray(t))
            expect(y.data_ptr() == x.data_ptr(), f"{dt}: torch -> tessera -> torch, no copy")
            lib.tsr_tensor_release(t)
            del y
        # Tessera -> torch over Tessera's memory.
        host = HostBuffer(12 * 8)
        t = host.tensor([3, 4], dt)
        write_bytes(t, bytes(nbytes_of(t)))
        try:
            y = torch_dlpack.from_dlpack(TesseraArray(t))
        except (RuntimeError, BufferError) as e:
            expect(dt == "bool", f"{dt}: torch refused tessera's export ({e})")
            print(f"torch {torch.__version__} does not import {dt} ({e}); checked that the "
                  "refused export is released")
        else:
            expect(y.data_ptr() == lib.tsr_tensor_data_ptr(t), f"{dt}: tessera -> torch, no copy")
            expect(y.dtype == tdt and list(y.shape) == [3, 4] and y.stride() == (4, 1),
                   f"{dt}: torch sees the dtype, shape and strides")
            y[2, 3] = 1
            item = lib.tsr_dtype_size(TSR[dt])
            expect(read_bytes(t)[-item:] != bytes(item), f"{dt}: a torch write is seen by tessera")
            write_bytes(t, bytes(nbytes_of(t)))
            expect(not y.any().item(), f"{dt}: a tessera write is seen by torch")
            del y
        lib.tsr_tensor_release(t)
        gc.collect()
        expect(host.deleted == 1, f"{dt}: tessera's memory released exactly once")

    # Strided torch views, one with a storage offset: element 0 and the strides carry over.
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    for label, view in [("transpose", base.t()), ("offset", base[1:, ::2]),
                        ("0-dim", torch.tensor(3.5)), ("empty", base[:0])]:
        t = from_capsule(torch_dlpack.to_dlpack(view))
        expect(sizes_of(t) == list(view.shape), f"{label}: sizes")
        if view.numel():
            expect(strides_of(t) == list(view.stride()), f"{label}: strides")
            expect(lib.tsr_tensor_data_ptr(t) == view.data_ptr(), f"{label}: element 0")
            expect(read_bytes(t) == torch_bytes(view.contiguous()), f"{label}: values")
        lib.tsr_tensor_release(t)

    # A Tessera view with a storage offset -> torch.
    host = HostBuffer(12 * 4)
    t = host.tensor([3, 4], "float32")
    write_bytes(t, np.arange(12, dtype=np.float32).tobytes())
    view = as_strided(t, [2, 2], [4, 2], 5)
    lib.tsr_tensor_release(t)
    y = torch_dlpack.from_dlpack(TesseraArray(view))
    expect(y.data_ptr() == lib.tsr_tensor_data_ptr(view) and y.stride() == (4, 2) and
           y.tolist() == [[5, 7], [9, 11]], "offset view -> torch")
    lib.tsr_tensor_release(view)
    del y
    gc.collect()
    expect(host.deleted == 1, "offset view: tessera's memory released once torch let go")

    # 0-dim and empty Tessera tensors -> torch.
    t = empty([], "float64")
    write_bytes(t, np.float64(2.5).tobytes())
    y = torch_dlpack.from_dlpack(TesseraArray(t))
    expect(y.dim() == 0 and y.item() == 2.5 and y.data_ptr() == lib.tsr_tensor_data_ptr(t),
           "0-dim -> torch")
    lib.tsr_tensor_release(t)
    t = empty([0, 3], "float32")
    y = torch_dlpack.from_dlpack(TesseraArray(t))
    expect(list(y.shape) == [0, 3], "empty -> torch")
    lib.tsr_tensor_release(t)
    del y

    # A refusal leaves the capsule to torch (its destructor deletes it).
    expect_error(lambda: from_capsule(torch_dlpack.to_dlpack(base.to(torch.complex64))),
                 "found kDLComplex (5) with 64 bits", "complex")


(run_numpy if CONSUMER == "numpy" else run_torch)()
gc.collect()
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print(f"ok: DLPack with {CONSUMER}")
