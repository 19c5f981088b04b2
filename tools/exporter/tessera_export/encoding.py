"""The model format's names for PyTorch's dtypes and memory formats (docs/model_format.md),
shared by the writer (__init__.py) and the replay (replay.py)."""

import torch

# torch dtype -> (safetensors dtype, Tessera dtype name as ops and the C ABI name it)
DTYPES = {
    torch.float64: ("F64", "float64"),
    torch.float32: ("F32", "float32"),
    torch.float16: ("F16", "float16"),
    torch.bfloat16: ("BF16", "bfloat16"),
    torch.int64: ("I64", "int64"),
    torch.int32: ("I32", "int32"),
    torch.int16: ("I16", "int16"),
    torch.int8: ("I8", "int8"),
    torch.uint8: ("U8", "uint8"),
    torch.bool: ("BOOL", "bool"),
}

MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous_format",
    torch.preserve_format: "preserve_format",
    torch.channels_last: "channels_last",
    torch.channels_last_3d: "channels_last_3d",
}
