// oneDNN inside the CPU plugin: one CPU engine, a stream per thread, and a cache of
// primitives keyed by everything their creation depends on (shapes, strides, dtypes,
// attributes), so a repeated call pays only for execution.
#pragma once

#include <functional>
#include <string>

#include "oneapi/dnnl/dnnl.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {
namespace onednn {

dnnl::engine& engine();
dnnl::stream& stream();

// data_type: oneDNN's type for a dtype, or undef where oneDNN has none we use.
dnnl::memory::data_type data_type(tsr_dtype dtype);

// desc: a plain strided memory descriptor of the tensor as it is (a 0-dim tensor as [1]).
dnnl::memory::desc desc(const sdk::TensorView& t);
dnnl::memory memory(const sdk::TensorView& t, const dnnl::memory::desc& md);

// cached returns the primitive for `key`, creating it with `make` the first time. `make` may
// throw dnnl::error (unsupported case); nothing is cached then.
dnnl::primitive cached(const std::string& key, const std::function<dnnl::primitive()>& make);

// key_of describes a tensor's dtype, sizes and strides for cache keys.
std::string key_of(const sdk::TensorView& t);

// native_bf16_matmul: whether oneDNN has a bfloat16 matmul better than its reference
// implementation on this CPU (it has one with AVX-512 BF16 or AMX, not on AVX2 machines, where
// the reference one runs some hundred times slower than float32 on dnnl_sgemm). Asked once, of
// a small product.
bool native_bf16_matmul();

}  // namespace onednn
}  // namespace cpu
}  // namespace tessera
