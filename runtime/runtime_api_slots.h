// The one list of tsr_runtime_api's function slots (Note [One list of the runtime's slots]).
// runtime_api.cc fills the table from it; a test that wraps the table (tests/kernel_calls/)
// forwards every slot from it.
#pragma once

#include "tessera/c/tessera.h"

// Note [One list of the runtime's slots]
// TESSERA_RUNTIME_API_SLOTS(X) is X(slot, implementation) for every function slot of
// tsr_runtime_api (plugin.h), in declaration order: what fills the application's table
// (MakeApi, runtime_api.cc). The static_asserts in runtime_api.cc hold it to the struct, so a
// slot added to plugin.h and not here, or listed out of order, is a compile error rather than a
// NULL slot that a plugin finds at run time (the struct's comments stay in plugin.h, where a
// vendor reads them).
#define TESSERA_RUNTIME_API_SLOTS(X)                                 \
  X(error_create, &tsr_error_create)                                 \
  X(error_code, &tsr_error_code)                                     \
  X(error_message, &tsr_error_message)                               \
  X(error_release, &tsr_error_release)                               \
  X(tensor_empty, &tsr_tensor_empty)                                 \
  X(tensor_empty_strided, &tsr_tensor_empty_strided)                 \
  X(tensor_from_host_memory, &tsr_tensor_from_host_memory)           \
  X(tensor_copy_from_host, &tsr_tensor_copy_from_host)               \
  X(tensor_copy_to_host, &tsr_tensor_copy_to_host)                   \
  X(tensor_retain, &tsr_tensor_retain)                               \
  X(tensor_release, &tsr_tensor_release)                             \
  X(tensor_dim, &tsr_tensor_dim)                                     \
  X(tensor_sizes, &tsr_tensor_sizes)                                 \
  X(tensor_strides, &tsr_tensor_strides)                             \
  X(tensor_storage_offset, &tsr_tensor_storage_offset)               \
  X(tensor_numel, &tsr_tensor_numel)                                 \
  X(tensor_dtype, &tsr_tensor_dtype)                                 \
  X(tensor_device, &tsr_tensor_device)                               \
  X(tensor_is_contiguous, &tsr_tensor_is_contiguous)                 \
  X(tensor_data_ptr, &tsr_tensor_data_ptr)                           \
  X(dtype_size, &tsr_dtype_size)                                     \
  X(op_find, &tsr_op_find)                                           \
  X(op_name, &tsr_op_name)                                           \
  X(op_schema, &tsr_op_schema)                                       \
  X(op_call, &tsr_op_call)                                           \
  X(op_define, &tsr_op_define)                                       \
  X(registration_release, &tsr_registration_release)                 \
  X(stack_create, &tsr_stack_create)                                 \
  X(stack_release, &tsr_stack_release)                               \
  X(stack_size, &tsr_stack_size)                                     \
  X(stack_clear, &tsr_stack_clear)                                   \
  X(stack_kind, &tsr_stack_kind)                                     \
  X(stack_push_none, &tsr_stack_push_none)                           \
  X(stack_push_tensor, &tsr_stack_push_tensor)                       \
  X(stack_push_int, &tsr_stack_push_int)                             \
  X(stack_push_double, &tsr_stack_push_double)                       \
  X(stack_push_bool, &tsr_stack_push_bool)                           \
  X(stack_push_string, &tsr_stack_push_string)                       \
  X(stack_push_int_list, &tsr_stack_push_int_list)                   \
  X(stack_push_double_list, &tsr_stack_push_double_list)             \
  X(stack_push_tensor_list, &tsr_stack_push_tensor_list)             \
  X(stack_push_scalar, &tsr_stack_push_scalar)                       \
  X(stack_push_dtype, &tsr_stack_push_dtype)                         \
  X(stack_push_device, &tsr_stack_push_device)                       \
  X(stack_get_tensor, &tsr_stack_get_tensor)                         \
  X(stack_get_int, &tsr_stack_get_int)                               \
  X(stack_get_double, &tsr_stack_get_double)                         \
  X(stack_get_bool, &tsr_stack_get_bool)                             \
  X(stack_get_string, &tsr_stack_get_string)                         \
  X(stack_get_int_list, &tsr_stack_get_int_list)                     \
  X(stack_get_double_list, &tsr_stack_get_double_list)               \
  X(stack_get_tensor_list, &tsr_stack_get_tensor_list)               \
  X(stack_get_scalar, &tsr_stack_get_scalar)                         \
  X(stack_get_dtype, &tsr_stack_get_dtype)                           \
  X(stack_get_device, &tsr_stack_get_device)                         \
  X(kernel_register, &tsr_kernel_register)                           \
  X(fallback_register, &tsr_fallback_register)                       \
  X(device_register, &tsr_device_register)                           \
  X(device_count, &tsr_device_count)                                 \
  X(device_synchronize, &tsr_device_synchronize)                     \
  X(fallback_register_cpu, &tsr_fallback_register_cpu)               \
  X(fallback_count, &tsr_fallback_count)                             \
  X(log, &Log)                                                       \
  X(parallel_for, &tsr_parallel_for)                                 \
  X(num_threads, &tsr_num_threads)                                   \
  X(op_list, &tsr_op_list)                                           \
  X(op_describe, &tsr_op_describe)                                   \
  X(op_argument, &tsr_op_argument)                                   \
  X(op_return, &tsr_op_return)                                       \
  X(plugin_kernels, &tsr_plugin_kernels)                             \
  X(stack_get_tensor_views, &tsr_stack_get_tensor_views)             \
  X(stack_get_call_plan, &tsr_stack_get_call_plan)                   \
  X(stack_push_bool_list, &tsr_stack_push_bool_list)                 \
  X(stack_get_bool_list, &tsr_stack_get_bool_list)                   \
  X(stream_current_native, &tsr_stream_current_native)               \
  X(op_call_values, &tsr_op_call_values)                             \
  X(tensor_immutable_id, &tsr_tensor_immutable_id)                   \
  X(generator_create, &tsr_generator_create)                         \
  X(generator_default, &tsr_generator_default)                       \
  X(generator_retain, &tsr_generator_retain)                         \
  X(generator_release, &tsr_generator_release)                       \
  X(generator_get_state, &tsr_generator_get_state)                   \
  X(generator_set_state, &tsr_generator_set_state)                   \
  X(manual_seed, &tsr_manual_seed)                                   \
  X(stack_push_generator, &tsr_stack_push_generator)                 \
  X(deterministic_algorithms, &tsr_deterministic_algorithms)       \
  X(graph_compiler_register, &tsr_graph_compiler_register)
