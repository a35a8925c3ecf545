// SwiftPM builds a C target from at least one source file; the module is the declaration in the header.
#include "CFuzzer.h"
