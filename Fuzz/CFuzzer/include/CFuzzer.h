#ifndef GRANARY_CFUZZER_H
#define GRANARY_CFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for a program with a main of its own (LLVM 12 and later): the fuzz targets
/// keep their own main, so that the same program runs corpus files when built without libFuzzer.
/// Only referenced when built with -sanitize=fuzzer, which links libFuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
