/* Tessera stable C ABI: everything. */
#ifndef TESSERA_C_TESSERA_H_
#define TESSERA_C_TESSERA_H_

#include "tessera/c/common.h"
#include "tessera/c/determinism.h"
#include "tessera/c/device.h"
#include "tessera/c/dlpack.h"
#include "tessera/c/error.h"
#include "tessera/c/generator.h"
#include "tessera/c/graph.h"
#include "tessera/c/kernel.h"
#include "tessera/c/kernel_call.h"
#include "tessera/c/loader.h"
#include "tessera/c/model.h"
#include "tessera/c/op.h"
#include "tessera/c/parallel.h"
#include "tessera/c/plugin.h"
#include "tessera/c/tensor.h"

#endif /* TESSERA_C_TESSERA_H_ */
