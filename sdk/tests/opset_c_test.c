/* The generated op-set headers compile as strict C99 (-std=c99 -pedantic -Werror) and their
 * macros and table agree. */
#include <stdio.h>
#include <string.h>

#include "tessera/opset/calls_v1_2.h" /* an older op set's typed calls compile as C99 too */
#include "tessera/opset/opset.h"
#include "tessera/opset/v1_0.h"

int main(void) {
  size_t i;
  int failures = 0;
  if (TSR_OP_SET_VERSION_MAJOR != 1 || TSR_OP_SET_VERSION_MINOR < 0) {
    printf("FAIL: op set %d.%d\n", TSR_OP_SET_VERSION_MAJOR, TSR_OP_SET_VERSION_MINOR);
    ++failures;
  }
  if (strcmp(TSR_OP_V1_0_add_Tensor,
             "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") != 0) {
    printf("FAIL: TSR_OP_V1_0_add_Tensor is %s\n", TSR_OP_V1_0_add_Tensor);
    ++failures;
  }
  for (i = 0; i < TSR_OP_SET_V1_0_SIZE; ++i) {
    const tsr_op_schema_entry* e = &tsr_op_set_v1_0[i];
    /* Each schema starts with its op's name, and the table is sorted. */
    if (strncmp(e->schema, e->name, strlen(e->name)) != 0 || e->schema[strlen(e->name)] != '(') {
      printf("FAIL: entry %d: %s has the schema %s\n", (int)i, e->name, e->schema);
      ++failures;
    }
    if (i > 0 && strcmp(tsr_op_set_v1_0[i - 1].name, e->name) >= 0) {
      printf("FAIL: entry %d: %s is not after %s\n", (int)i, e->name, tsr_op_set_v1_0[i - 1].name);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
