// graph-order.h: graph_optimize's reordering (see graph-order.c).

#ifndef HTP_GRAPH_ORDER_H
#define HTP_GRAPH_ORDER_H

#include "ggml.h"

// Reorder graph->nodes in place so MUL_MATs sharing src1 run back to back,
// where the memory-range hazard checks allow. Returns the number of nodes
// whose position changed, or -1 (graph untouched) if memory ran out.
int htp_graph_order(struct ggml_cgraph * graph);

#endif  // HTP_GRAPH_ORDER_H
