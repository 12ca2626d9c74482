// Everything a C++ user of dotcompute needs.
#pragma once

#include "dotcompute/accelerator.hpp"
#include "dotcompute/buffer.hpp"
#include "dotcompute/dtype.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/event.hpp"
#include "dotcompute/kernel.hpp"
#include "dotcompute/kernel_cache.hpp"
#include "dotcompute/launch_plan.hpp"
#include "dotcompute/memory_pool.hpp"
#include "dotcompute/runtime.hpp"
#include "dotcompute/stream.hpp"
