/* ir.c: ownership of the validated op graph (see ir.h). The validator and
 * the graph.json reader build graphs; this file frees and searches them. */
#include <stdlib.h>
#include <string.h>
#include "ir.h"

void enpu_graph_free(enpu_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n_tensors; i++)
		free(g->tensors[i].name);
	for (int i = 0; i < g->n_ops; i++) {
		free(g->ops[i].name);
		free(g->ops[i].in);
		free(g->ops[i].out);
	}
	for (int i = 0; i < g->n_components; i++)
		free(g->components[i]);
	free(g->tensors);
	free(g->ops);
	free(g->inputs);
	free(g->outputs);
	free(g->components);
	free(g->name);
	free(g->backend);
	free(g);
}

int enpu_graph_find(const enpu_graph *g, const char *tensor_name)
{
	if (!g || !tensor_name)
		return -1;
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].name && strcmp(g->tensors[i].name, tensor_name) == 0)
			return i;
	return -1;
}
