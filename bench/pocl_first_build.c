/* PoCL's fixed cost of the first program build in a process, in plain OpenCL (no dotcompute, no
   pyopencl): bench/cold_compile.py --pure-opencl compiles this with cc and runs it in fresh
   processes with an empty POCL_CACHE_DIR (issue 24).

     cc -O2 -o pocl_first_build bench/pocl_first_build.c -ldl
     POCL_CACHE_DIR=$(mktemp -d) ./pocl_first_build [KERNEL.cl NAME]

   Prints one JSON line (seconds): the platform/device query, context + queue, the first
   clBuildProgram of a one-line kernel, its first launch, a second one-line kernel's build and launch
   in the same context (what every later program pays), and, given KERNEL.cl and its kernel NAME
   (e.g. the one dotcompute generated for dc.sum, whose arguments are (float*, long, float*, long,
   long...)), that program's build, the CL_PROGRAM_BINARIES read (PoCL builds a generic work-group
   function for it) and its first launch on one work-item. The OpenCL entry points are looked up with
   dlsym, so no OpenCL headers are needed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *H; /* every OpenCL object handle */

#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_MEM_READ_WRITE 1

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *lib;
static void *sym(const char *name) {
  void *f = dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "missing %s\n", name);
    exit(2);
  }
  return f;
}

static cl_int (*GetPlatformIDs)(cl_uint, H *, cl_uint *);
static cl_int (*GetDeviceIDs)(H, cl_ulong, cl_uint, H *, cl_uint *);
static H (*CreateContext)(const intptr_t *, cl_uint, const H *, H, H, cl_int *);
static H (*CreateCommandQueue)(H, H, cl_ulong, cl_int *);
static H (*CreateProgramWithSource)(H, cl_uint, const char **, const size_t *, cl_int *);
static cl_int (*BuildProgram)(H, cl_uint, const H *, const char *, H, H);
static cl_int (*GetProgramInfo)(H, cl_uint, size_t, void *, size_t *);
static H (*CreateKernel)(H, const char *, cl_int *);
static H (*CreateBuffer)(H, cl_ulong, size_t, H, cl_int *);
static cl_int (*SetKernelArg)(H, cl_uint, size_t, const void *);
static cl_int (*EnqueueNDRangeKernel)(H, H, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, H, H);
static cl_int (*Finish)(H);

static H ctx, queue, dev;
static const char *options = "-cl-std=CL1.2"; /* what dotcompute's OpenCL plugin passes */

static H build(const char *src, double *seconds) {
  cl_int err = 0;
  double t = now();
  H prog = CreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err == 0) err = BuildProgram(prog, 1, &dev, options, NULL, NULL);
  *seconds = now() - t;
  if (err != 0) {
    fprintf(stderr, "build failed: %d\n", err);
    exit(1);
  }
  return prog;
}

/* the first launch of NAME on `items` work-items (local size 1), its pointer arguments one buffer
   each and its long arguments `value` */
static double launch(H prog, const char *name, int pointers_at_even, long value, size_t items) {
  cl_int err = 0;
  H k = CreateKernel(prog, name, &err);
  H buf = CreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
  for (cl_uint i = 0; i < 9; ++i) {
    int pointer = pointers_at_even ? (i == 0 || i == 2) : i == 0;
    if (SetKernelArg(k, i, pointer ? sizeof(H) : sizeof(long), pointer ? (void *)&buf : (void *)&value) != 0) break;
  }
  size_t local = 1;
  double t = now();
  err = EnqueueNDRangeKernel(queue, k, 1, NULL, &items, &local, 0, NULL, NULL);
  Finish(queue);
  if (err != 0) fprintf(stderr, "launch of %s failed: %d\n", name, err);
  return now() - t;
}

int main(int argc, char **argv) {
  lib = dlopen("libOpenCL.so.1", RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "no libOpenCL.so.1\n");
    return 2;
  }
  GetPlatformIDs = sym("clGetPlatformIDs");
  GetDeviceIDs = sym("clGetDeviceIDs");
  CreateContext = sym("clCreateContext");
  CreateCommandQueue = sym("clCreateCommandQueue");
  CreateProgramWithSource = sym("clCreateProgramWithSource");
  BuildProgram = sym("clBuildProgram");
  GetProgramInfo = sym("clGetProgramInfo");
  CreateKernel = sym("clCreateKernel");
  CreateBuffer = sym("clCreateBuffer");
  SetKernelArg = sym("clSetKernelArg");
  EnqueueNDRangeKernel = sym("clEnqueueNDRangeKernel");
  Finish = sym("clFinish");

  cl_int err = 0;
  cl_uint count = 0;
  H platform;
  double t0 = now();
  GetPlatformIDs(1, &platform, &count);
  GetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, &count);
  double t1 = now();
  ctx = CreateContext(NULL, 1, &dev, NULL, NULL, &err);
  queue = CreateCommandQueue(ctx, dev, 0, &err);
  double t2 = now();
  if (count == 0 || err != 0) {
    fprintf(stderr, "no OpenCL device\n");
    return 2;
  }
  double first_build, second_build;
  H p1 = build("__kernel void one(__global float* a) { a[get_global_id(0)] += 1.0f; }", &first_build);
  double first_launch = launch(p1, "one", 0, 0, 64);
  H p2 = build("__kernel void two(__global float* a, long n) { long i = get_global_id(0);"
               " if (i < n) a[i] = a[i] * 2.0f + 3.0f; }", &second_build);
  double second_launch = launch(p2, "two", 0, 64, 64);
  printf("{\"platform_s\": %.4f, \"context_s\": %.4f, \"first_build_s\": %.4f, \"first_launch_s\": %.4f, "
         "\"second_build_s\": %.4f, \"second_launch_s\": %.4f",
         t1 - t0, t2 - t1, first_build, first_launch, second_build, second_launch);
  if (argc > 2) {
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
      fprintf(stderr, "cannot read %s\n", argv[1]);
      return 2;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *src = malloc((size_t)size + 1);
    size_t got = fread(src, 1, (size_t)size, f);
    src[got] = 0;
    fclose(f);
    double build_s;
    H p3 = build(src, &build_s);
    size_t bytes = 0;
    double t = now();
    GetProgramInfo(p3, CL_PROGRAM_BINARY_SIZES, sizeof bytes, &bytes, NULL);
    unsigned char *bin = malloc(bytes);
    GetProgramInfo(p3, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    double binary_s = now() - t;
    double launch_s = launch(p3, argv[2], 1, 1, 1);
    printf(", \"kernel_build_s\": %.4f, \"kernel_binary_read_s\": %.4f, \"kernel_first_launch_s\": %.4f", build_s,
           binary_s, launch_s);
  }
  printf("}\n");
  return 0;
}
