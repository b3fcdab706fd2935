package ort

// loadHint ends the error of an onnxruntime.dll that does not load.
// onnxruntime.dll (npm's onnxruntime-node, win32/x64) is built with MSVC
// and imports the Visual C++ runtime (MSVCP140.dll, MSVCP140_1.dll,
// MSVCP140_ATOMIC_WAIT.dll, VCRUNTIME140.dll, VCRUNTIME140_1.dll), which
// VetLens does not ship and a clean Windows may lack: Windows's own
// message names only "the specified module".
const loadHint = "; if Windows says a module could not be found, install the Microsoft Visual C++ 2015-2022 Redistributable (x64): https://aka.ms/vs/17/release/vc_redist.x64.exe"
