"""The cardiac landmark, refinement, silhouette and validity models: the
training sets (dataset, refine), the networks and trainers (train_landmarks,
mobilenet, train_gpu, train_silhouette, train_validity), the ONNX export
(export_landmarks), on-site fine-tuning (learn, clinic_cases, bench_learn),
the decision calibrations (calibrate_spread, calibrate_column) and the
models' version (version). Imports sim only. Run from models/train:
python3 -m cardiac.dataset, python3 -m cardiac.learn, ..."""
