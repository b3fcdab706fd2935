//go:build linux && cgo

package ort

/*
#include <malloc.h>

// Set when the process loads, before any thread (Go's, OpenCV's or ONNX
// Runtime's) can have made glibc create a second arena: glibc fixes its
// arena limit the first time it needs one, so a later mallopt is too late.
static int vetlens_arenas_capped;

static void __attribute__((constructor)) vetlens_cap_malloc_arenas(void) {
	vetlens_arenas_capped = mallopt(M_ARENA_MAX, 1);
}

static int vetlens_malloc_arenas_capped(void) { return vetlens_arenas_capped; }
*/
import "C"

// mallocArenasCapped reports whether glibc's malloc was limited to one
// arena when the process loaded (a C constructor in this file; every
// binary that links ONNX Runtime through this package gets it). With
// glibc's default (eight arenas per core) every thread ONNX Runtime runs
// a model on gets an arena of its own, and what a run frees stays
// resident there: `vetlens predict` peaked at about 305 MB with them and
// 245 MB with one, at the same BenchmarkPredict1024 latency
// (bench/startup; the model card, "Speed").
func mallocArenasCapped() bool { return C.vetlens_malloc_arenas_capped() == 1 }
