// libFuzzer's driver entry point (compiler-rt, FuzzerInterface.h). SwiftPM links executable
// targets with `main` aliased to `<Target>_main`, so each target defines that and hands
// control to libFuzzer here instead of using libFuzzer's own `main`.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
