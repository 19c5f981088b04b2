/* Tessera stable C ABI: random number generators (since 1.2).
 *
 * A generator is a seed and the next offset of a counter-based generator (Philox-4x32-10).
 * Every random op (rand, randn, normal_, uniform_, bernoulli, native_dropout, ...) draws from
 * the generator passed as its `Generator? generator` argument (a tsr_value of kind
 * TSR_VALUE_GENERATOR, or tsr_stack_push_generator), or else from the default generator of the
 * call's device. Each random kernel call takes one offset; its numbers depend only on
 * (seed, offset), so a seed gives the same bits on every backend (docs/random.md). */
#ifndef TESSERA_C_GENERATOR_H_
#define TESSERA_C_GENERATOR_H_

#include "tessera/c/common.h"
#include "tessera/c/kernel_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_generator_create: a new generator seeded with `seed` at offset 0.
 * *out: new reference: caller releases (tsr_generator_release). */
TSR_API tsr_error* tsr_generator_create(uint64_t seed, tsr_generator** out);

/* tsr_generator_default: the default generator of `device` (one per device, created on first
 * use with PyTorch's default seed 67280421310721, or the last tsr_manual_seed's).
 * *out: new reference: caller releases. */
TSR_API tsr_error* tsr_generator_default(tsr_device device, tsr_generator** out);

/* tsr_generator_retain adds a reference; tsr_generator_release drops one (NULL: no-op). */
TSR_API void tsr_generator_retain(tsr_generator* generator);
TSR_API void tsr_generator_release(tsr_generator* generator);

/* tsr_generator_get_state: the seed and the offset the next random call takes (both out). */
TSR_API tsr_error* tsr_generator_get_state(const tsr_generator* generator, uint64_t* seed,
                                           uint64_t* offset);
/* tsr_generator_set_state: restore a state read with tsr_generator_get_state (any offset);
 * tsr_generator_set_state(g, seed, 0) is torch.Generator.manual_seed. */
TSR_API tsr_error* tsr_generator_set_state(tsr_generator* generator, uint64_t seed,
                                           uint64_t offset);

/* tsr_manual_seed seeds every device's default generator with `seed` at offset 0, those
 * created later included (torch.manual_seed). */
TSR_API void tsr_manual_seed(uint64_t seed);

/* tsr_stack_push_generator appends a Generator argument (borrowed: the stack takes its own
 * reference). */
TSR_API tsr_error* tsr_stack_push_generator(tsr_stack* stack, tsr_generator* generator);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_GENERATOR_H_ */
