/* A backend plugin that loads fine but whose initialize() reports its driver
 * missing: the runtime must list it as unavailable with this reason. */
#include "dotcompute/backend_abi.h"

static const char* last_error(void) { return "the frobnicator driver (libfrob.so.1) is not installed"; }
static dc_status initialize(void) { return DC_ERROR_UNAVAILABLE; }
static void shutdown_(void) {}
/* Never called: initialize() fails first. Present because the loader requires every entry. */
static dc_status unsupported(void) { return DC_ERROR_UNSUPPORTED; }

#define STUB(f) .f = (__typeof__(((dc_backend*)0)->f))unsupported
static const dc_backend table = {
    .struct_size = sizeof(dc_backend),
    .abi_version = DC_BACKEND_ABI_VERSION,
    .name = "frob",
    .version = "0.0.1",
    .initialize = initialize,
    .shutdown = shutdown_,
    .last_error = last_error,
    STUB(device_count), STUB(device_info), STUB(compiler_identity), STUB(mem_alloc), STUB(mem_free),
    STUB(memcpy_h2d), STUB(memcpy_d2h), STUB(memcpy_d2d), STUB(memset_d8), STUB(stream_create),
    STUB(stream_destroy), STUB(stream_synchronize), STUB(stream_wait_event), STUB(event_create),
    STUB(event_destroy), STUB(event_record), STUB(event_synchronize), STUB(event_query),
    STUB(event_elapsed_ms), STUB(compile), STUB(free_binary), STUB(module_load), STUB(module_unload),
    STUB(kernel_get), STUB(launch),
};

__attribute__((visibility("default"))) const dc_backend* dotcompute_backend_entry(void) { return &table; }
