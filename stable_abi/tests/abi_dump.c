/* Prints the layout of the C ABI: struct sizes, field offsets (table slots included), enum
 * values and the version. tests/abi_lock.sh compares it (plus the exported symbols) with
 * stable_abi/abi.lock. Built as C99 from the public headers, so it sees what a C plugin sees.
 *
 * Every struct lists all of its fields here; a field added to a header but not here is caught
 * below (the listed fields must cover the struct up to its size). */
#include <stddef.h>
#include <stdio.h>

#include "tessera/c/tessera.h"

static int failures = 0;
static size_t covered = 0;

#define BEGIN(T) covered = 0
#define FIELD(T, f)                                                              \
  do {                                                                           \
    const size_t end_ = offsetof(T, f) + sizeof(((T*)0)->f);                     \
    printf("offset %s.%s %u\n", #T, #f, (unsigned)offsetof(T, f));               \
    if (end_ > covered) covered = end_;                                          \
  } while (0)
#define END(T)                                                                   \
  do {                                                                           \
    printf("size %s %u\n", #T, (unsigned)sizeof(T));                             \
    if (covered + sizeof(void*) <= sizeof(T)) {                                  \
      fprintf(stderr, "abi_dump: %s has fields not listed in abi_dump.c\n", #T); \
      ++failures;                                                                \
    }                                                                            \
  } while (0)
#define ENUM(e) printf("enum %s %ld\n", #e, (long)(e))

int main(void) {
  printf("version %d.%d\n", TSR_ABI_VERSION_MAJOR, TSR_ABI_VERSION_MINOR);

  BEGIN(tsr_string);
  FIELD(tsr_string, data);
  FIELD(tsr_string, size);
  END(tsr_string);

  BEGIN(tsr_device);
  FIELD(tsr_device, type);
  FIELD(tsr_device, index);
  END(tsr_device);

  BEGIN(tsr_scalar);
  FIELD(tsr_scalar, kind);
  FIELD(tsr_scalar, reserved);
  FIELD(tsr_scalar, i);
  FIELD(tsr_scalar, d);
  END(tsr_scalar);

  BEGIN(tsr_kernel_desc);
  FIELD(tsr_kernel_desc, struct_size);
  FIELD(tsr_kernel_desc, op_name);
  FIELD(tsr_kernel_desc, device_type);
  FIELD(tsr_kernel_desc, reserved);
  FIELD(tsr_kernel_desc, boxed);
  FIELD(tsr_kernel_desc, context);
  FIELD(tsr_kernel_desc, kernel_name);
  FIELD(tsr_kernel_desc, typed);
  FIELD(tsr_kernel_desc, schema);
  FIELD(tsr_kernel_desc, packed);
  FIELD(tsr_kernel_desc, nondeterministic);
  END(tsr_kernel_desc);

  BEGIN(tsr_device_interface);
  FIELD(tsr_device_interface, struct_size);
  FIELD(tsr_device_interface, device_type);
  FIELD(tsr_device_interface, reserved);
  FIELD(tsr_device_interface, context);
  FIELD(tsr_device_interface, device_count);
  FIELD(tsr_device_interface, allocate);
  FIELD(tsr_device_interface, free);
  FIELD(tsr_device_interface, copy_host_to_device);
  FIELD(tsr_device_interface, copy_device_to_host);
  FIELD(tsr_device_interface, copy_device_to_device);
  FIELD(tsr_device_interface, synchronize);
  FIELD(tsr_device_interface, stream_create);
  FIELD(tsr_device_interface, stream_destroy);
  FIELD(tsr_device_interface, stream_synchronize);
  FIELD(tsr_device_interface, event_create);
  FIELD(tsr_device_interface, event_destroy);
  FIELD(tsr_device_interface, event_record);
  FIELD(tsr_device_interface, event_synchronize);
  FIELD(tsr_device_interface, get_properties);
  FIELD(tsr_device_interface, stream_wait_event);
  FIELD(tsr_device_interface, copy_host_to_device_async);
  FIELD(tsr_device_interface, copy_device_to_host_async);
  FIELD(tsr_device_interface, copy_device_to_device_async);
  FIELD(tsr_device_interface, record_stream);
  FIELD(tsr_device_interface, memory_stats);
  FIELD(tsr_device_interface, empty_cache);
  END(tsr_device_interface);

  BEGIN(tsr_device_properties);
  FIELD(tsr_device_properties, struct_size);
  FIELD(tsr_device_properties, name);
  FIELD(tsr_device_properties, arch);
  FIELD(tsr_device_properties, total_memory);
  FIELD(tsr_device_properties, multiprocessor_count);
  FIELD(tsr_device_properties, flags);
  END(tsr_device_properties);

  BEGIN(tsr_memory_stats);
  FIELD(tsr_memory_stats, struct_size);
  FIELD(tsr_memory_stats, allocated_bytes);
  FIELD(tsr_memory_stats, reserved_bytes);
  FIELD(tsr_memory_stats, peak_allocated_bytes);
  FIELD(tsr_memory_stats, peak_reserved_bytes);
  FIELD(tsr_memory_stats, allocations);
  FIELD(tsr_memory_stats, cache_hits);
  FIELD(tsr_memory_stats, device_allocations);
  FIELD(tsr_memory_stats, device_frees);
  END(tsr_memory_stats);

  BEGIN(tsr_plugin_desc);
  FIELD(tsr_plugin_desc, struct_size);
  FIELD(tsr_plugin_desc, name);
  FIELD(tsr_plugin_desc, version);
  FIELD(tsr_plugin_desc, abi_major);
  FIELD(tsr_plugin_desc, abi_minor);
  FIELD(tsr_plugin_desc, min_abi_minor);
  FIELD(tsr_plugin_desc, device_type);
  FIELD(tsr_plugin_desc, device_name);
  FIELD(tsr_plugin_desc, register_fn);
  FIELD(tsr_plugin_desc, unload_fn);
  FIELD(tsr_plugin_desc, state);
  FIELD(tsr_plugin_desc, op_set_major);
  FIELD(tsr_plugin_desc, op_set_minor);
  END(tsr_plugin_desc);

  BEGIN(tsr_model_run_stats);
  FIELD(tsr_model_run_stats, struct_size);
  FIELD(tsr_model_run_stats, peak_intermediate_bytes);
  FIELD(tsr_model_run_stats, total_intermediate_bytes);
  FIELD(tsr_model_run_stats, node_ns);
  FIELD(tsr_model_run_stats, node_ns_capacity);
  END(tsr_model_run_stats);

  BEGIN(tsr_compile_options);
  FIELD(tsr_compile_options, struct_size);
  FIELD(tsr_compile_options, flags);
  FIELD(tsr_compile_options, reserved);
  END(tsr_compile_options);

  BEGIN(tsr_graph_arg);
  FIELD(tsr_graph_arg, value);
  FIELD(tsr_graph_arg, values);
  FIELD(tsr_graph_arg, num_values);
  END(tsr_graph_arg);

  BEGIN(tsr_graph_node);
  FIELD(tsr_graph_node, op);
  FIELD(tsr_graph_node, args);
  FIELD(tsr_graph_node, num_args);
  FIELD(tsr_graph_node, outputs);
  FIELD(tsr_graph_node, num_outputs);
  FIELD(tsr_graph_node, route);
  FIELD(tsr_graph_node, flags);
  END(tsr_graph_node);

  BEGIN(tsr_graph);
  FIELD(tsr_graph, struct_size);
  FIELD(tsr_graph, device);
  FIELD(tsr_graph, nodes);
  FIELD(tsr_graph, num_nodes);
  FIELD(tsr_graph, num_values);
  FIELD(tsr_graph, outputs);
  FIELD(tsr_graph, num_outputs);
  END(tsr_graph);

  BEGIN(tsr_graph_run);
  FIELD(tsr_graph_run, struct_size);
  FIELD(tsr_graph_run, first);
  FIELD(tsr_graph_run, count);
  FIELD(tsr_graph_run, inputs);
  FIELD(tsr_graph_run, num_inputs);
  FIELD(tsr_graph_run, outputs);
  FIELD(tsr_graph_run, num_outputs);
  END(tsr_graph_run);

  BEGIN(tsr_graph_compiler);
  FIELD(tsr_graph_compiler, struct_size);
  FIELD(tsr_graph_compiler, device_type);
  FIELD(tsr_graph_compiler, reserved);
  FIELD(tsr_graph_compiler, context);
  FIELD(tsr_graph_compiler, claim);
  FIELD(tsr_graph_compiler, prepare);
  FIELD(tsr_graph_compiler, execute);
  FIELD(tsr_graph_compiler, release);
  END(tsr_graph_compiler);

  BEGIN(tsr_op_info);
  FIELD(tsr_op_info, struct_size);
  FIELD(tsr_op_info, name);
  FIELD(tsr_op_info, schema);
  FIELD(tsr_op_info, num_arguments);
  FIELD(tsr_op_info, num_returns);
  FIELD(tsr_op_info, op_set_major);
  FIELD(tsr_op_info, op_set_minor);
  FIELD(tsr_op_info, deprecated);
  FIELD(tsr_op_info, reserved);
  FIELD(tsr_op_info, replacement);
  FIELD(tsr_op_info, removed_in);
  END(tsr_op_info);

  BEGIN(tsr_arg_info);
  FIELD(tsr_arg_info, struct_size);
  FIELD(tsr_arg_info, name);
  FIELD(tsr_arg_info, type);
  FIELD(tsr_arg_info, kind);
  FIELD(tsr_arg_info, optional);
  FIELD(tsr_arg_info, kwarg_only);
  FIELD(tsr_arg_info, has_default);
  FIELD(tsr_arg_info, default_value);
  FIELD(tsr_arg_info, writes);
  FIELD(tsr_arg_info, reserved);
  END(tsr_arg_info);

  BEGIN(tsr_kernel_info);
  FIELD(tsr_kernel_info, struct_size);
  FIELD(tsr_kernel_info, op_name);
  FIELD(tsr_kernel_info, device_type);
  FIELD(tsr_kernel_info, status);
  FIELD(tsr_kernel_info, kernel_name);
  FIELD(tsr_kernel_info, schema);
  FIELD(tsr_kernel_info, note);
  FIELD(tsr_kernel_info, nondeterministic);
  END(tsr_kernel_info);

  BEGIN(tsr_value);
  FIELD(tsr_value, kind);
  FIELD(tsr_value, reserved);
  FIELD(tsr_value, u.tensor);
  FIELD(tsr_value, u.i);
  FIELD(tsr_value, u.d);
  FIELD(tsr_value, u.b);
  FIELD(tsr_value, u.dtype);
  FIELD(tsr_value, u.device);
  FIELD(tsr_value, u.scalar);
  FIELD(tsr_value, u.string);
  FIELD(tsr_value, u.generator);
  FIELD(tsr_value, u.list.data);
  FIELD(tsr_value, u.list.size);
  END(tsr_value);

  BEGIN(tsr_kernel_call);
  FIELD(tsr_kernel_call, struct_size);
  FIELD(tsr_kernel_call, op);
  FIELD(tsr_kernel_call, stack);
  FIELD(tsr_kernel_call, args);
  FIELD(tsr_kernel_call, views);
  FIELD(tsr_kernel_call, num_args);
  FIELD(tsr_kernel_call, plan);
  FIELD(tsr_kernel_call, returns);
  FIELD(tsr_kernel_call, num_returns);
  END(tsr_kernel_call);

  BEGIN(tsr_tensor_view);
  FIELD(tsr_tensor_view, struct_size);
  FIELD(tsr_tensor_view, tensor);
  FIELD(tsr_tensor_view, data);
  FIELD(tsr_tensor_view, sizes);
  FIELD(tsr_tensor_view, strides);
  FIELD(tsr_tensor_view, storage_offset);
  FIELD(tsr_tensor_view, numel);
  FIELD(tsr_tensor_view, device);
  FIELD(tsr_tensor_view, dtype);
  FIELD(tsr_tensor_view, ndim);
  FIELD(tsr_tensor_view, flags);
  FIELD(tsr_tensor_view, reserved);
  END(tsr_tensor_view);
  ENUM(TSR_VIEW_CONTIGUOUS);
  ENUM(TSR_VIEW_IMMUTABLE);

  BEGIN(tsr_call_plan);
  FIELD(tsr_call_plan, struct_size);
  FIELD(tsr_call_plan, compute_dtype);
  FIELD(tsr_call_plan, num_outputs);
  FIELD(tsr_call_plan, device);
  FIELD(tsr_call_plan, rng_seed);
  FIELD(tsr_call_plan, rng_offset);
  END(tsr_call_plan);
  BEGIN(tsr_dlpack_options);
  FIELD(tsr_dlpack_options, struct_size);
  FIELD(tsr_dlpack_options, ext_device_type);
  FIELD(tsr_dlpack_options, reserved);
  FIELD(tsr_dlpack_options, flags);
  END(tsr_dlpack_options);
  BEGIN(tsr_host_memory_desc);
  FIELD(tsr_host_memory_desc, struct_size);
  FIELD(tsr_host_memory_desc, data);
  FIELD(tsr_host_memory_desc, nbytes);
  FIELD(tsr_host_memory_desc, sizes);
  FIELD(tsr_host_memory_desc, strides);
  FIELD(tsr_host_memory_desc, ndim);
  FIELD(tsr_host_memory_desc, dtype);
  FIELD(tsr_host_memory_desc, reserved);
  FIELD(tsr_host_memory_desc, storage_offset);
  FIELD(tsr_host_memory_desc, deleter);
  FIELD(tsr_host_memory_desc, deleter_context);
  END(tsr_host_memory_desc);

  BEGIN(tsr_load_report);
  FIELD(tsr_load_report, struct_size);
  FIELD(tsr_load_report, loaded);
  FIELD(tsr_load_report, code);
  FIELD(tsr_load_report, reason);
  FIELD(tsr_load_report, path);
  FIELD(tsr_load_report, plugin_name);
  FIELD(tsr_load_report, plugin_version);
  FIELD(tsr_load_report, plugin_abi_major);
  FIELD(tsr_load_report, plugin_abi_minor);
  FIELD(tsr_load_report, plugin_min_abi_minor);
  FIELD(tsr_load_report, runtime_abi_major);
  FIELD(tsr_load_report, runtime_abi_minor);
  FIELD(tsr_load_report, device_type);
  FIELD(tsr_load_report, device_name);
  FIELD(tsr_load_report, kernels_registered);
  FIELD(tsr_load_report, ops_registered);
  FIELD(tsr_load_report, plugin_op_set_major);
  FIELD(tsr_load_report, plugin_op_set_minor);
  FIELD(tsr_load_report, kernels_adapted);
  FIELD(tsr_load_report, kernels_refused);
  FIELD(tsr_load_report, kernel_notes);
  FIELD(tsr_load_report, device_count);
  END(tsr_load_report);

  BEGIN(tsr_runtime_api);
  FIELD(tsr_runtime_api, struct_size);
  FIELD(tsr_runtime_api, abi_major);
  FIELD(tsr_runtime_api, abi_minor);
  FIELD(tsr_runtime_api, error_create);
  FIELD(tsr_runtime_api, error_code);
  FIELD(tsr_runtime_api, error_message);
  FIELD(tsr_runtime_api, error_release);
  FIELD(tsr_runtime_api, tensor_empty);
  FIELD(tsr_runtime_api, tensor_empty_strided);
  FIELD(tsr_runtime_api, tensor_from_host_memory);
  FIELD(tsr_runtime_api, tensor_copy_from_host);
  FIELD(tsr_runtime_api, tensor_copy_to_host);
  FIELD(tsr_runtime_api, tensor_retain);
  FIELD(tsr_runtime_api, tensor_release);
  FIELD(tsr_runtime_api, tensor_dim);
  FIELD(tsr_runtime_api, tensor_sizes);
  FIELD(tsr_runtime_api, tensor_strides);
  FIELD(tsr_runtime_api, tensor_storage_offset);
  FIELD(tsr_runtime_api, tensor_numel);
  FIELD(tsr_runtime_api, tensor_dtype);
  FIELD(tsr_runtime_api, tensor_device);
  FIELD(tsr_runtime_api, tensor_is_contiguous);
  FIELD(tsr_runtime_api, tensor_data_ptr);
  FIELD(tsr_runtime_api, dtype_size);
  FIELD(tsr_runtime_api, op_find);
  FIELD(tsr_runtime_api, op_name);
  FIELD(tsr_runtime_api, op_schema);
  FIELD(tsr_runtime_api, op_call);
  FIELD(tsr_runtime_api, op_define);
  FIELD(tsr_runtime_api, registration_release);
  FIELD(tsr_runtime_api, stack_create);
  FIELD(tsr_runtime_api, stack_release);
  FIELD(tsr_runtime_api, stack_size);
  FIELD(tsr_runtime_api, stack_clear);
  FIELD(tsr_runtime_api, stack_kind);
  FIELD(tsr_runtime_api, stack_push_none);
  FIELD(tsr_runtime_api, stack_push_tensor);
  FIELD(tsr_runtime_api, stack_push_int);
  FIELD(tsr_runtime_api, stack_push_double);
  FIELD(tsr_runtime_api, stack_push_bool);
  FIELD(tsr_runtime_api, stack_push_string);
  FIELD(tsr_runtime_api, stack_push_int_list);
  FIELD(tsr_runtime_api, stack_push_double_list);
  FIELD(tsr_runtime_api, stack_push_tensor_list);
  FIELD(tsr_runtime_api, stack_push_scalar);
  FIELD(tsr_runtime_api, stack_push_dtype);
  FIELD(tsr_runtime_api, stack_push_device);
  FIELD(tsr_runtime_api, stack_get_tensor);
  FIELD(tsr_runtime_api, stack_get_int);
  FIELD(tsr_runtime_api, stack_get_double);
  FIELD(tsr_runtime_api, stack_get_bool);
  FIELD(tsr_runtime_api, stack_get_string);
  FIELD(tsr_runtime_api, stack_get_int_list);
  FIELD(tsr_runtime_api, stack_get_double_list);
  FIELD(tsr_runtime_api, stack_get_tensor_list);
  FIELD(tsr_runtime_api, stack_get_scalar);
  FIELD(tsr_runtime_api, stack_get_dtype);
  FIELD(tsr_runtime_api, stack_get_device);
  FIELD(tsr_runtime_api, kernel_register);
  FIELD(tsr_runtime_api, fallback_register);
  FIELD(tsr_runtime_api, device_register);
  FIELD(tsr_runtime_api, device_count);
  FIELD(tsr_runtime_api, device_synchronize);
  FIELD(tsr_runtime_api, fallback_register_cpu);
  FIELD(tsr_runtime_api, fallback_count);
  FIELD(tsr_runtime_api, log);
  FIELD(tsr_runtime_api, parallel_for);
  FIELD(tsr_runtime_api, num_threads);
  FIELD(tsr_runtime_api, op_list);
  FIELD(tsr_runtime_api, op_describe);
  FIELD(tsr_runtime_api, op_argument);
  FIELD(tsr_runtime_api, op_return);
  FIELD(tsr_runtime_api, plugin_kernels);
  FIELD(tsr_runtime_api, stack_get_tensor_views);
  FIELD(tsr_runtime_api, stack_get_call_plan);
  FIELD(tsr_runtime_api, stack_push_bool_list);
  FIELD(tsr_runtime_api, stack_get_bool_list);
  FIELD(tsr_runtime_api, stream_current_native);
  FIELD(tsr_runtime_api, op_call_values);
  FIELD(tsr_runtime_api, tensor_immutable_id);
  FIELD(tsr_runtime_api, generator_create);
  FIELD(tsr_runtime_api, generator_default);
  FIELD(tsr_runtime_api, generator_retain);
  FIELD(tsr_runtime_api, generator_release);
  FIELD(tsr_runtime_api, generator_get_state);
  FIELD(tsr_runtime_api, generator_set_state);
  FIELD(tsr_runtime_api, manual_seed);
  FIELD(tsr_runtime_api, stack_push_generator);
  FIELD(tsr_runtime_api, deterministic_algorithms);
  FIELD(tsr_runtime_api, graph_compiler_register);
  END(tsr_runtime_api);

  ENUM(TSR_DETERMINISTIC_OFF);
  ENUM(TSR_DETERMINISTIC_ON);
  ENUM(TSR_DETERMINISTIC_WARN);
  ENUM(TSR_DETERMINISTIC_MODE_FORCE_INT32);

  ENUM(TSR_OK); ENUM(TSR_CANCELLED); ENUM(TSR_UNKNOWN); ENUM(TSR_INVALID_ARGUMENT);
  ENUM(TSR_DEADLINE_EXCEEDED); ENUM(TSR_NOT_FOUND); ENUM(TSR_ALREADY_EXISTS);
  ENUM(TSR_PERMISSION_DENIED); ENUM(TSR_RESOURCE_EXHAUSTED); ENUM(TSR_FAILED_PRECONDITION);
  ENUM(TSR_ABORTED); ENUM(TSR_OUT_OF_RANGE); ENUM(TSR_UNIMPLEMENTED); ENUM(TSR_INTERNAL);
  ENUM(TSR_UNAVAILABLE); ENUM(TSR_DATA_LOSS); ENUM(TSR_UNAUTHENTICATED);
  ENUM(TSR_CODE_FORCE_INT32);
  ENUM(TSR_NODE_NATIVE); ENUM(TSR_NODE_COMPOSITE); ENUM(TSR_NODE_FALLBACK); ENUM(TSR_NODE_FOLDED);
  ENUM(TSR_NODE_CLAIMED); ENUM(TSR_GRAPH_NODE_OPAQUE); ENUM(TSR_COMPILE_NO_CLAIMS);
  ENUM(TSR_COMPILE_NO_FOLDING);
  ENUM(TSR_NODE_ROUTE_FORCE_INT32);
  ENUM(TSR_DTYPE_BOOL); ENUM(TSR_DTYPE_UINT8); ENUM(TSR_DTYPE_INT8); ENUM(TSR_DTYPE_INT16);
  ENUM(TSR_DTYPE_INT32); ENUM(TSR_DTYPE_INT64); ENUM(TSR_DTYPE_FLOAT16);
  ENUM(TSR_DTYPE_BFLOAT16); ENUM(TSR_DTYPE_FLOAT32); ENUM(TSR_DTYPE_FLOAT64);
  ENUM(TSR_DTYPE_FORCE_INT32);
  ENUM(TSR_DEVICE_CPU); ENUM(TSR_DEVICE_CUDA); ENUM(TSR_DEVICE_HIP);
  ENUM(TSR_DEVICE_PRIVATEUSE1); ENUM(TSR_DEVICE_PRIVATEUSE2); ENUM(TSR_DEVICE_PRIVATEUSE3);
  ENUM(TSR_DEVICE_META); ENUM(TSR_DEVICE_TYPE_FORCE_INT32);
  ENUM(TSR_LAYOUT_STRIDED); ENUM(TSR_LAYOUT_FORCE_INT32);
  ENUM(TSR_MEMORY_FORMAT_CONTIGUOUS); ENUM(TSR_MEMORY_FORMAT_PRESERVE);
  ENUM(TSR_MEMORY_FORMAT_CHANNELS_LAST); ENUM(TSR_MEMORY_FORMAT_CHANNELS_LAST_3D);
  ENUM(TSR_MEMORY_FORMAT_FORCE_INT32);
  ENUM(TSR_VALUE_NONE); ENUM(TSR_VALUE_TENSOR); ENUM(TSR_VALUE_INT); ENUM(TSR_VALUE_DOUBLE);
  ENUM(TSR_VALUE_BOOL); ENUM(TSR_VALUE_STRING); ENUM(TSR_VALUE_INT_LIST);
  ENUM(TSR_VALUE_DOUBLE_LIST); ENUM(TSR_VALUE_BOOL_LIST); ENUM(TSR_VALUE_TENSOR_LIST);
  ENUM(TSR_VALUE_SCALAR); ENUM(TSR_VALUE_DTYPE); ENUM(TSR_VALUE_DEVICE);
  ENUM(TSR_VALUE_DEFAULT); ENUM(TSR_VALUE_NAME); ENUM(TSR_VALUE_GENERATOR);
  ENUM(TSR_VALUE_KIND_FORCE_INT32);
  ENUM(TSR_KERNEL_REGISTERED); ENUM(TSR_KERNEL_ADAPTED); ENUM(TSR_KERNEL_REFUSED);
  ENUM(TSR_KERNEL_STATUS_FORCE_INT32);
  ENUM(TSR_SCALAR_BOOL); ENUM(TSR_SCALAR_INT); ENUM(TSR_SCALAR_DOUBLE);
  ENUM(TSR_SCALAR_KIND_FORCE_INT32);
  ENUM(TSR_LOG_DEBUG); ENUM(TSR_LOG_INFO); ENUM(TSR_LOG_WARNING); ENUM(TSR_LOG_ERROR);
  ENUM(TSR_LOG_LEVEL_FORCE_INT32);
  ENUM(TSR_DEVICE_PROPERTY_ASYNC);
  return failures == 0 ? 0 : 1;
}
