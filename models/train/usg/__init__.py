"""The USG model's trainer: the simulated cohort (cohort), training and ONNX
export (train), the held-out evaluation (eval) and a numpy ONNX runner
(onnxnp). Run from models/train: python3 -m usg.train, python3 -m usg.eval."""
