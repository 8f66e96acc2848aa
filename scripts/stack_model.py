#!/usr/bin/python3
"""Stacks a one-input, one-output ONNX model N times: copy k reads copy k-1's output.

    /usr/bin/python3 scripts/stack_model.py IN.onnx N OUT.onnx

For search-scaling benchmarks (docs/benchmarks.md): bert_encoder_24 stacked 9 times is a
216-layer, 10,584-node encoder, made in seconds where a torch export of 216 layers takes many
minutes. Every copy shares IN's initializers (same names, same external-data file, which OUT
references where IN does: write OUT beside IN), so OUT is small; node and intermediate value names
get a `s<k>/` prefix in copy k > 0. Input and output shapes must agree (a model whose output can
feed its own input, like an encoder stack).
"""
import sys

import onnx


def stack(model, copies):
    g = model.graph
    if len(g.input) != 1 or len(g.output) != 1:
        sys.exit("stack_model: the model needs exactly one input and one output")
    inits = {t.name for t in g.initializer}
    x, y = g.input[0].name, g.output[0].name
    layer = list(g.node)
    nodes = []
    prev = x
    for k in range(copies):
        last = k == copies - 1

        def rename(name):
            if name == "" or name in inits:
                return name
            if name == x:
                return prev
            if name == y and last:
                return y
            return name if k == 0 and name != y else f"s{k}/{name}"

        for node in layer:
            n = onnx.NodeProto()
            n.CopyFrom(node)
            n.name = node.name if k == 0 else f"s{k}/{node.name}"
            n.input[:] = [rename(i) for i in node.input]
            n.output[:] = [rename(o) for o in node.output]
            nodes.append(n)
        prev = rename(y) if not last else y
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    g.name = f"{g.name}_x{copies}"
    return model


def main():
    if len(sys.argv) != 4 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        sys.exit(__doc__.split("\n\n")[1])
    model = onnx.load(sys.argv[1], load_external_data=False)
    onnx.save(stack(model, int(sys.argv[2])), sys.argv[3])


if __name__ == "__main__":
    main()
