// The simulator's <cooperative_groups/scan.h>: cg::inclusive_scan and exclusive_scan live in
// <cooperative_groups.h> here.
#pragma once
#include "../cooperative_groups.h"
