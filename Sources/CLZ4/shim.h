// Only the block API is used: Granary frames and checksums its own blocks.
#include <lz4.h>
