/* A deliberately broken CLBlast and clFFT for tests/python/ops/test_vendor_selfcheck.py.
 *
 * It exports the symbols dotcompute's bindings declare (ops/clblast.py, ops/clfft.py) with their
 * C signatures and reports success everywhere, but computes the wrong thing: the GEMMs fill C with
 * 0.5 (a library that ignores its inputs), the FFT copies its input to its output (a transform
 * that never ran). The OpenCL calls go through libOpenCL.so.1, opened at run time, so the file
 * builds with no OpenCL headers or import library. `fake_calls` counts the vendor routines run,
 * so a test can see whether the self-check called the library at all.
 */
#include <dlfcn.h>
#include <stddef.h>

int fake_calls = 0;

typedef int (*fill_fn)(void *, void *, const void *, size_t, size_t, size_t, unsigned, const void *, void *);
typedef int (*copy_fn)(void *, void *, void *, size_t, size_t, size_t, unsigned, const void *, void *);
typedef int (*info_fn)(void *, unsigned, size_t, void *, size_t *);

#define CL_MEM_SIZE 0x1102

static void *opencl(void) {
    static void *lib;
    if (!lib) lib = dlopen("libOpenCL.so.1", RTLD_NOW);
    return lib;
}

static size_t mem_size(void *mem) {
    info_fn info = opencl() ? (info_fn)dlsym(opencl(), "clGetMemObjectInfo") : NULL;
    size_t size = 0;
    if (!info || info(mem, CL_MEM_SIZE, sizeof size, &size, NULL) != 0) return 0;
    return size;
}

static int fill(void *queue, void *mem, const void *pattern, size_t pattern_size) {
    fill_fn f = opencl() ? (fill_fn)dlsym(opencl(), "clEnqueueFillBuffer") : NULL;
    size_t size = mem_size(mem);
    if (!f || size == 0) return -1;
    ++fake_calls;
    return f(queue, mem, pattern, pattern_size, 0, size / pattern_size * pattern_size, 0, NULL, NULL);
}

int CLBlastSgemmStridedBatched(int layout, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                               void *a, size_t ao, size_t lda, size_t sa, void *b, size_t bo, size_t ldb, size_t sb,
                               float beta, void *c, size_t co, size_t ldc, size_t sc, size_t batch, void **queue,
                               void **event) {
    const float half = 0.5f;
    return fill(*queue, c, &half, sizeof half);
}

int CLBlastDgemmStridedBatched(int layout, int ta, int tb, size_t m, size_t n, size_t k, double alpha,
                               void *a, size_t ao, size_t lda, size_t sa, void *b, size_t bo, size_t ldb, size_t sb,
                               double beta, void *c, size_t co, size_t ldc, size_t sc, size_t batch, void **queue,
                               void **event) {
    const double half = 0.5;
    return fill(*queue, c, &half, sizeof half);
}

static size_t next_plan = 1;

int clfftGetVersion(unsigned *major, unsigned *minor, unsigned *patch) {
    *major = 2; *minor = 12; *patch = 2;
    return 0;
}
int clfftSetup(const void *data) { return 0; }
int clfftTeardown(void) { return 0; }
int clfftCreateDefaultPlan(size_t *plan, void *context, int dim, const size_t *lengths) {
    *plan = next_plan++;
    return 0;
}
int clfftSetPlanPrecision(size_t plan, int precision) { return 0; }
int clfftSetLayout(size_t plan, int in, int out) { return 0; }
int clfftSetResultLocation(size_t plan, int place) { return 0; }
int clfftSetPlanBatchSize(size_t plan, size_t batch) { return 0; }
int clfftSetPlanDistance(size_t plan, size_t in, size_t out) { return 0; }
int clfftSetPlanScale(size_t plan, int direction, float scale) { return 0; }
int clfftBakePlan(size_t plan, unsigned n, void **queues, void *notify, void *user) { return 0; }
int clfftDestroyPlan(size_t *plan) { return 0; }

int clfftEnqueueTransform(size_t plan, int direction, unsigned nq, void **queues, unsigned nwait, const void *waits,
                          void **events, void **inputs, void **outputs, void *tmp) {
    copy_fn copy = opencl() ? (copy_fn)dlsym(opencl(), "clEnqueueCopyBuffer") : NULL;
    size_t size = mem_size(inputs[0]);
    if (!copy || size == 0) return -1;
    ++fake_calls;
    return copy(queues[0], inputs[0], outputs[0], 0, 0, size, 0, NULL, NULL);
}
