"""The exporter's dynamic dims (tools/exporter/tessera_export/dims.py): what it fits, what it
refuses, and that every refusal names what went wrong.

    python3 exporter_dims_test.py WORK_DIR

(The runs of dynamic models at other sizes, against PyTorch, are dynamic_check.py's.)
"""

import json
import os
import struct
import sys
import unittest

from fractions import Fraction

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "exporter"))
import tessera_export  # noqa: E402
from tessera_export import dims as dims_module  # noqa: E402

WORK = None


def export(program, example, **options):
    path = os.path.join(WORK, "model.tsrm")
    return tessera_export.export(program, example, path, **options), path


def metadata(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + n])["__metadata__"]


class Fit(unittest.TestCase):
    def test_a_static_file_stays_version_1(self):
        _, path = export(lambda x: x + 1, (torch.randn(3),))
        self.assertEqual(metadata(path)["format_version"], "1")

    def test_sizes_views_and_products_become_expressions(self):
        # [b, t, 4] viewed as [b*t, 4], then as [b, t*4]; a slice ending at t - 1.
        def program(x):
            b, t, _ = x.shape
            return x.view(b * t, 4).view(b, t * 4)[:, : t - 1]
        graph, path = export(program, (torch.randn(2, 5, 4),),
                             dynamic_dims={"b": (1, 16), "t": (2, None)},
                             inputs_at=lambda b, t: (torch.randn(b, t, 4),))
        self.assertEqual(metadata(path)["format_version"], "2")
        self.assertEqual(graph["dims"], [{"name": "b", "min": 1, "max": 16},
                                         {"name": "t", "min": 2}])
        self.assertEqual(graph["inputs"][0]["sizes"],
                         [{"expr": [[1, "b"]]}, {"expr": [[1, "t"]]}, 4])
        text = json.dumps(graph["nodes"])
        self.assertIn('{"expr": [[1, "b", "t"]]}', text)  # the view's b*t
        self.assertIn('{"expr": [[4, "t"]]}', text)  # t*4
        self.assertIn('{"expr": [[1, "t"], [-1]]}', text)  # the slice's end

    def test_degree_two_in_one_dim(self):
        # A [t, t] tensor flattened: t*t.
        graph, _ = export(lambda x: x.reshape(-1) * 2, (torch.randn(3, 3),),
                          dynamic_dims={"t": (2, 100)},
                          inputs_at=lambda t: (torch.randn(t, t),))
        self.assertIn('{"expr": [[1, "t", "t"]]}', json.dumps(graph["nodes"]))


class Refusals(unittest.TestCase):
    def refused(self, message, program, example, **options):
        with self.assertRaises(tessera_export.ExportError) as caught:
            export(program, example, **options)
        self.assertIn(message, str(caught.exception))
        return str(caught.exception)

    def test_a_graph_that_depends_on_a_size(self):
        def program(x):
            return x * 2 if x.shape[0] > 3 else x + 1
        self.refused("the program traces another graph", program, (torch.randn(2),),
                     dynamic_dims={"n": (2, 10)}, inputs_at=lambda n: (torch.randn(n),))

    def test_a_float_computed_from_a_size(self):
        self.refused("node 0 (mul.Scalar) argument 'other' is {'float': 0.3333333333333333}, "
                     "where the first has {'float': 0.5}", lambda x: x * (1.0 / x.shape[0]),
                     (torch.randn(2),), dynamic_dims={"n": (2, 10)},
                     inputs_at=lambda n: (torch.randn(n),))

    def test_a_cubic_size(self):
        self.refused("it is not a polynomial of degree <= 2", lambda x: x.reshape(-1) + 1,
                     (torch.randn(2, 2, 2),), dynamic_dims={"t": (2, 10)},
                     inputs_at=lambda t: (torch.randn(t, t, t),))

    def test_a_size_computed_by_division(self):
        self.refused("fit no polynomial with integer coefficients",
                     lambda x: x[: x.shape[0] // 2] + 1, (torch.randn(4),),
                     dynamic_dims={"n": (2, 10)}, inputs_at=lambda n: (torch.randn(n),))

    def test_a_dim_no_input_carries(self):
        self.refused("dim 'n' is not, exactly, the size of any input axis", lambda x: x + 1,
                     (torch.randn(3),), dynamic_dims={"n": (2, 10)},
                     inputs_at=lambda n: (torch.randn(3),))

    def test_size_one_that_computes_otherwise(self):
        # At n = 1 the program doubles; the graph fitted at n >= 2 would not.
        def program(x):
            return x * 2 if x.shape[0] == 1 else x + 0
        message = self.refused("at sizes {'n': 1} the program traces another graph", program,
                               (torch.randn(3),), dynamic_dims={"n": (1, 10)},
                               inputs_at=lambda n: (torch.randn(n),))
        self.assertIn("does not compute the program at {'n': 1}", message)
        self.assertIn("starting 'n' at 2", message)

    def test_a_corner_below_two_is_checked(self):
        # Only batch 1 with sequence 1 together computes otherwise.
        def program(x):
            return x * 2 if x.shape[0] == 1 and x.shape[1] == 1 else x + 0
        self.refused("does not compute the program at {'b': 1, 't': 1}", program,
                     (torch.randn(2, 3),), dynamic_dims={"b": (1, 10), "t": (1, 10)},
                     inputs_at=lambda b, t: (torch.randn(b, t),))

    def test_more_than_three_dims(self):
        self.refused("at most 3 dims, got 4", lambda x: x, (torch.randn(2, 2, 2, 2),),
                     dynamic_dims={d: (2, 10) for d in "abcd"},
                     inputs_at=lambda **s: (torch.randn(*s.values()),))

    def test_size_one_that_decomposes_otherwise_but_computes_the_same_is_kept(self):
        # Attention scores over heads split from a permuted view (as a BERT layer's): at batch 1
        # PyTorch's reshape of the expanded q and k is a view, at 2 a copy; the graph fitted at
        # 2..4 computes the program at 1 too, as the replay shows: it must run.
        def program(x):
            b, t, _ = x.shape
            q, k, _ = x.view(b, t, 3, 2, 2).permute(2, 0, 3, 1, 4)
            return (q @ k.transpose(-1, -2)).sum(-1)
        replayed = []
        real_run = tessera_export.replay.run

        def counting_run(graph, constants, inputs, sizes):
            replayed.append(dict(sizes))
            return real_run(graph, constants, inputs, sizes)
        tessera_export.replay.run = counting_run
        try:
            # The example itself at batch 1, where the trace differs.
            graph, _ = export(program, (torch.randn(1, 3, 12),), dynamic_dims={"b": (1, 8)},
                              inputs_at=lambda b: (torch.randn(b, 3, 12),))
        finally:
            tessera_export.replay.run = real_run
        self.assertEqual(graph["dims"][0]["min"], 1)
        self.assertIn({"b": 1}, replayed)

    def test_a_module_that_writes_its_state(self):
        # Batch norm in training mode updates its running statistics on every run: each trace
        # starts from the module's state, the file holds the state before the example's run,
        # and the module is left as that one run leaves it.
        def batch_norm():
            net = torch.nn.BatchNorm1d(3).train()
            with torch.no_grad():
                net.running_mean.copy_(torch.tensor([7.0, 8.0, 9.0]))
            return net
        net, once = batch_norm(), batch_norm()
        x = torch.randn(4, 3) + 5
        _, path = export(net, (x,), dynamic_dims={"b": (2, 10)},
                         inputs_at=lambda b: (torch.randn(b, 3) + 5,))
        once(x)
        torch.testing.assert_close(net.running_mean, once.running_mean)
        constants = [read_tensor(path, n) for n in tensor_names(path) if "constant/" in n]
        self.assertTrue(any(torch.equal(c, torch.tensor([7.0, 8.0, 9.0])) for c in constants),
                        constants)

    def test_bad_options(self):
        self.refused("dynamic_dims needs inputs_at", lambda x: x, (torch.randn(3),),
                     dynamic_dims={"n": (2, 10)})
        self.refused("expected (min, max) integers", lambda x: x, (torch.randn(3),),
                     dynamic_dims={"n": 5}, inputs_at=lambda n: (torch.randn(n),))
        self.refused("expected (min, max) integers", lambda x: x, (torch.randn(3),),
                     dynamic_dims={"n": (True, 10)}, inputs_at=lambda n: (torch.randn(n),))
        self.refused("must start at 0 or more and hold 2..5", lambda x: x, (torch.randn(3),),
                     dynamic_dims={"n": (0, 4)}, inputs_at=lambda n: (torch.randn(n),))
        self.refused("the example inputs have n = 12, outside its range [2, 10]",
                     lambda x: x + 1, (torch.randn(12),), dynamic_dims={"n": (2, 10)},
                     inputs_at=lambda n: (torch.randn(n),))
        self.refused("inputs_at({'n': 2}) returned 2 inputs, the example has 1", lambda x: x,
                     (torch.randn(3),), dynamic_dims={"n": (2, 10)},
                     inputs_at=lambda n: (torch.randn(n), torch.randn(n)))


def tensor_names(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    return [k for k in json.loads(blob[8:8 + n]) if k != "__metadata__"]


def read_tensor(path, name):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    entry = json.loads(blob[8:8 + n])[name]
    begin, end = entry["data_offsets"]
    dtype = {"F32": torch.float32, "I64": torch.int64}[entry["dtype"]]
    data = bytearray(blob[8 + n + begin:8 + n + end])
    return torch.frombuffer(data, dtype=dtype).reshape(entry["shape"]) if data else \
        torch.empty(entry["shape"], dtype=dtype)


class Polynomials(unittest.TestCase):
    def test_the_fit_is_exact(self):
        points = [[2, 3, 4], [5, 6, 7]]
        f = lambda a, b: 12 * b * b + 3 * a * b - 7  # noqa: E731
        values = {(i, j): f(points[0][i], points[1][j]) for i in range(3) for j in range(3)}
        coeffs = dims_module._fit(points, values)
        self.assertEqual(coeffs, {(0, 2): 12, (1, 1): 3, (0, 0): -7})
        self.assertEqual(dims_module._expr(coeffs, ["a", "b"]),
                         {"expr": [[3, "a", "b"], [12, "b", "b"], [-7]]})

    def test_constants_and_rationals(self):
        points = [[2, 3, 4]]
        self.assertEqual(dims_module._expr(dims_module._fit(points, {(i,): 5 for i in range(3)}),
                                           ["n"]), 5)
        self.assertEqual(dims_module._expr(dims_module._fit(points, {(i,): 0 for i in range(3)}),
                                           ["n"]), 0)
        # n (n + 1) / 2: rational coefficients, which the exporter refuses.
        half = dims_module._fit(points, {(i,): p * (p + 1) // 2 for i, p in enumerate(points[0])})
        self.assertEqual(half, {(1,): Fraction(1, 2), (2,): Fraction(1, 2)})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    WORK = sys.argv.pop(1)
    os.makedirs(WORK, exist_ok=True)
    unittest.main(verbosity=2)
