#!/usr/bin/env python3
"""Writes a random convolutional DAG as an ONNX model, for stress-testing the search.

    /usr/bin/python3 scripts/random_model.py --nodes 2000 --seed 1 --out random_2000.onnx

Every value is f32[1, C, H, W] (C=16, H=W=16 by default), so any value can feed any node. Each node
draws its op from a vocabulary that the backends take unevenly (Conv 1x1/3x3/depthwise, Relu,
Sigmoid, HardSigmoid, HardSwish, Tanh, Add, Mul, Max, MaxPool, AveragePool, Concat followed by a
1x1 Conv, a squeeze-excite pair), and its inputs from the last few values or, one time in
`--long`, from any earlier value: backends alternate from node to node and the frontier is wide,
which is what makes a partition search's state space grow. Weights are seeded random numbers.
"""
import argparse
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000, help="about this many nodes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--size", type=int, default=16, help="spatial size H = W")
    parser.add_argument("--long", type=int, default=6, help="one input in LONG reaches back anywhere")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    c, s = args.channels, args.size
    nodes, inits = [], []
    values = ["x"]
    count = 0

    def weight(name, shape):
        inits.append(numpy_helper.from_array((nrng.standard_normal(shape) * 0.1).astype(np.float32), name))
        return name

    def new(op, inputs, **attrs):
        nonlocal count
        out = f"v{count}"
        nodes.append(helper.make_node(op, inputs, [out], name=f"n{count}_{op}", **attrs))
        count += 1
        return out

    def pick():
        if rng.randrange(args.long) == 0:
            return values[rng.randrange(len(values))]
        return values[rng.randrange(max(0, len(values) - 4), len(values))]

    while count < args.nodes:
        kind = rng.choice(["conv1", "conv3", "dw", "unary", "unary", "binary", "binary", "pool", "concat", "se"])
        if kind == "conv1":
            v = new("Conv", [pick(), weight(f"w{count}", (c, c, 1, 1)), weight(f"b{count}", (c,))])
        elif kind == "conv3":
            v = new("Conv", [pick(), weight(f"w{count}", (c, c, 3, 3))], pads=[1, 1, 1, 1])
        elif kind == "dw":
            v = new("Conv", [pick(), weight(f"w{count}", (c, 1, 3, 3))], pads=[1, 1, 1, 1], group=c)
        elif kind == "unary":
            v = new(rng.choice(["Relu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh"]), [pick()])
        elif kind == "binary":
            v = new(rng.choice(["Add", "Mul", "Max"]), [pick(), pick()])
        elif kind == "pool":
            op = rng.choice(["MaxPool", "AveragePool"])
            v = new(op, [pick()], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        elif kind == "concat":
            both = new("Concat", [pick(), pick()], axis=1)
            v = new("Conv", [both, weight(f"w{count}", (c, 2 * c, 1, 1))])
        else:
            x = pick()
            pooled = new("GlobalAveragePool", [x])
            gate = new("Sigmoid", [new("Conv", [pooled, weight(f"w{count}", (c, c, 1, 1))])])
            v = new("Mul", [x, gate])
        values.append(v)

    read = {i for n in nodes for i in n.input}
    outputs = [v for v in values[1:] if v not in read] or [values[-1]]
    graph = helper.make_graph(
        nodes, "random_dag",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, s, s])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, c, s, s]) for o in outputs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print(f"{args.out}: {len(nodes)} nodes, {len(outputs)} outputs")


if __name__ == "__main__":
    main()
