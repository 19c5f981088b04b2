// An additive mask and its softmax: the claim and the run (Note [Masked softmax] in
// masked_softmax.hpp).
#include "masked_softmax.hpp"

#include <algorithm>
#include <string_view>

#include "graph_args.hpp"
#include "tensor_iterator.hpp"
#include "vector_math.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

constexpr int kMaxDims = 16;  // more dims than this run node by node

// RowPass: out = softmax(x + mask) over each row of x's last dim, on the runtime's threads.
struct RowPass {
  const float* x;
  const float* mask;
  float* out;
  int64_t n;                    // a row's elements
  int64_t dims;                 // x's rank, less the last dim
  int64_t sizes[kMaxDims];      // x's sizes, less the last dim
  int64_t mask_rows[kMaxDims];  // the mask's strides over them (0 where it broadcasts)
  int64_t mask_step;            // the mask's stride along a row (0 where it broadcasts)

  static void Run(void* self, int64_t begin, int64_t end) {
    const RowPass& p = *static_cast<const RowPass*>(self);
    for (int64_t r = begin; r < end; ++r) {
      // The mask's row for x's row r: r's index in each outer dim, innermost first.
      int64_t offset = 0;
      for (int64_t d = p.dims - 1, rest = r; d >= 0; --d) {
        offset += rest % p.sizes[d] * p.mask_rows[d];
        rest /= p.sizes[d];
      }
      const float* x = p.x + r * p.n;
      const float* m = p.mask + offset;
      float* row = p.out + r * p.n;
      if (p.mask_step == 1) {
        for (int64_t j = 0; j < p.n; ++j) row[j] = x[j] + m[j];
      } else {
        for (int64_t j = 0; j < p.n; ++j) row[j] = x[j] + m[j * p.mask_step];
      }
      vector_math::softmax_row(row, row, p.n, /*log=*/false);
    }
  }
};

// Rows: the pass over x's rows with the mask broadcast to them, where the operands allow it
// (see Note [Masked softmax]).
bool Rows(const sdk::TensorView& x, const sdk::TensorView& m, int64_t dim, RowPass* pass) {
  if (x.dtype() != TSR_DTYPE_FLOAT32 || m.dtype() != TSR_DTYPE_FLOAT32 ||
      x.device().type != TSR_DEVICE_CPU || m.device().type != TSR_DEVICE_CPU || x.dim() == 0 ||
      x.dim() > kMaxDims || m.dim() != x.dim() || !x.is_contiguous() || x.numel() == 0 ||
      (dim != -1 && dim != x.dim() - 1)) {
    return false;
  }
  pass->n = x.size(-1);
  pass->dims = x.dim() - 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (m.size(d) != x.size(d) && m.size(d) != 1) return false;  // the sum would be larger
    const int64_t stride = m.size(d) == 1 ? 0 : m.strides()[d];
    if (d < pass->dims) {
      pass->sizes[d] = x.size(d);
      pass->mask_rows[d] = stride;
    } else {
      pass->mask_step = stride;
    }
  }
  pass->x = x.data<float>();
  pass->mask = m.data<float>();
  return true;
}

}  // namespace

std::optional<MaskedSoftmax> ClaimMaskedSoftmax(const tsr_graph& g, size_t first, size_t* end) {
  const tsr_graph_node& add = g.nodes[first];
  if (sdk::op_name(add) != "add.Tensor" || (add.flags & TSR_GRAPH_NODE_OPAQUE) != 0 ||
      add.num_args != 3 || add.num_outputs != 1 || !IsOne(add, 2)) {
    return std::nullopt;
  }
  const int32_t self = TensorArg(add, 0), other = TensorArg(add, 1);
  if (self < 0 || other < 0 || self == other) return std::nullopt;
  const tsr_graph_node* softmax = Step(g, first + 1, add.outputs[0]);
  int64_t dim = 0;
  if (softmax == nullptr || sdk::op_name(*softmax) != "_softmax" || softmax->num_args != 3 ||
      !IntArg(*softmax, 1, &dim) || softmax->args[2].value.kind != TSR_VALUE_BOOL ||
      softmax->args[2].value.u.b != 0) {
    return std::nullopt;
  }
  // Which operand is the scores and which the mask is known only from their shapes, and the
  // dim's meaning from their rank: the run finds both when it runs.
  MaskedSoftmax m;
  m.self = self;
  m.other = other;
  m.output = softmax->outputs[0];
  m.dim = dim;
  *end = first + 2;
  return m;
}

bool MaskedSoftmaxRun::Fused(const Values& values, Tensor* out) const {
  const auto a = values.find(values_.self), b = values.find(values_.other);
  if (a == values.end() || b == values.end()) return false;
  const sdk::TensorView av = sdk::view_of(a->second), bv = sdk::view_of(b->second);
  RowPass pass{};
  // The scores are the operand the other broadcasts to (a sum is the same either way round).
  const sdk::TensorView* x = &av;
  if (!Rows(av, bv, values_.dim, &pass)) {
    pass = RowPass{};
    if (!Rows(bv, av, values_.dim, &pass)) return false;
    x = &bv;
  }
  Tensor result = Tensor::empty(x->sizes().vec(), TSR_DTYPE_FLOAT32, sdk::kCpu);
  pass.out = sdk::view_of(result).data<float>();
  const int64_t rows = x->numel() / pass.n;
  // A row is some 16 element operations (the softmax's exp and sums, as its kernel counts).
  TensorIterator::run_parallel(rows, std::max<int64_t>(1, kGrain / (16 * pass.n)), &RowPass::Run,
                               &pass);
  *out = std::move(result);
  return true;
}

}  // namespace cpu
}  // namespace tessera
