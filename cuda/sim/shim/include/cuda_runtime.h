// Provided by the CUDA simulator: dcsim_cuda.h already declares what this header would.
#pragma once
