"""A minimal numpy interpreter for the operator set of usg_ensemble.onnx.

Python here has no onnxruntime, so the trainer and eval.py run the exported
graph itself with this, op by op in float32; the Go tests check the same file
under ONNX Runtime against the torch model's reference outputs. Any operator
outside the set below is an error, never silently skipped.
"""
import numpy as np
import onnx
from onnx import numpy_helper


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _reduce_mean(x, attrs):
    return np.mean(x, axis=tuple(attrs["axes"]), keepdims=bool(attrs.get("keepdims", 1))).astype(x.dtype)


OPS = {
    "Max": lambda i, a: np.maximum(i[0], i[1]),
    "Log": lambda i, a: np.log(i[0]),
    "Mul": lambda i, a: i[0] * i[1],
    "Add": lambda i, a: i[0] + i[1],
    "Sub": lambda i, a: i[0] - i[1],
    "Div": lambda i, a: i[0] / i[1],
    "MatMul": lambda i, a: np.matmul(i[0], i[1]),
    "Relu": lambda i, a: np.maximum(i[0], np.float32(0)),
    "Transpose": lambda i, a: np.transpose(i[0], a["perm"]),
    "Squeeze": lambda i, a: np.squeeze(i[0], axis=tuple(int(v) for v in i[1])),
    "ReduceMean": lambda i, a: _reduce_mean(i[0], a),
}


class Runner:
    """Runs a loaded onnx.ModelProto: Runner(model)(features) -> {output: array}."""

    def __init__(self, model):
        if isinstance(model, str):
            model = onnx.load(model)
        self.graph = model.graph
        self.init = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        for node in self.graph.node:
            if node.op_type not in OPS:
                raise ValueError(f"onnxnp: unsupported operator {node.op_type}")

    def __call__(self, features):
        env = dict(self.init)
        env[self.graph.input[0].name] = np.asarray(features, dtype=np.float32)
        for node in self.graph.node:
            env[node.output[0]] = OPS[node.op_type]([env[n] for n in node.input], _attrs(node))
        return {o.name: env[o.name] for o in self.graph.output}
