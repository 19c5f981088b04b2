/* Tessera stable C ABI: loading plugins (for applications; plugins do not call these).
 *
 * Every load attempt leaves a load report: the path, the versions on both sides, the device,
 * how many ops got kernels, or the precise reason the plugin was refused. */
#ifndef TESSERA_C_LOADER_H_
#define TESSERA_C_LOADER_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsr_load_report {
  size_t struct_size;
  int32_t loaded;         /* 1: the plugin is loaded (now or by an earlier identical load) */
  int32_t code;           /* a tsr_code: TSR_OK when loaded, else why not */
  tsr_string reason;      /* empty when loaded; else the precise reason */
  tsr_string path;        /* as given */
  tsr_string plugin_name; /* empty when the descriptor was never read */
  tsr_string plugin_version;
  uint32_t plugin_abi_major, plugin_abi_minor, plugin_min_abi_minor;
  uint32_t runtime_abi_major, runtime_abi_minor;
  int32_t device_type; /* -1 when unknown */
  tsr_string device_name;
  int64_t kernels_registered; /* kernels and fallbacks the plugin registered */
  int64_t ops_registered;     /* distinct ops with a kernel of the plugin */

  /* since 1.1 */
  uint32_t plugin_op_set_major; /* the op set the plugin states it was built against */
  uint32_t plugin_op_set_minor; /* (0.0: unstated, taken as 1.0) */
  int64_t kernels_adapted;      /* kernels built against another compatible schema */
  int64_t kernels_refused;      /* kernels built against an incompatible schema: not called */
  /* One line per adapted or refused kernel (the kernel, the op, both schemas and why), per
   * kernel for a deprecated op, and one when the plugin registers a device and kernels for it
   * but no copy_ kernel there (where copy_ runs instead, and the out= and in-place forms derived
   * from its functional kernels that copy through it). Empty when there is nothing to say. */
  tsr_string kernel_notes;
  /* How many devices the plugin's device interface reported when it registered (0 on a
   * machine without its hardware, e.g. a GPU plugin without a GPU or driver); -1 when it
   * registered no device interface. Since 1.1. */
  int32_t device_count;
} tsr_load_report;

/* tsr_plugin_load loads the shared object at `path` (borrowed). Loading the same file again
 * is a no-op that returns the first report. report (optional, may be NULL): set to the load
 * report, owned by the runtime, valid for the process. Returns an error when the plugin was
 * refused (the report says why as well). A plugin refused after its register_fn registered
 * something has it undone, and then, as tsr_plugin_unload, this waits for every op call in
 * flight on any thread (one may run a kernel it published) before the shared object is closed:
 * do not call it while holding anything an op call may wait for. Refused from inside an op
 * call or a tsr_parallel_for task, where that wait would wait for the caller, the shared object
 * stays open for the process instead. */
TSR_API tsr_error* tsr_plugin_load(tsr_string path, const tsr_load_report** report);

/* tsr_plugin_load_default loads every plugin found in the directories of the environment
 * variable TESSERA_PLUGIN_PATH (separated by ':') and then in the installation's plugin
 * directory (lib/tessera/plugins beside libtessera.so), once per process; later calls do
 * nothing. Nothing at all when TESSERA_NO_DEFAULT_PLUGINS=1 or after
 * tsr_plugin_discovery_disable. Refusals do not stop the others; they are in the reports. */
TSR_API tsr_error* tsr_plugin_load_default(void);

/* tsr_plugin_discovery_disable switches default discovery off for the process (since 1.1), as
 * the environment variable TESSERA_NO_DEFAULT_PLUGINS=1 does: tsr_plugin_load_default and the
 * first tsr_op_find then load nothing, and only plugins loaded by path are there. Call it before
 * either runs; afterwards it is FAILED_PRECONDITION (discovery has loaded what it found).
 * Calling it again is a no-op. */
TSR_API tsr_error* tsr_plugin_discovery_disable(void);

/* tsr_plugin_unload removes the plugin named `name` (borrowed): its kernels and device are
 * deregistered at once, op calls already running (on any thread) finish first, and the shared
 * object is closed when the last tensor of its device is gone. From inside an op call (an
 * application's kernel) or a tsr_parallel_for task it is FAILED_PRECONDITION: it would wait
 * for that call. */
TSR_API tsr_error* tsr_plugin_unload(tsr_string name);

/* tsr_load_reports lists every load attempt of the process, in order. reports: borrowed. */
TSR_API void tsr_load_reports(const tsr_load_report* const** reports, size_t* count);

/* tsr_load_report_format writes a readable multi-line report into buf (NUL-terminated,
 * truncated to size) and returns the length of the whole text. */
TSR_API size_t tsr_load_report_format(const tsr_load_report* report, char* buf, size_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_LOADER_H_ */
