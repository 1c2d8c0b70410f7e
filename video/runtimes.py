"""The runtimes the offline models run on, each on one thread: ONNX files on onnxruntime, TFLite files on LiteRT
(``ai-edge-litert``, with its XNNPACK kernels).

OpenCV's DNN module ran both before; on this machine it took 20 ms for CenterFace at 256x192 and 20 ms for the
selfie segmentation, against 7 ms and 3 ms here, with the same outputs (within 1e-5): the models were most of an
analysed frame's cost, and what kept a process from its number of streams (``benchmarks/analysis_cost.py``).

- :class:`OnnxNet`: an onnxruntime session.  ``free_size`` lets the model take any picture size when its file fixes
  one (CenterFace's says 10x3x32x32): the input's batch, height and width become free dimensions, with the ``onnx``
  package, in memory.  A session may be run from several threads at once.
- :class:`TfliteNet`: a LiteRT interpreter per thread (an interpreter holds its tensors, so it cannot be shared).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from video.errors import ModelUnavailableError

Tensor = NDArray[np.float32]


class OnnxNet:
    def __init__(self, path: Path, *, free_size: bool = False) -> None:
        import onnxruntime  # noqa: PLC0415 (only where a model is used)

        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        options.log_severity_level = 3  # some files list their weights among the inputs: not worth a warning each
        try:
            model: str | bytes = _freed(path) if free_size else str(path)
            self.session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # a damaged or foreign file: onnx's and onnxruntime's own exceptions
            raise ModelUnavailableError(f"cannot load {path.name}: {error}") from None
        self.input = self.session.get_inputs()[0].name

    def run(self, tensor: NDArray[Any], outputs: list[str] | None = None) -> list[Tensor]:
        """The named outputs (all of them, in the file's order, if none are named) for one input tensor."""
        return [np.asarray(o) for o in self.session.run(outputs, {self.input: tensor})]


def _freed(path: Path) -> bytes:
    """The model with its first input's batch, height and width made free (any size) and its outputs' sizes too."""
    import onnx  # noqa: PLC0415

    model = onnx.load(str(path))
    weights = {w.name for w in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in weights]  # old exporters list the weights as inputs
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for index, name in ((0, "batch"), (2, "height"), (3, "width")):
        dims[index].dim_param = name  # replaces the fixed dim_value (one of the two is set)
    for output in model.graph.output:
        for dim in output.type.tensor_type.shape.dim:
            dim.dim_param = "?"
    data: bytes = model.SerializeToString()
    return data


class TfliteNet:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        interpreter = self._interpreter()  # fail now, not on the first frame
        (given,) = interpreter.get_input_details()
        self.shape = tuple(int(n) for n in given["shape"])
        """The input's shape: (1, height, width, channels)."""
        self._input = int(given["index"])
        self._outputs = [(str(d["name"]), int(d["index"])) for d in interpreter.get_output_details()]
        """The tensors' places, read once: every interpreter of one file has them in the same places."""

    def _interpreter(self) -> Any:
        interpreter = getattr(self._local, "interpreter", None)
        if interpreter is None:
            try:
                from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

                interpreter = Interpreter(model_path=str(self.path), num_threads=1)
                interpreter.allocate_tensors()
            except (ImportError, ValueError, RuntimeError) as error:
                raise ModelUnavailableError(f"cannot load {self.path.name}: {error}") from None
            self._local.interpreter = interpreter
        return interpreter

    def run(self, tensor: NDArray[Any]) -> Mapping[str, Tensor]:
        """The outputs by name for one input tensor of :attr:`shape` (float32, NHWC)."""
        interpreter = self._interpreter()
        interpreter.set_tensor(self._input, np.ascontiguousarray(tensor))
        interpreter.invoke()
        return {name: np.array(interpreter.get_tensor(index)) for name, index in self._outputs}
