/* GNUstep's headers ask for objc/blocks_runtime.h; on Debian the blocks runtime is
 * libBlocksRuntime, whose header is <Block.h>. */
#include <Block.h>
