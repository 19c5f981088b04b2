#include "conformance/conv_reference.h"

namespace tessera {
namespace conformance {
namespace {

int64_t Count(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t e : v) n *= e;
  return n;
}

}  // namespace

int64_t PerDim(const std::vector<int64_t>& v, size_t d) { return v.size() == 1 ? v[0] : v[d]; }

std::vector<int64_t> ConvOutputShape(const ConvArgs& a) {
  const HostTensor& x = *a.x;
  const HostTensor& w = *a.w;
  const size_t dims = w.dim() - 2;
  const bool unbatched = x.dim() == static_cast<int64_t>(dims) + 1;
  std::vector<int64_t> shape{unbatched ? 1 : x.shape[0],
                             a.transposed ? w.shape[1] * a.groups : w.shape[0]};
  for (size_t d = 0; d < dims; ++d) {
    const int64_t in = x.shape[x.dim() - dims + d], k = w.shape[2 + d];
    const int64_t st = PerDim(a.stride, d), p = PerDim(a.padding, d), dl = PerDim(a.dilation, d);
    const int64_t pr = a.padding_right.empty() ? p : a.padding_right[d];
    shape.push_back(a.transposed
                        ? (in - 1) * st - 2 * p + dl * (k - 1) + PerDim(a.output_padding, d) + 1
                        : (in + p + pr - dl * (k - 1) - 1) / st + 1);
  }
  return shape;
}

void ForEachConvTerm(const ConvArgs& a,
                     const std::function<void(int64_t, int64_t, int64_t)>& term) {
  const HostTensor& x = *a.x;
  const HostTensor& w = *a.w;
  const size_t dims = w.dim() - 2;
  const std::vector<int64_t> y_shape = ConvOutputShape(a);
  const int64_t N = y_shape[0], O = y_shape[1], G = a.groups;
  const int64_t C = x.shape[x.dim() - dims - 1];
  const int64_t CG = C / G, OG = O / G;
  const std::vector<int64_t> in(x.shape.end() - dims, x.shape.end()),
      k(w.shape.begin() + 2, w.shape.end()), out(y_shape.begin() + 2, y_shape.end());
  const int64_t IS = Count(in), KS = Count(k), OS = Count(out);
  std::vector<int64_t> ic(dims), kc(dims);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ip = 0; ip < IS; ++ip)
        for (int64_t kp = 0; kp < KS; ++kp) {
          // Row-major positions to per-dim coordinates, and where (input, tap) lands.
          int64_t irest = ip, krest = kp, opos = 0;
          for (size_t d = dims; d-- > 0;) {
            ic[d] = irest % in[d];
            irest /= in[d];
            kc[d] = krest % k[d];
            krest /= k[d];
          }
          bool inside = true;
          for (size_t d = 0; d < dims && inside; ++d) {
            const int64_t st = PerDim(a.stride, d), p = PerDim(a.padding, d),
                          dl = PerDim(a.dilation, d);
            int64_t oc;
            if (a.transposed) {
              oc = ic[d] * st - p + kc[d] * dl;
            } else {
              const int64_t t = ic[d] + p - kc[d] * dl;
              if (t < 0 || t % st != 0) inside = false;
              oc = t / st;
            }
            inside = inside && oc >= 0 && oc < out[d];
            opos = opos * out[d] + oc;
          }
          if (!inside) continue;
          const int64_t g = c / CG;
          for (int64_t j = 0; j < OG; ++j) {
            const int64_t o = g * OG + j;
            // forward weight [O, C/G, *k]; transposed [C, O/G, *k].
            const int64_t wi =
                a.transposed ? (c * OG + j) * KS + kp : (o * CG + (c - g * CG)) * KS + kp;
            term((n * C + c) * IS + ip, wi, (n * O + o) * OS + opos);
          }
        }
}

HostTensor ConvReference(const ConvArgs& a) {
  std::vector<int64_t> shape = ConvOutputShape(a);
  const int64_t O = shape[1], OS = Count(shape) / std::max<int64_t>(1, shape[0] * O);
  std::vector<long double> y(static_cast<size_t>(Count(shape)), 0);
  for (size_t i = 0; i < y.size(); ++i) y[i] = a.bias ? a.bias->values[(i / OS) % O] : 0;
  ForEachConvTerm(a, [&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += static_cast<long double>(a.x->values[xi]) * a.w->values[wi];
  });
  if (a.x->dim() == a.w->dim() - 1) shape.erase(shape.begin());  // unbatched
  return FromLong(shape, a.x->dtype, y);
}

}  // namespace conformance
}  // namespace tessera
